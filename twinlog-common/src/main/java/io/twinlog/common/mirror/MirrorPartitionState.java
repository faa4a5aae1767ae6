package io.twinlog.common.mirror;

import java.util.Arrays;
import java.util.Optional;

/**
 * The state of one mirror partition on the destination cluster (mirroring-design.md, KIP-1279). Wire values follow
 * the KIP-1279 prototype so tools speaking both can compare them.
 */
public enum MirrorPartitionState {
    /** Aligning the local log with the source: truncate to the end of the last mirrored epoch (LME). */
    LOG_TRUNCATION((byte) 0),
    /** Raising the local leader epoch above every source epoch held (DLE ≥ SLE). */
    EPOCH_FENCING((byte) 1),
    /** The mirror fetcher runs; the topic is read-only. */
    MIRRORING((byte) 2),
    /** Fetchers being removed for a pause. */
    PAUSING((byte) 3),
    /** No fetcher; still read-only; resume continues from the local log end. */
    PAUSED((byte) 4),
    /** Failover in progress: fetchers removed, open transactions dealt with, LMO/LME recorded, epoch bumped. */
    STOPPING((byte) 5),
    /** Detached from the source; the topic is writable. */
    STOPPED((byte) 6),
    /** An error, with a reason; retried with backoff when the cause may pass. */
    FAILED((byte) 7),
    /**
     * The source diverged while mirroring (an unclean leader election there): every replica that must take part
     * truncates to the diverging point, as in LOG_TRUNCATION, then mirroring continues (Twinlog's, issue 12).
     */
    ULE_RECOVERY((byte) 8),
    /** No state known (never set by an API). */
    UNKNOWN((byte) -1);

    private final byte value;

    MirrorPartitionState(byte value) {
        this.value = value;
    }

    public byte value() {
        return value;
    }

    public static Optional<MirrorPartitionState> fromValue(byte value) {
        return Arrays.stream(values()).filter(s -> s.value == value).findFirst();
    }

    /** States in which the topic refuses produce from clients. */
    public boolean isReadOnly() {
        return this != STOPPED && this != UNKNOWN;
    }
}
