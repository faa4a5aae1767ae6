package io.twinlog.protocol.client;

import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.utils.MockTime;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The network clients' clock: milliseconds that follow System.nanoTime, never the wall clock (defect 4). */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class MonotonicTimeTest {
    @Test
    void itsMillisecondsMoveWithTheMonotonicClockAndStartNearTheWallClock() {
        MonotonicTime clock = MonotonicTime.INSTANCE;
        long nanosBefore = System.nanoTime();
        long first = clock.milliseconds();
        long previous = first;
        for (int i = 0; i < 100_000; i++) {
            long now = clock.milliseconds();
            assertTrue(now >= previous, "never backwards: " + now + " after " + previous);
            previous = now;
        }
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanosBefore);
        assertTrue(previous - first <= elapsedMs + 1, (previous - first) + " ms against " + elapsedMs + " elapsed");
        // read as a time in logs and metrics: within a minute of the wall clock unless the wall clock was stepped
        assertTrue(Math.abs(first - System.currentTimeMillis()) < 60_000);
    }

    @Test
    void aTestsMockTimeIsKeptTheSystemClockReplaced() {
        Time mock = new MockTime();
        assertSame(mock, MonotonicTime.orMock(mock));
        assertSame(MonotonicTime.INSTANCE, MonotonicTime.orMock(Time.SYSTEM));
    }

    @Test
    void waitObjectReturnsOnTheConditionAndFailsAtTheDeadline() throws Exception {
        Object lock = new Object();
        MonotonicTime clock = MonotonicTime.INSTANCE;
        clock.waitObject(lock, () -> true, clock.milliseconds() + 1_000);
        assertThrows(TimeoutException.class,
                () -> clock.waitObject(lock, () -> false, clock.milliseconds() + 50));
    }
}
