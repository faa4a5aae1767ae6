package io.twinlog.common;

import org.apache.kafka.common.utils.Time;

/** A point in time by which something must happen; reads the clock it was given, never the system clock. */
public final class Deadline {
    private final Time time;
    private final long deadlineMs;

    private Deadline(Time time, long deadlineMs) {
        this.time = time;
        this.deadlineMs = deadlineMs;
    }

    public static Deadline after(Time time, long timeoutMs) {
        long now = time.milliseconds();
        long d = timeoutMs > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + timeoutMs;
        return new Deadline(time, d);
    }

    public boolean expired() {
        return time.milliseconds() >= deadlineMs;
    }

    public long remainingMs() {
        return Math.max(0, deadlineMs - time.milliseconds());
    }
}
