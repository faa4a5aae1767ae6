package io.twinlog.replication;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * What a partition's leader knows of its followers: each one's fetch position and when it was last caught up
 * ({@link ReplicaState}), the log start each reported (DeleteRecords), and the ISR change in flight, if any (the
 * <em>maximal</em> ISR is the ISR plus the members it adds). From these it answers what the high watermark may
 * reach, which followers may join or must leave the ISR, and the low watermark.
 *
 * <p>Thread-safe: every method holds this object's monitor, one critical section each, taken inside the
 * partition's leader/ISR lock where the partition holds it (the order is always that lock, then this monitor).
 * Split from {@link Partition}, whose monitor guarded the same state in the same sections before.
 */
final class FollowerTracker {
    private final int localBrokerId;
    private final Map<Integer, ReplicaState> followers = new HashMap<>();
    /** Log start offsets the followers reported in their fetches (DeleteRecords). */
    private final Map<Integer, Long> followerLogStartOffsets = new HashMap<>();
    /** Non-null while an AlterPartition is in flight: the ISR it proposes, or the current one for a shrink. */
    private List<Integer> pendingIsr;

    FollowerTracker(int localBrokerId) {
        this.localBrokerId = localBrokerId;
    }

    /**
     * A leadership record was applied. The same record can be applied again (the first image, a retry after a
     * failed apply, a mirror flag change with the record unchanged). Only a new record (new term or partition
     * epoch) ends an in-flight ISR change: clearing it on a repeat would drop a joining follower from the maximal
     * ISR while the controller may already have committed it, so the high watermark could pass records that
     * follower (now electable) does not have. A new term starts every follower afresh.
     */
    synchronized void onLeadershipRecord(boolean newRecord, boolean newTerm, List<Integer> replicas, long nowMs) {
        if (newRecord) {
            pendingIsr = null;
        }
        if (newTerm) {
            followers.clear();
        }
        followers.keySet().retainAll(replicas);
        for (Integer r : replicas) {
            if (r != localBrokerId) {
                followers.computeIfAbsent(r, id -> new ReplicaState(nowMs));
            }
        }
    }

    /** The size of the maximal ISR: {@code isr} and the members an in-flight change adds. */
    synchronized int maximalIsrSize(List<Integer> isr) {
        return maximal(isr).size();
    }

    /**
     * The high watermark the maximal ISR allows: the smallest log end offset over its members, this leader's
     * ({@code leaderLogEndOffset}) included; a follower not known yet counts as 0.
     */
    synchronized long highWatermarkBound(List<Integer> isr, long leaderLogEndOffset) {
        long bound = leaderLogEndOffset;
        for (Integer r : maximal(isr)) {
            if (r == localBrokerId) {
                continue;
            }
            ReplicaState s = followers.get(r);
            long followerEnd = s == null ? -1L : s.logEndOffset;
            bound = Math.min(bound, Math.max(followerEnd, 0L));
        }
        return bound;
    }

    /**
     * Records a follower's fetch; proposes (and returns) the ISR with it added when it is out of the ISR, no change
     * is in flight, it has reached the high watermark and this leader epoch's start, and the controller would take
     * it. Null: nothing to propose. The suppliers are read under this monitor, as before the split.
     */
    synchronized List<Integer> onFollowerFetch(int replicaId, long brokerEpoch, long fetchOffset,
                                               long leaderLogEndOffset, long nowMs, List<Integer> isr,
                                               LongSupplier highWatermark, LongSupplier leaderEpochStartOffset,
                                               BooleanSupplier eligible) {
        ReplicaState state = followers.computeIfAbsent(replicaId, id -> new ReplicaState(nowMs));
        state.onFetch(fetchOffset, leaderLogEndOffset, nowMs, brokerEpoch);
        boolean inIsr = isr.contains(replicaId);
        if (!inIsr && pendingIsr == null && fetchOffset >= highWatermark.getAsLong()
                && fetchOffset >= leaderEpochStartOffset.getAsLong() && eligible.getAsBoolean()) {
            LinkedHashSet<Integer> next = new LinkedHashSet<>(isr);
            next.add(replicaId);
            List<Integer> expandTo = new ArrayList<>(next);
            pendingIsr = expandTo;
            return expandTo;
        }
        return null;
    }

