package io.twinlog.controller.decisions;

import io.twinlog.controller.election.EligibleReplicas;
import io.twinlog.controller.election.PartitionChanges;
import io.twinlog.controller.election.PartitionChanges.ElectionResult;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/** An operator's ElectLeaders request (PREFERRED or UNCLEAN), decided per partition (pure). */
public final class ElectionDecisions {
    private ElectionDecisions() {
    }

    public static ControllerResult<Map<TopicPartition, ElectionResult>> decide(MetadataImage image, boolean unclean,
                                                                               Set<TopicPartition> partitions) {
        ClusterView cluster = ClusterView.of(image.brokers());
        String reason = (unclean ? "UNCLEAN" : "PREFERRED") + " election requested";
        Map<TopicPartition, ElectionResult> out = new HashMap<>();
        List<StateChange> writes = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            Optional<PartitionImage> p = image.partition(tp);
            if (p.isEmpty() || p.get().state() == null) {
                out.put(tp, new ElectionResult(Errors.UNKNOWN_TOPIC_OR_PARTITION, "Unknown partition " + tp,
                        Optional.empty()));
                continue;
            }
            // a replica in a failed log dir may not lead; one that lost its log leads an unclean election only
            // when no replica with records is alive
            Set<Integer> eligible = EligibleReplicas.of(cluster.live(), image, tp);
            Set<Integer> lost = image.topic(tp.topic()).map(t -> EligibleReplicas.lost(image.brokers(),
                    new TopicIdPartition(t.topicId(), tp), p.get().state())).orElseGet(TreeSet::new);
            lost.retainAll(cluster.live());
            ElectionResult r = unclean
                    ? PartitionChanges.electUnclean(p.get().state(), p.get().replicas(), eligible,
                            cluster.shuttingDown(), lost)
                    : PartitionChanges.electPreferred(p.get().state(), p.get().replicas(), eligible,
                            cluster.shuttingDown());
            r.newState().ifPresent(next -> writes.add(StateChange.leadership(tp, p.get().state(), next,
                    p.get().stateVersion(), reason)));
            out.put(tp, r);
        }
        return new ControllerResult<>(writes, out);
    }
}
