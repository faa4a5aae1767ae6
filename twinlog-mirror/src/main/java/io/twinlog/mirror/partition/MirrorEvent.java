package io.twinlog.mirror.partition;

/** Why the state machine is asked to decide: a periodic or metadata-driven pass, or a report from the fetcher. */
public sealed interface MirrorEvent {
    MirrorEvent TICK = new Tick();

    /** A pass over the partition (every half second and after each metadata change). */
    record Tick() implements MirrorEvent {
    }

    /** The fetcher met a source batch whose epoch reaches the local leader epoch: fence again before appending. */
    record EpochFencingNeeded(int sourceEpoch) implements MirrorEvent {
    }

    /**
     * The source no longer has what this cluster mirrored (an unclean leader election there): its epoch
     * {@code sourceEpoch} ends at {@code sourceEndOffset} (-1 for either when it holds no epoch at or below ours).
     */
    record SourceDiverged(int sourceEpoch, long sourceEndOffset, String reason) implements MirrorEvent {
    }

    /** The fetcher cannot go on (source unreachable, authentication ...). */
    record FetchFailed(String reason, boolean retriable) implements MirrorEvent {
    }
}
