package io.twinlog.common.tasks;

import com.yammer.metrics.core.Meter;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;

import java.util.function.BooleanSupplier;

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
 * <p>A loop on a thread of its own that guards its own body (a fetcher thread, decision 69) is reported by a task
 * made with {@link #loop}: the loop calls {@link #iterationCompleted} or {@link #iterationFailed} after each
 * iteration, and the age is the time since its last completed one, so a loop stuck inside an iteration ages.
 *
 * <p>Threading: {@link #run} (or a loop's iteration reports) is called by one thread at a time (the task's scheduler runs a periodic task's runs in
 * sequence); {@link #health} may be read from any thread.
 */
public final class BackgroundTask implements Runnable {
    private final String name;
    private final long periodMs;
    private final Time time;
    private final Logger log;
    private final Runnable body;
    private final long createdMs;
    /** Whether a loop reports its iterations ({@link #loop}) rather than a scheduler running the body. */
    private final boolean loop;
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
        this(name, periodMs, time, log, body, false);
    }

    private BackgroundTask(String name, long periodMs, Time time, Logger log, Runnable body, boolean loop) {
        if (periodMs <= 0) {
            throw new IllegalArgumentException("The period of background task " + name + " must be positive, not "
                    + periodMs);
        }
        this.name = name;
        this.periodMs = periodMs;
        this.time = time;
        this.log = log;
        this.body = body;
        this.loop = loop;
        this.createdMs = time.milliseconds();
    }

    /**
     * The health of a loop that runs on a thread of its own and catches its own failures: it reports each iteration
     * with {@link #iterationCompleted} or {@link #iterationFailed}; the task is never run.
     *
     * @param periodMs the longest a healthy iteration takes (a fetch round waits at most one request timeout): a last
     *                 completed iteration older than {@value TaskHealth#STALE_PERIODS} periods is STALE
     */
    public static BackgroundTask loop(String name, long periodMs, Time time, Logger log) {
        return new BackgroundTask(name, periodMs, time, log, () -> {
            throw new IllegalStateException("Background loop " + name + " reports its iterations; it is not run");
        }, true);
    }

    /**
     * Runs a loop's iterations on the calling thread while {@code running} holds, reporting each one; one that
     * throws (anything, an Error too) is reported, logged, and followed by {@code backOff} unless the loop is ending.
     */
    public void runWhile(BooleanSupplier running, Runnable iteration, Runnable backOff) {
        while (running.getAsBoolean()) {
            try {
                iteration.run();
                iterationCompleted();
            } catch (Throwable t) { // an Error too: the loop is the thread's whole life
                if (running.getAsBoolean()) {
                    iterationFailed(t);
                    backOff.run();
                }
            }
        }
    }

    /** A loop's iteration completed: as a successful run. */
    public void iterationCompleted() {
        onSuccess();
    }

    /** A loop's iteration failed with {@code t}, which the loop caught: counted and logged as a failed run. */
    public void iterationFailed(Throwable t) {
        onFailure(t);
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
            log.error("[BackgroundTask {}] failed ({} in a row, last success {}); {}", name, failed,
                    lastSuccessMs < 0 ? "never" : ageMs + " ms ago",
                    loop ? "the loop goes on" : "it runs again in " + periodMs + " ms", t);
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
