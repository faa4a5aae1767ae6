package io.twinlog.testkit;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.Predicate;

/**
 * Waiting for state by polling with a deadline. A timeout fails with what was awaited and the last state seen,
 * never a bare "condition not met".
 */
public final class Waits {
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    private static final long POLL_INTERVAL_MS = 50;

    private Waits() {
    }

    /** Polls {@code state} until {@code done} accepts it; returns that state. Exceptions count as "not yet". */
    public static <T> T waitFor(String what, Callable<T> state, Predicate<T> done, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        T last = null;
        Throwable lastError = null;
        while (true) {
            try {
                last = state.call();
                if (done.test(last)) {
                    return last;
                }
                lastError = null;
            } catch (Exception e) {
                // broad: any failure of a poll is retried until the deadline, which reports the last as its cause
                lastError = e;
            }
            if (System.nanoTime() > deadline) {
                AssertionError err = new AssertionError("Timed out after " + timeout.toMillis() + " ms waiting for "
                        + what + "; last state: " + last + (lastError == null ? "" : "; last error: " + lastError));
                if (lastError != null) {
                    err.initCause(lastError);
                }
                throw err;
            }
            pause();
        }
    }

    public static <T> T waitFor(String what, Callable<T> state, Predicate<T> done) {
        return waitFor(what, state, done, DEFAULT_TIMEOUT);
    }

    public static void waitUntil(String what, Callable<Boolean> condition) {
        waitFor(what, condition, Boolean.TRUE::equals, DEFAULT_TIMEOUT);
    }

    public static void waitUntil(String what, Callable<Boolean> condition, Duration timeout) {
        waitFor(what, condition, Boolean.TRUE::equals, timeout);
    }

    private static void pause() {
        try {
            Thread.sleep(POLL_INTERVAL_MS); // the poll interval of a deadline-bounded wait, not a wait for state
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("Interrupted while waiting", e);
        }
    }
}
