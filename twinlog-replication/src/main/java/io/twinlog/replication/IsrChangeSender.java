package io.twinlog.replication;

import java.util.List;

/**
 * Sends a leader's ISR change to the controller (AlterPartition). Implementations send asynchronously and call
 * {@link Partition#onIsrChangeCompleted} when the controller answered (or the attempt failed), so the partition can
 * send the next change.
 */
public interface IsrChangeSender {
    void submit(Partition partition, int leaderEpoch, int partitionEpoch, List<Integer> newIsr);

    /**
     * Whether the controller would accept this broker into an ISR now (registered, in this incarnation, not shutting
     * down), so a leader does not propose expansions the controller must refuse (Kafka's leader-side check).
     */
    default boolean isEligibleForIsr(int brokerId, long brokerEpoch) {
        return true;
    }
}
