package io.twinlog.mirror.partition;

/**
 * The in-memory clocks of one mirror partition on its leader (lost with leadership, on purpose: a new leader starts
 * them again): since when it has waited for the controller to raise its epoch, when a FAILED partition retries, and
 * when progress was last recorded. -1 means not set.
 */
public record MirrorTimers(long waitingSinceMs, long retryAtMs, long lastProgressWriteMs) {
    public static final MirrorTimers NONE = new MirrorTimers(-1L, -1L, -1L);

    MirrorTimers waitingSince(long ms) {
        return new MirrorTimers(ms, retryAtMs, lastProgressWriteMs);
    }

    MirrorTimers retryAt(long ms) {
        return new MirrorTimers(waitingSinceMs, ms, lastProgressWriteMs);
    }

    MirrorTimers progressWrittenAt(long ms) {
        return new MirrorTimers(waitingSinceMs, retryAtMs, ms);
    }
}
