package io.twinlog.common;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Waiting on an object's monitor for a condition that the thread changing it announces with {@code notifyAll} (a
 * watched ZooKeeper node read back, say), up to a deadline.
 */
public final class MonitorWaits {
    private MonitorWaits() {
    }

    /**
     * Waits until {@code done} holds or {@code System.nanoTime()} reaches {@code deadlineNanos}. The caller holds
     * {@code monitor}'s lock, and {@code done} reads state guarded by it.
     *
     * @return whether {@code done} holds (false: the deadline passed first)
     */
    public static boolean await(Object monitor, BooleanSupplier done, long deadlineNanos)
            throws InterruptedException {
        while (!done.getAsBoolean()) {
            long leftMs = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
            if (leftMs <= 0) {
                return false;
            }
            monitor.wait(leftMs);
        }
        return true;
    }

    /** The deadline {@code timeoutMs} from now, for {@link #await}. */
    public static long deadlineAfter(long timeoutMs) {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    }
}