    /** A proposed ISR shrink: the ISR without {@code lagging}. */
    record Shrink(List<Integer> shrinkTo, List<Integer> lagging) {
    }

    /**
     * The followers of {@code isr} that have not caught up for {@code maxLagMs}: Kafka's
     * {@code ReplicaState.isCaughtUp}, so a follower at the leader's log end stays in sync however long ago it
     * fetched, and an idle partition keeps its ISR (which replicas are electable must not differ from Kafka's).
     * Proposes the shrink (the maximal ISR stays the larger one until committed) and returns it; null when a change
     * is in flight or every member is caught up.
     */
    synchronized Shrink proposeShrink(List<Integer> isr, long nowMs, long maxLagMs, LongSupplier leaderLogEndOffset) {
        if (pendingIsr != null) {
            return null;
        }
        long leaderEnd = leaderLogEndOffset.getAsLong();
        List<Integer> lagging = new ArrayList<>();
        for (Integer r : isr) {
            if (r == localBrokerId) {
                continue;
            }
            ReplicaState s = followers.get(r);
            if (s == null || (s.logEndOffset != leaderEnd && nowMs - s.lastCaughtUpTimeMs > maxLagMs)) {
                lagging.add(r);
            }
        }
        if (lagging.isEmpty()) {
            return null;
        }
        List<Integer> shrinkTo = new ArrayList<>(isr);
        shrinkTo.removeAll(lagging);
        pendingIsr = new ArrayList<>(isr);
        return new Shrink(shrinkTo, lagging);
    }

    /** The controller answered (or the attempt failed): another ISR change may be proposed. */
    synchronized void onIsrChangeCompleted() {
        pendingIsr = null;
    }

    /** The leader cut its own log: until each follower fetches again, it counts for nothing. */
    synchronized void forgetPositions() {
        for (ReplicaState follower : followers.values()) {
            follower.forgetPosition();
        }
    }

    /** The log end offsets of the followers as this leader last saw them fetch (-1: unknown since a cut). */
    synchronized Map<Integer, Long> logEndOffsets() {
        Map<Integer, Long> out = new HashMap<>();
        followers.forEach((id, state) -> out.put(id, state.logEndOffset));
        return out;
    }

    /** Each follower's log end, for a log line. */
    synchronized Map<Integer, String> states() {
        Map<Integer, String> out = new HashMap<>();
        followers.forEach((id, s) -> out.put(id, "LEO " + s.logEndOffset));
        return out;
    }

    /** @return whether the follower's reported log start moved */
    synchronized boolean updateLogStartOffset(int replicaId, long logStartOffset) {
        Long before = followerLogStartOffsets.put(replicaId, logStartOffset);
        return before == null || before != logStartOffset;
    }

    /**
     * The lowest of {@code leaderLogStartOffset} and the log starts the in-sync followers reported (one that has
     * not fetched yet counts as 0).
     */
    synchronized long lowWatermark(List<Integer> isr, long leaderLogStartOffset) {
        long low = leaderLogStartOffset;
        for (int replicaId : isr) {
            if (replicaId != localBrokerId) {
                low = Math.min(low, followerLogStartOffsets.getOrDefault(replicaId, 0L));
            }
        }
        return low;
    }

    private LinkedHashSet<Integer> maximal(List<Integer> isr) {
        LinkedHashSet<Integer> maximal = new LinkedHashSet<>(isr);
        if (pendingIsr != null) {
            maximal.addAll(pendingIsr);
        }
        return maximal;
    }
}
