package io.twinlog.controller.election;

import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which brokers may lead a partition or be in its ISR: the available brokers (live, and not just restarted) whose
 * replica of it is neither in a failed log dir nor lost. A broker lists its offline replicas in its registration;
 * to {@link PartitionChanges} such a replica looks like one on a dead broker, so it leaves the ISR and loses
 * leadership to another in-sync replica (Kafka's controller does the same when a broker reports
 * {@code KAFKA_STORAGE_ERROR} for a replica). A lost replica (its broker started without its log while the
 * partition had it in the ISR, and it has been neither out of it nor elected since: {@link
 * BrokerRegistration#lostReplicas()}) is treated the same way, so a broker whose disk was replaced is never elected
 * from an ISR it was in with the data it no longer has.
 * Pure.
 */
public final class EligibleReplicas {
    private EligibleReplicas() {
    }

    /** As {@link #of(Set, Map, TopicIdPartition, PartitionState)} for a partition of a topic in {@code image}. */
    public static Set<Integer> of(Set<Integer> available, MetadataImage image, TopicPartition partition) {
        return image.topic(partition.topic())
                .map(t -> {
                    PartitionImage p = t.partitions().get(partition.partition());
                    return of(available, image.brokers(), new TopicIdPartition(t.topicId(), partition),
                            p == null ? null : p.state());
                })
                .orElse(available);
    }

    /**
     * @param available the brokers the controller considers available this round
     * @param brokers        the registrations of the live brokers
     * @return {@code available} minus the brokers whose replica of {@code partition} is offline or lost; the same
     *         set when none is (the common case, with no copy)
     */
    public static Set<Integer> of(Set<Integer> available, Map<Integer, BrokerRegistration> brokers,
                                  TopicIdPartition partition, PartitionState state) {
        Set<Integer> eligible = available;
        for (Integer broker : available) {
            BrokerRegistration registration = brokers.get(broker);
            if (registration != null && (registration.isReplicaOffline(partition)
                    || registration.isReplicaLost(partition, state))) {
                if (eligible == available) {
                    eligible = new HashSet<>(available);
                }
                eligible.remove(broker);
            }
        }
        return eligible;
    }

    /** The brokers whose replica of the partition is lost (a new, modifiable set). */
    public static Set<Integer> lost(Map<Integer, BrokerRegistration> brokers, TopicIdPartition partition,
                                    PartitionState state) {
        Set<Integer> out = new TreeSet<>();
        brokers.forEach((id, registration) -> {
            if (registration.isReplicaLost(partition, state)) {
                out.add(id);
            }
        });
        return out;
    }
}
