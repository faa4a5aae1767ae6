package io.twinlog.protocol.client;

import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.utils.Time;

import java.util.function.Supplier;

/**
 * Kafka's {@link Time} on the monotonic clock, for a network client's own timeouts and backoffs. Kafka's
 * {@code NetworkClient} measures request timeouts and reconnect backoffs against {@link Time#milliseconds()}: on
 * the wall clock, a step back of the host's clock (NTP, {@code date -s}) leaves a request sent just before it
 * waiting for the whole step, and the fetcher thread with it (fault campaign, defect 4: a follower whose clock
 * stepped back 104 minutes stopped fetching). Its milliseconds start at the wall clock's value when the class loads,
 * so logs and metrics read as times, and then only move forward with {@link System#nanoTime()}. Not for anything a
 * client must stamp with the real time (record timestamps).
 */
public final class MonotonicTime implements Time {
    public static final MonotonicTime INSTANCE = new MonotonicTime();

    private final long originNanos = System.nanoTime();
    private final long originMs = System.currentTimeMillis();

    private MonotonicTime() {
    }

    /** {@code time} itself when it is not the system clock (a test's mock time), else the monotonic clock. */
    public static Time orMock(Time time) {
        return time == Time.SYSTEM ? INSTANCE : time;
    }

    @Override
    public long milliseconds() {
        return originMs + (System.nanoTime() - originNanos) / 1_000_000;
    }

    @Override
    public long nanoseconds() {
        return System.nanoTime();
    }

    @Override
    public void sleep(long ms) {
        Time.SYSTEM.sleep(ms);
    }

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) throws InterruptedException {
        synchronized (obj) {
            while (!condition.get()) {
                long leftMs = deadlineMs - milliseconds();
                if (leftMs <= 0) {
                    throw new TimeoutException("Condition not satisfied before its deadline");
                }
                obj.wait(leftMs);
            }
        }
    }
}
