package io.twinlog.common.tasks;

import com.yammer.metrics.core.Meter;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;

/**
 * The body of a periodic task, guarded: whatever it throws, an {@link Error} too, is caught and logged, so the
 * schedule it runs on keeps running it (an exception escaping a {@code ScheduledExecutorService} task cancels every
 * later run without a word), and the time of its last successful run is recorded for the metrics and the dashboard
 * ({@link BackgroundTasks}, decision 63).
 *
 * <p>Logging, with the owner's logger: the first failure of a streak at ERROR with its stack trace, and again with
 * the stack trace when a streak's failure changes kind (another exception class); a short WARN line for each later
 * failure of the same kind, so a task failing every second does not flood the log with stack traces; INFO when it
 * succeeds again, with how long it failed.
 *
 * <p>Threading: {@link #run} is called by one thread at a time (the task's scheduler runs a periodic task's runs in
 * sequence); {@link #health} may be read from any thread.
 */
public final class BackgroundTask implements Runnable {
    private final String name;
    private final long periodMs;
    private final Time time;
    private final Logger log;
    private final Runnable body;
    private final long createdMs;
    private volatile long lastSuccessMs = -1;
    private volatile int consecutiveFailures;
    private volatile long failures;
    private volatile String lastError;
    /** The exception class of the current failure streak; the running thread only. */
    private Class<?> streakFailure;
    /** Marked on each failure once the task is registered ({@link BackgroundTasks}); null before. */
    private volatile Meter failureMeter;

    /**
     * @param name     the task's name in logs and metrics, Kafka's style ({@code isr-expiration})
     * @param periodMs the delay between its runs: a last success older than {@value TaskHealth#STALE_PERIODS}
     *                 periods is STALE
     * @param log      the owner's logger, so its failures are logged where its other lines are
     */
    public BackgroundTask(String name, long periodMs, Time time, Logger log, Runnable body) {
        if (periodMs <= 0) {
            throw new IllegalArgumentException("The period of background task " + name + " must be positive, not "
                    + periodMs);
        }
        this.name = name;
        this.periodMs = periodMs;
        this.time = time;
        this.log = log;
        this.body = body;
        this.createdMs = time.milliseconds();
    }

    public String name() {
        return name;
    }

    public long periodMs() {
        return periodMs;
    }

    @Override
    public void run() {
        try {
            body.run();
        } catch (Throwable t) { // an Error too: escaping, it would cancel every later run
            onFailure(t);
            return;
        }
        onSuccess();
    }

    private void onSuccess() {
        long now = time.milliseconds();
        int failed = consecutiveFailures;
        if (failed > 0) {
            log.info("[BackgroundTask {}] succeeded again after {} failures ({} ms since its last success)", name,
                    failed, now - lastSuccessOrCreatedMs());
        }
        lastSuccessMs = now;
        consecutiveFailures = 0;
        streakFailure = null;
    }

    private void onFailure(Throwable t) {
        long ageMs = time.milliseconds() - lastSuccessOrCreatedMs();
        int failed = consecutiveFailures + 1;
        consecutiveFailures = failed;
        failures++;
        lastError = t.toString();
        Meter meter = failureMeter;
        if (meter != null) {
            meter.mark();
        }
        if (t.getClass() != streakFailure) {
            streakFailure = t.getClass();
            log.error("[BackgroundTask {}] failed ({} in a row, last success {}); it runs again in {} ms", name,
                    failed, lastSuccessMs < 0 ? "never" : ageMs + " ms ago", periodMs, t);
        } else {
            log.warn("[BackgroundTask {}] failed again ({} in a row, last success {}): {}", name, failed,
                    lastSuccessMs < 0 ? "never" : ageMs + " ms ago", t.toString());
        }
    }

    private long lastSuccessOrCreatedMs() {
        long last = lastSuccessMs;
        return last < 0 ? createdMs : last;
    }

    /** Milliseconds since the last successful run, or since the task was created if it never succeeded. */
    public long lastSuccessAgeMs() {
        return Math.max(0, time.milliseconds() - lastSuccessOrCreatedMs());
    }

    public int consecutiveFailures() {
        return consecutiveFailures;
    }

    public TaskHealth health() {
        return new TaskHealth(name, periodMs, lastSuccessAgeMs(), lastSuccessMs >= 0, consecutiveFailures, failures,
                lastError);
    }

    void failureMeter(Meter meter) {
        this.failureMeter = meter;
    }
}
