package io.twinlog.common.tasks;

import io.twinlog.common.metrics.MetricsGroup;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The background tasks of one broker, each with its metrics in the broker's registry (decision 63), in Kafka's
 * naming:
 * <ul>
 *   <li>{@code kafka.server:type=BackgroundTask,name=LastSuccessAgeMs,task=<name>}: milliseconds since the task's
 *       last successful run (since it was created, while it never succeeded); alert when it exceeds a few periods;
 *   <li>{@code ...,name=ConsecutiveFailures,task=<name>}: failures since that success;
 *   <li>{@code ...,name=FailuresPerSec,task=<name>}: a meter of its failures.
 * </ul>
 * The dashboard reads {@link #health}. Thread-safe.
 */
public final class BackgroundTasks {
    public static final String GROUP = "kafka.server";
    public static final String TYPE = "BackgroundTask";
    public static final String LAST_SUCCESS_AGE_MS = "LastSuccessAgeMs";
    public static final String CONSECUTIVE_FAILURES = "ConsecutiveFailures";
    public static final String FAILURES_PER_SEC = "FailuresPerSec";

    private final MetricsGroup metrics;
    private final Map<String, BackgroundTask> tasks = new ConcurrentSkipListMap<>();

    /** @param metrics the group {@code kafka.server:type=BackgroundTask} of the broker's registry */
    public BackgroundTasks(MetricsGroup metrics) {
        this.metrics = metrics;
    }

    /**
     * Reports {@code task}'s health from now on, in place of an earlier task of the same name (a component started
     * again in the same broker, as tests do). Returns the task, so that scheduling it and registering it are one
     * expression.
     */
    public BackgroundTask register(BackgroundTask task) {
        Map<String, String> tags = Map.of("task", task.name());
        BackgroundTask previous = tasks.put(task.name(), task);
        if (previous != null) {
            removeMetrics(task.name());
        }
        metrics.newGauge(LAST_SUCCESS_AGE_MS, task::lastSuccessAgeMs, tags);
        metrics.newGauge(CONSECUTIVE_FAILURES, task::consecutiveFailures, tags);
        task.failureMeter(metrics.newMeter(FAILURES_PER_SEC, "failures", tags));
        return task;
    }

    /** Stops reporting {@code task} (it was closed); nothing if another task took its name since. */
    public void remove(BackgroundTask task) {
        if (tasks.remove(task.name(), task)) {
            removeMetrics(task.name());
        }
    }

    private void removeMetrics(String name) {
        Map<String, String> tags = Map.of("task", name);
        metrics.removeMetric(LAST_SUCCESS_AGE_MS, tags);
        metrics.removeMetric(CONSECUTIVE_FAILURES, tags);
        metrics.removeMetric(FAILURES_PER_SEC, tags);
    }

    /** Every registered task's health now, by name. */
    public List<TaskHealth> health() {
        List<TaskHealth> all = new ArrayList<>();
        tasks.values().forEach(t -> all.add(t.health()));
        return all;
    }
}
