package io.twinlog.mirror.partition;

import io.twinlog.common.mirror.PointInTimeStop;
import io.twinlog.mirror.store.PointInTimeOutcome.Reach;

import java.util.Optional;

/**
 * What a decision of a failover to a point in time depends on besides the record and the view: the operator's time
 * and deadline, where that time cuts the leader's log now ({@link TimeCut}, read by the shell), and the
 * partition's mirrored-up-to time ({@link MirroredTime}; -1: not known to this leader): past the time, the partition
 * holds a batch after it or a fetch since found it caught up with the source high watermark.
 */
public record PointInTimeView(PointInTimeStop stop, TimeCut cut, long mirroredUpToMs) {
    /**
     * Why the partition stops waiting for the time now, or empty while it waits: it holds a batch newer than the time
     * or caught up with the source after it, the source has not answered for the state timeout (or cannot be
     * mirrored from), or the deadline passed.
     */
    Optional<Reach> reached(Optional<SourceProblem> problem, long nowMs) {
        if (cut.cuts() || mirroredUpToMs > stop.atMs()) {
            return Optional.of(Reach.REACHED);
        }
        // a single failed attempt (UNANSWERED) is no reason to stop short: the source must have been away for
        // mirror.state.timeout.ms, or be another cluster, or have lost the topic
        if (problem.isPresent() && problem.get().kind() != SourceProblem.Kind.UNANSWERED) {
            return Optional.of(Reach.SOURCE_UNREACHABLE);
        }
        if (nowMs >= stop.deadlineMs()) {
            return Optional.of(Reach.TIMED_OUT);
        }
        return Optional.empty();
    }
}
