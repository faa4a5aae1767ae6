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

    /** The fetcher cannot go on (source unreachable, divergence, authentication ...). */
    record FetchFailed(String reason, boolean retriable) implements MirrorEvent {
    }
}
