package io.twinlog.mirror.partition;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.mirror.store.MirrorPartitionRecord;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * Everything one decision of the mirror state machine depends on.
 *
 * @param record              the partition's durable record (as last written or read)
 * @param view                the local partition as its leader sees it now
 * @param desired             what the operator asked for the topic
 * @param event               why the decision is asked
 * @param peer                the source's last-mirrored answer, when the shell has asked it
 * @param sourceProblem       why the source cannot be mirrored from now (its topic deleted or created again, the
 *                            address answering for another cluster, no broker answering), or empty
 * @param sourceHighWatermark the source high watermark the fetcher last reported, if any
 * @param timers              the partition's in-memory clocks
 * @param nowMs               the time of the decision
 * @param mirroredTime        the newest mirrored timestamp and mirrored-up-to time the leader knows now (from its
 *                            log's last batch and its fetches), if it keeps them
 * @param pointInTime         a failover to a point in time: the operator's time, its cut of the log now, the
 *                            mirrored-up-to time (empty: none asked)
 */
public record MirrorInput(MirrorPartitionRecord record, PartitionView view, DesiredMirrorState desired,
                          MirrorEvent event, PeerLookup peer, Optional<SourceProblem> sourceProblem,
                          OptionalLong sourceHighWatermark, MirrorTimers timers, long nowMs,
                          Optional<MirroredTime> mirroredTime, Optional<PointInTimeView> pointInTime) {
    /** An input without the leader's mirrored time: progress keeps the recorded times. */
    public MirrorInput(MirrorPartitionRecord record, PartitionView view, DesiredMirrorState desired,
                       MirrorEvent event, PeerLookup peer, Optional<SourceProblem> sourceProblem,
                       OptionalLong sourceHighWatermark, MirrorTimers timers, long nowMs) {
        this(record, view, desired, event, peer, sourceProblem, sourceHighWatermark, timers, nowMs, Optional.empty());
    }

    /** An input with the leader's mirrored time, without a failover to a point in time. */
    public MirrorInput(MirrorPartitionRecord record, PartitionView view, DesiredMirrorState desired,
                       MirrorEvent event, PeerLookup peer, Optional<SourceProblem> sourceProblem,
                       OptionalLong sourceHighWatermark, MirrorTimers timers, long nowMs,
                       Optional<MirroredTime> mirroredTime) {
        this(record, view, desired, event, peer, sourceProblem, sourceHighWatermark, timers, nowMs, mirroredTime,
                Optional.empty());
    }
}
