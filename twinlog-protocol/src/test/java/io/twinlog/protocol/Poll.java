package io.twinlog.protocol;

import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/** Waiting for a state that other threads reach, by polling against a deadline (never a fixed sleep). */
final class Poll {
    private static final long DEADLINE_MS = 15_000;
    private static final long POLL_INTERVAL_NANOS = 5_000_000;

    private Poll() {
    }

    /** Returns once {@code value} gives {@code expected}; fails with the last value seen after the deadline. */
    static <T> void until(String what, T expected, Supplier<T> value) {
        long deadline = System.currentTimeMillis() + DEADLINE_MS;
        T last = value.get();
        while (!expected.equals(last)) {
            if (System.currentTimeMillis() > deadline) {
                throw new AssertionError(what + ": expected " + expected + " within " + DEADLINE_MS + " ms, last "
                        + last);
            }
            LockSupport.parkNanos(POLL_INTERVAL_NANOS); // between polls only, so as not to spin on 2 cores
            last = value.get();
        }
    }

    /** The names of the live threads of this JVM that start with {@code prefix}, sorted. */
    static Set<String> threadsNamed(String prefix) {
        Set<String> names = new TreeSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith(prefix)) {
                names.add(t.getName());
            }
        }
        return names;
    }
}
