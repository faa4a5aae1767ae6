package io.twinlog.controller.decisions;

import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.store.StateWrite;
import org.apache.kafka.common.TopicPartition;

import java.util.Optional;

/**
 * One partition-state change a decision asks for: what it was, what it becomes, the version the write must find,
 * and why (for the log line the shell writes once the change is durable).
 */
public record StateChange(TopicPartition partition, Kind kind, Optional<PartitionState> previous,
                          PartitionState next, int expectedVersion, String reason) {

    /** What kind of change, for the log. */
    public enum Kind {
        /** A new partition's first leadership. */
        INITIAL,
        /** Leader and/or ISR change: broker changes, elections, AlterPartition. */
        LEADERSHIP,
        /** A mirror partition's leader epoch raised, leader unchanged. */
        MIRROR_EPOCH_BUMP
    }

    public static StateChange initial(TopicPartition partition, PartitionState next) {
        return new StateChange(partition, Kind.INITIAL, Optional.empty(), next, StateWrite.CREATE, "new partition");
    }

    public static StateChange leadership(TopicPartition partition, PartitionState previous, PartitionState next,
                                         int expectedVersion, String reason) {
        return new StateChange(partition, Kind.LEADERSHIP, Optional.of(previous), next, expectedVersion, reason);
    }

    public StateWrite write() {
        return new StateWrite(partition, next, expectedVersion);
    }

    /**
     * True when the new leader was not in the previous ISR: records only the old ISR had may be lost. A clean
     * election always picks an ISR member, so this is exactly an unclean election.
     */
    public boolean unclean() {
        return previous.isPresent() && next.leader() != PartitionState.NO_LEADER
                && next.leader() != previous.get().leader() && !previous.get().isr().contains(next.leader());
    }
}
