package io.twinlog.mirror.partition;

/**
 * The state machine's tunables.
 *
 * @param stateTimeoutMs      how long EPOCH_FENCING or STOPPING may wait for the controller to raise the epoch
 *                            before the partition goes FAILED (retriable) with the reason ({@code mirror.state.timeout.ms})
 * @param retryInitialMs      first retry backoff of a FAILED partition, doubled per attempt
 * @param retryMaxMs          backoff cap
 * @param progressIntervalMs  at most one progress write (source high watermark, log end) per interval
 * @param epochMargin         EPOCH_FENCING raises the local epoch to the highest source epoch held plus this
 */
public record MirrorSettings(long stateTimeoutMs, long retryInitialMs, long retryMaxMs, long progressIntervalMs,
                             int epochMargin) {
    public static final long DEFAULT_RETRY_INITIAL_MS = 1_000;
    public static final long DEFAULT_RETRY_MAX_MS = 30_000;
    public static final long DEFAULT_PROGRESS_INTERVAL_MS = 5_000;
    public static final int DEFAULT_EPOCH_MARGIN = 10;

    public static MirrorSettings defaults(long stateTimeoutMs) {
        return new MirrorSettings(stateTimeoutMs, DEFAULT_RETRY_INITIAL_MS, DEFAULT_RETRY_MAX_MS,
                DEFAULT_PROGRESS_INTERVAL_MS, DEFAULT_EPOCH_MARGIN);
    }
}
