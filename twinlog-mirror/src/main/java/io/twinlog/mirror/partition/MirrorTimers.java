package io.twinlog.mirror.partition;

/**
 * What one leader of a mirror partition keeps in memory (lost with leadership, on purpose: a new leader starts
 * again): since when it has waited for the controller to raise its epoch, when a FAILED partition retries, when
 * progress was last recorded (-1: not set), and whether this leader has compared its log with the source's before
 * mirroring (issue 12 point 4b: a new leader, perhaps elected uncleanly, reconciles before it copies again).
 */
public record MirrorTimers(long waitingSinceMs, long retryAtMs, long lastProgressWriteMs, boolean reconciled) {
    public static final MirrorTimers NONE = new MirrorTimers(-1L, -1L, -1L, false);

    MirrorTimers waitingSince(long ms) {
        return new MirrorTimers(ms, retryAtMs, lastProgressWriteMs, reconciled);
    }

    MirrorTimers retryAt(long ms) {
        return new MirrorTimers(waitingSinceMs, ms, lastProgressWriteMs, reconciled);
    }

    MirrorTimers progressWrittenAt(long ms) {
        return new MirrorTimers(waitingSinceMs, retryAtMs, ms, reconciled);
    }

    MirrorTimers reconciledWithSource() {
        return new MirrorTimers(waitingSinceMs, retryAtMs, lastProgressWriteMs, true);
    }
}
