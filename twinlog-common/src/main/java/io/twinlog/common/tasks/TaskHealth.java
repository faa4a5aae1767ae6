package io.twinlog.common.tasks;

/**
 * One background task's health at one moment: what the dashboard shows and the metrics report.
 *
 * @param name                the task's name ({@code isr-expiration}, {@code mirror-manager-tick}, ...)
 * @param periodMs            how often it runs (its delay between runs)
 * @param lastSuccessAgeMs    milliseconds since its last successful run, or since it was created if it never
 *                            succeeded
 * @param succeeded           whether it has succeeded at least once
 * @param consecutiveFailures failures since its last success
 * @param failures            failures since it was created
 * @param lastError           the last failure ({@code Throwable.toString()}), null if it never failed
 */
public record TaskHealth(String name, long periodMs, long lastSuccessAgeMs, boolean succeeded,
                         int consecutiveFailures, long failures, String lastError) {
    /** A task whose last success is older than this many periods is {@link TaskStatus#STALE}. */
    public static final int STALE_PERIODS = 3;

    public TaskStatus status() {
        if (consecutiveFailures > 0) {
            return TaskStatus.FAILING;
        }
        return lastSuccessAgeMs > STALE_PERIODS * periodMs ? TaskStatus.STALE : TaskStatus.OK;
    }
}
