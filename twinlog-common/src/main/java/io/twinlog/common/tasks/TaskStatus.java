package io.twinlog.common.tasks;

/** How a background task is doing, as the dashboard shows it (docs/operations.md, "Background tasks"). */
public enum TaskStatus {
    /** Its last run succeeded, within {@link TaskHealth#STALE_PERIODS} periods. */
    OK,
    /** Its last run failed (it keeps being scheduled; the failure is in the broker's log). */
    FAILING,
    /**
     * It has not failed, but has not succeeded either for more than {@link TaskHealth#STALE_PERIODS} periods: it
     * hangs in a run, or is no longer scheduled.
     */
    STALE
}
