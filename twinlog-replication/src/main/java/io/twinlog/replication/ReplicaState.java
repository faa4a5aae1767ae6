package io.twinlog.replication;

/**
 * What a leader knows of one follower, from that follower's fetches: its log end offset and when it was last
 * caught up (Kafka's rule: a fetch at or past the leader's log end offset, or past the leader's log end offset as
 * of the follower's previous fetch, means caught up at that time). Mutable; guarded by the partition's lock.
 */
final class ReplicaState {
    long logEndOffset = -1L;
    long lastCaughtUpTimeMs;
    long lastFetchLeaderLogEndOffset;
    long lastFetchTimeMs;
    long brokerEpoch = -1L;

    ReplicaState(long nowMs) {
        this.lastCaughtUpTimeMs = nowMs;
    }

    void onFetch(long fetchOffset, long leaderLogEndOffset, long nowMs, long fetchBrokerEpoch) {
        if (fetchOffset >= leaderLogEndOffset) {
            lastCaughtUpTimeMs = Math.max(lastCaughtUpTimeMs, nowMs);
        } else if (fetchOffset >= lastFetchLeaderLogEndOffset) {
            lastCaughtUpTimeMs = Math.max(lastCaughtUpTimeMs, lastFetchTimeMs);
        }
        logEndOffset = fetchOffset;
        lastFetchLeaderLogEndOffset = leaderLogEndOffset;
        lastFetchTimeMs = nowMs;
        brokerEpoch = fetchBrokerEpoch;
    }

    /** The leader cut its log: the follower's position is unknown until its next fetch. */
    void forgetPosition() {
        logEndOffset = -1L;
        // nothing fetched before the cut shows the follower caught up with what the leader holds now
        lastFetchLeaderLogEndOffset = Long.MAX_VALUE;
    }

    @Override
    public String toString() {
        return "ReplicaState(logEndOffset=" + logEndOffset + ", lastCaughtUpTimeMs=" + lastCaughtUpTimeMs + ")";
    }
}
