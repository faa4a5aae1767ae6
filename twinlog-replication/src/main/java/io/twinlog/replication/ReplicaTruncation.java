package io.twinlog.replication;

import io.twinlog.common.mirror.TruncationPoints;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Cuts of a replica's log: to an offset (a follower's divergence from its leader, a mirror leader aligning with
 * its source), emptied and restarted (the leader's log start is past this end), and the truncation points decided
 * for every replica of a mirror partition (decision 38), each applied once and recorded next to the log. Takes the
 * partition's leader/ISR write lock, as before; a leader that cut its own log forgets its followers' positions.
 * Split from {@link Partition}, which hands these calls here; logs under its logger.
 */
final class ReplicaTruncation {
    private static final Logger log = LoggerFactory.getLogger(Partition.class);

    private final Partition p;
    /** The partition's log (final there). */
    private final UnifiedLog log_;
    /** The points applied last, oldest first: read from {@link TruncationPointFile} on first use (null until then). */
    private volatile List<TruncationPoints.Point> appliedPoints;

    ReplicaTruncation(Partition p) {
        this.p = p;
        this.log_ = p.log();
    }

    /**
     * Truncates this replica's log (a follower's divergence from its leader, or a mirror leader aligning its log
     * with the source); never below the log start.
     */
    void truncateTo(long offset, String reason) {
        p.lock().writeLock().lock();
        try {
            long before = log_.logEndOffset();
            Optional<Integer> epochBefore = log_.latestEpoch();
            // at or past the log end the log keeps its records but still drops epoch entries that start at its end
            // (Kafka's UnifiedLog.truncateTo): an epoch this replica began as leader without writing in it
            log_.truncateTo(offset);
            p.barriers().forgetFrom(log_.logEndOffset());
            if (offset < before) {
                forgetFollowerPositionsAfterTruncation();
                log.info("{}Truncated log from end offset {} to {} ({}); high watermark now {}", p.logPrefix(), before,
                        log_.logEndOffset(), reason, log_.highWatermark());
            } else if (!epochBefore.equals(log_.latestEpoch())) {
                log.info("{}Dropped leader epoch {} started at the log end {} without records ({}); latest epoch now "
                        + "{}", p.logPrefix(), epochBefore.orElse(-1), before, reason, log_.latestEpoch().orElse(-1));
            }
        } finally {
            p.lock().writeLock().unlock();
        }
    }

    /**
     * Applies the truncation points decided for every replica of the partition (a mirror partition's, decision 38)
     * that this replica has not applied yet ({@link TruncationPoints#toApply}): cuts the log to the lowest of their
     * offsets (empties it and restarts it there when that is below the log start), then adds their ids to those
     * recorded next to the log, synced, so no point is applied twice. Explicit, not through epoch comparison: the
     * epochs of two clusters can match where their records differ. A list older than a point this replica applied
     * (the leader's own, applied before the record that holds it is written) cuts nothing (decision 125).
     *
     * @return true if this call applied something; false if every point was applied before
     */
    boolean applyTruncationPoints(TruncationPoints truncation) throws IOException {
        p.lock().writeLock().lock();
        try {
            List<TruncationPoints.Point> applied = appliedPoints();
            List<TruncationPoints.Point> due = truncation.toApply(ids(applied));
            if (due.isEmpty()) {
                return false;
            }
            long offset = truncation.cutFor(ids(applied)).getAsLong();
            long id = due.get(due.size() - 1).id();
            long end = log_.logEndOffset();
            String reason = truncation.reason() + " (truncation point " + id + ")";
            if (offset < log_.logStartOffset()) {
                truncateFullyAndStartAt(offset, reason);
            } else {
                // also at or past the log end: an epoch entry that starts there holds no record (a leadership that
                // wrote nothing, kept in the leader-epoch checkpoint) and must go, or the fetcher sends it as the
                // last fetched epoch and the source reports a divergence no cut can repair (campaign defect 1)
                truncateTo(offset, reason);
            }
            List<TruncationPoints.Point> now = new ArrayList<>(applied);
            now.addAll(due);
            now = now.subList(Math.max(0, now.size() - TruncationPointFile.KEPT), now.size());
            TruncationPointFile.write(log_.dir().toPath(), now);
            appliedPoints = List.copyOf(now);
            if (offset < end) {
                log.info("{}Applied truncation point {} at offset {}: dropped offsets {}-{} ({})", p.logPrefix(),
                        id, offset, offset, end - 1, truncation.reason());
            } else {
                // every replica of every mirror partition applies the start's point: nothing to say at INFO
                log.debug("{}Applied truncation point {} at offset {}: nothing to drop (log end {})", p.logPrefix(),
                        id, offset, end);
            }
            return true;
        } finally {
            p.lock().writeLock().unlock();
        }
    }

    /** The ids of the last truncation points this replica applied ({@link #applyTruncationPoints}), at most {@link TruncationPointFile#KEPT}. */
    Set<Long> appliedTruncationIds() throws IOException {
        return ids(appliedPoints());
    }

    private List<TruncationPoints.Point> appliedPoints() throws IOException {
        List<TruncationPoints.Point> known = appliedPoints;
        if (known == null) {
            known = TruncationPointFile.read(log_.dir().toPath());
            appliedPoints = known;
        }
        return known;
    }

    private static Set<Long> ids(List<TruncationPoints.Point> points) {
        Set<Long> ids = new HashSet<>();
        points.forEach(point -> ids.add(point.id()));
        return ids;
    }

    /** Empties the log and restarts it at {@code offset} (the leader's log start is past our end). */
    void truncateFullyAndStartAt(long offset, String reason) {
        p.lock().writeLock().lock();
        try {
            long before = log_.logEndOffset();
            log_.truncateFullyAndStartAt(offset, Optional.empty());
            p.barriers().forget();
            forgetFollowerPositionsAfterTruncation();
            log.info("{}Emptied log (end offset was {}) and restarted it at {} ({})", p.logPrefix(), before, offset,
                    reason);
        } finally {
            p.lock().writeLock().unlock();
        }
    }

    /**
     * A leader that cut its own log (a mirror leader aligning with its source) no longer knows what its followers
     * hold: their last fetch positions may count records it no longer has, or that differ from what it will append
     * at the same offsets. Until each follower fetches again (and truncates on the diverging epoch it is answered),
     * it counts for nothing in the high watermark. The epoch's start offset moves back with the log end, so a
     * follower that converges can rejoin the ISR.
     */
    private void forgetFollowerPositionsAfterTruncation() {
        if (!p.isLeader()) {
            return;
        }
        p.followers().forgetPositions();
        p.capLeaderEpochStartOffset(log_.logEndOffset());
    }
}
