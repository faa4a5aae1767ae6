package io.twinlog.common.tasks;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(30)
class ConcurrentlyTest {

    @Test
    void outcomesComeInTheItemsOrderEachFailureItsOwn() throws Exception {
        List<Concurrently.Outcome<Integer>> out = Concurrently.run(List.of(1, 2, 3, 4, 5), 3, "test", i -> {
            if (i == 3) {
                throw new IOException("three failed");
            }
            return i * 10;
        });
        assertEquals(5, out.size());
        assertEquals(10, out.get(0).value());
        assertEquals(20, out.get(1).value());
        assertTrue(out.get(2).failed());
        assertNull(out.get(2).value());
        assertInstanceOf(IOException.class, out.get(2).failure());
        assertEquals(40, out.get(3).value());
        assertFalse(out.get(4).failed());
    }

    @Test
    void callsRunAtOnceUpToTheThreads() throws Exception {
        // each call waits for all four to have started: only four threads at once get past it
        CountDownLatch started = new CountDownLatch(4);
        AtomicInteger peak = new AtomicInteger();
        AtomicInteger running = new AtomicInteger();
        List<Concurrently.Outcome<Boolean>> out = Concurrently.run(List.of(1, 2, 3, 4), 4, "test", i -> {
            peak.accumulateAndGet(running.incrementAndGet(), Math::max);
            started.countDown();
            boolean all = started.await(10, TimeUnit.SECONDS);
            running.decrementAndGet();
            return all;
        });
        assertTrue(out.stream().allMatch(o -> Boolean.TRUE.equals(o.value())), out.toString());
        assertEquals(4, peak.get());
    }

    @Test
    void oneItemOrOneThreadRunsOnTheCallersThread() throws Exception {
        Thread caller = Thread.currentThread();
        assertEquals(caller, Concurrently.run(List.of(1), 8, "test", i -> Thread.currentThread()).get(0).value());
        assertTrue(Concurrently.run(List.of(1, 2), 1, "test", i -> Thread.currentThread()).stream()
                .allMatch(o -> o.value() == caller));
        assertThrows(IllegalArgumentException.class, () -> Concurrently.run(List.of(1), 0, "test", i -> i));
    }
}
