package io.twinlog.mirror.partition;

/**
 * What the state machine asks its shell to do to the local partition or its surroundings, in order, before the
 * decision's record is written. Actions that change what the machine sees ({@link #changesView()}) are followed by
 * a new decision on a fresh view, so a step like "cut the log, then record that it is aligned" is two decisions.
 */
public sealed interface MirrorAction {
    /** Whether the partition or the peer answer looks different afterwards (the shell decides again). */
    default boolean changesView() {
        return true;
    }

    /** The mirror fetcher copies this partition (idempotent). */
    record AddFetcher() implements MirrorAction {
        @Override
        public boolean changesView() {
            return false;
        }
    }

    /**
     * The mirror fetcher stops copying this partition (idempotent). {@code freezesLogEnd}: the machine wants to
     * decide again on the log end as it stays once nothing more is copied (a failover records it as the last
     * mirrored offset in the same pass as the STOPPING state, one ZooKeeper round instead of two).
     */
    record RemoveFetcher(boolean freezesLogEnd) implements MirrorAction {
        public RemoveFetcher() {
            this(false);
        }

        @Override
        public boolean changesView() {
            return freezesLogEnd;
        }
    }

    /** Ask the source what it last mirrored from this cluster (LastMirroredEpochs). */
    record AskPeer() implements MirrorAction {
    }

    /**
     * Compare this log with the peer's below {@code upTo}, batch by batch identity (offsets, epoch, CRC), by binary
     * search: where they first differ (the reconciliation of a failback, issue 12 point 4).
     */
    record ComparePeer(long upTo) implements MirrorAction {
    }

    /**
     * Apply the partition-wide truncation point {@code id} to the leader's own log: cut it to {@code offset} (empty
     * it and start it there when that is below the log start) and record the id next to the log, before the point
     * is recorded for the other replicas (decision 38).
     */
    record ApplyTruncationPoint(long id, long offset, String reason) implements MirrorAction {
    }

    /** Abort, with markers in the current leader epoch, the transactions source producers left open. */
    record AbortOpenTransactions() implements MirrorAction {
    }

    /** Append the producer-state barrier: every replica forgets the producers copied from the source. */
    record AppendProducerStateBarrier() implements MirrorAction {
    }
}
