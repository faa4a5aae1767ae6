package io.twinlog.controller.decisions;

import io.twinlog.controller.election.EligibleReplicas;
import io.twinlog.controller.election.PartitionChanges;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A batch of AlterPartition changes from one leader, decided in one go (pure). The sender is fenced first by its
 * broker epoch (a request from an earlier incarnation is refused as a whole, STALE_BROKER_EPOCH), then each
 * partition by {@link PartitionChanges#alterIsr}: one partition's error never affects the others.
 */
public final class IsrChangeDecisions {
    private IsrChangeDecisions() {
    }

    /**
     * @param brokerEpoch the sender's broker epoch, or -1 when it did not send one (then it is not checked)
     */
    public static ControllerResult<Map<TopicPartition, IsrChangeResult>> decide(MetadataImage image, int fromBroker,
                                                                                long brokerEpoch,
                                                                                List<IsrChange> changes) {
        Map<TopicPartition, IsrChangeResult> out = new HashMap<>();
        BrokerRegistration sender = image.brokers().get(fromBroker);
        if (sender == null || (brokerEpoch >= 0 && sender.brokerEpoch() != brokerEpoch)) {
            changes.forEach(c -> out.put(c.partition(), IsrChangeResult.error(Errors.STALE_BROKER_EPOCH)));
            return new ControllerResult<>(List.of(), out);
        }
        Set<Integer> inService = ClusterView.of(image.brokers()).eligibleForIsr();
        List<StateChange> writes = new ArrayList<>();
        for (IsrChange c : changes) {
            Optional<PartitionImage> p = image.partition(c.partition());
            if (p.isEmpty() || p.get().state() == null) {
                out.put(c.partition(), IsrChangeResult.error(Errors.UNKNOWN_TOPIC_OR_PARTITION));
                continue;
            }
            PartitionState current = p.get().state();
            // a replica in a failed log dir may not join the ISR
            Set<Integer> eligible = EligibleReplicas.of(inService, image, c.partition());
            Set<Integer> lost = image.topic(c.partition().topic())
                    .map(t -> EligibleReplicas.lost(image.brokers(), new TopicIdPartition(t.topicId(), c.partition()),
                            current))
                    .orElse(Set.of());
            if (c.newIsr().stream().anyMatch(lost::contains)) {
                // a replica that lost its log stays out until its broker has seen itself out of the ISR (the
                // controller takes it out) and caught up; the leader asks again
                out.put(c.partition(), new IsrChangeResult(Errors.INELIGIBLE_REPLICA, Optional.of(current)));
                continue;
            }
            PartitionChanges.AlterResult r = PartitionChanges.alterIsr(current, p.get().replicas(), eligible,
                    fromBroker, c.leaderEpoch(), c.partitionEpoch(), c.newIsr());
            if (r.error() != Errors.NONE) {
                out.put(c.partition(), new IsrChangeResult(r.error(), Optional.of(current)));
                continue;
            }
            PartitionState next = r.newState().orElseThrow();
            if (!next.equals(current)) {
                writes.add(StateChange.leadership(c.partition(), current, next, p.get().stateVersion(),
                        "AlterPartition from leader " + fromBroker));
            }
            out.put(c.partition(), new IsrChangeResult(Errors.NONE, Optional.of(next)));
        }
        return new ControllerResult<>(writes, out);
    }
}
