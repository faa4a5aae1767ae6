package io.twinlog.common;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * Decides when a warning that a caller may hit many times a millisecond is written: the first time, whenever what
 * it says changes (its {@code state}: the numbers it reports), and otherwise at most once per {@code intervalMs},
 * with the count of repeats not written since the last line. A warning left unwritten this way is one the log
 * already holds with the same numbers. Thread-safe; reads only the time it is given.
 */
public final class RepeatedWarning {
    private final long intervalMs;
    private Object lastState;
    private long lastWrittenMs;
    private long suppressed;
    private boolean written;

    public RepeatedWarning(long intervalMs) {
        if (intervalMs <= 0) {
            throw new IllegalArgumentException("intervalMs must be positive: " + intervalMs);
        }
        this.intervalMs = intervalMs;
    }

    /**
     * The warning occurred again with {@code state} at {@code nowMs}: the number of repeats left unwritten since the
     * last line when this one is to be written, empty when it is not.
     */
    public synchronized OptionalLong onOccurrence(Object state, long nowMs) {
        if (written && Objects.equals(state, lastState) && nowMs - lastWrittenMs < intervalMs) {
            suppressed++;
            return OptionalLong.empty();
        }
        long repeats = suppressed;
        written = true;
        lastState = state;
        lastWrittenMs = nowMs;
        suppressed = 0;
        return OptionalLong.of(repeats);
    }

    /** What the warning was about has passed (the next occurrence is written at once, as a new state). */
    public synchronized void reset() {
        written = false;
        lastState = null;
        suppressed = 0;
    }
}
