package io.twinlog.launcher.demo;

import io.twinlog.common.Deadline;
import org.apache.kafka.common.utils.Time;

import java.time.Duration;
import java.util.function.Predicate;

/**
 * Waiting for a cluster to reach a state by asking it again and again until a deadline. A wait that runs out
 * fails with what it waited for and the last state (or error) seen.
 */
final class Polls {
    private static final long POLL_INTERVAL_MS = 100;

    /** Reads some state of the clusters; may fail (the wait then counts it as "not yet" and remembers the error). */
    @FunctionalInterface
    interface State<T> {
        T read() throws Exception;
    }

    private final Time time;

    Polls(Time time) {
        this.time = time;
    }

    /** Reads {@code state} until {@code done} accepts it, and returns that state. */
    <T> T await(String what, Duration timeout, State<T> state, Predicate<T> done) throws DemoFailure {
        Deadline deadline = Deadline.after(time, timeout.toMillis());
        T last = null;
        Exception lastError = null;
        while (true) {
            try {
                last = state.read();
                if (done.test(last)) {
                    return last;
                }
                lastError = null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DemoFailure("interrupted while waiting for " + what, e);
            } catch (Exception e) {
                // broad: a read that fails (a broker still starting, a leader moving) is a state not reached yet;
                // the last error becomes the cause of the failure at the deadline
                lastError = e;
            }
            if (deadline.expired()) {
                throw new DemoFailure("waited " + timeout.toSeconds() + " s for " + what + "; last seen: " + last
                        + (lastError == null ? "" : "; last error: " + lastError), lastError);
            }
            time.sleep(POLL_INTERVAL_MS); // the interval between two reads of a deadline-bounded wait
        }
    }
}
