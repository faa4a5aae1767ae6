package io.twinlog.mirror.partition;

/**
 * What one leader of a mirror partition keeps in memory (lost with leadership, on purpose: a new leader starts
 * again): since when it has waited for the controller to raise its epoch, when a FAILED partition retries, when
 * progress was last recorded (-1: not set), and up to which of the operator's requests this leader has compared its
 * log with the source's ({@code reconciledAt}, the record's {@code reconcileRequests} then; -1: not yet — a new
 * leader, perhaps elected uncleanly, reconciles before it copies: issue 12 point 4b).
 */
public record MirrorTimers(long waitingSinceMs, long retryAtMs, long lastProgressWriteMs, int reconciledAt) {
    public static final MirrorTimers NONE = new MirrorTimers(-1L, -1L, -1L, -1);

    MirrorTimers waitingSince(long ms) {
        return new MirrorTimers(ms, retryAtMs, lastProgressWriteMs, reconciledAt);
    }

    MirrorTimers retryAt(long ms) {
        return new MirrorTimers(waitingSinceMs, ms, lastProgressWriteMs, reconciledAt);
    }

    MirrorTimers progressWrittenAt(long ms) {
        return new MirrorTimers(waitingSinceMs, retryAtMs, ms, reconciledAt);
    }

    MirrorTimers reconciledUpTo(int requests) {
        return new MirrorTimers(waitingSinceMs, retryAtMs, lastProgressWriteMs, requests);
    }
}
