package io.twinlog.common.tasks;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PerKeyExecutorTest {

    @Test
    void aKeyWhoseTaskWaitsHoldsOnlyItsOwnLaterTasks() throws Exception {
        try (PerKeyExecutor executor = new PerKeyExecutor("test", 60_000)) {
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch m1Started = new CountDownLatch(1);
            CountDownLatch m2Done = new CountDownLatch(1);
            List<String> ran = new CopyOnWriteArrayList<>();
            executor.execute("m1", () -> {
                ran.add("m1-first");
                m1Started.countDown();
                await(release);
            });
            executor.execute("m1", () -> ran.add("m1-second"));
            // m1's thread may start after m2's: wait for it so the order of "ran" is m1's waiting task first
            assertTrue(m1Started.await(10, TimeUnit.SECONDS));
            executor.execute("m2", () -> {
                ran.add("m2:" + Thread.currentThread().getName());
                m2Done.countDown();
            });

            assertTrue(m2Done.await(10, TimeUnit.SECONDS), "m2 ran while m1's first task waited");
            assertEquals(List.of("m1-first", "m2:test-m2"), ran, "m1's second waits; the thread is named by key");
            assertTrue(executor.busy("m1"));
            release.countDown();
            waitUntil(() -> !executor.busy("m1"));
            assertEquals(List.of("m1-first", "m2:test-m2", "m1-second"), ran);
            waitUntil(() -> !executor.busy("m2")); // an idle key leaves no entry
        }
    }

    @Test
    void aFailingTaskIsLoggedAndTheKeysNextTaskStillRunsOnTheSameThread() throws Exception {
        try (PerKeyExecutor executor = new PerKeyExecutor("test", 60_000)) {
            CountDownLatch bothQueued = new CountDownLatch(1);
            CountDownLatch next = new CountDownLatch(1);
            executor.execute("m", () -> {
                await(bothQueued); // the second task is queued behind this one: the same thread runs it
                Thread.currentThread().interrupt(); // left behind by the task: not the next one's
                throw new IllegalStateException("boom");
            });
            executor.execute("m", () -> {
                if (!Thread.currentThread().isInterrupted()) {
                    next.countDown();
                }
            });
            bothQueued.countDown();
            assertTrue(next.await(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void closingTellsTheTasksThatWillNotRun() throws Exception {
        PerKeyExecutor executor = new PerKeyExecutor("test", 60_000);
        CountDownLatch running = new CountDownLatch(1);
        List<Throwable> rejections = new CopyOnWriteArrayList<>();
        executor.execute("m", () -> {
            running.countDown();
            await(new CountDownLatch(1)); // until interrupted by close
        });
        executor.execute("m", new PerKeyExecutor.Rejectable() {
            @Override
            public void run() {
                rejections.add(new AssertionError("ran after close"));
            }

            @Override
            public void reject(Throwable why) {
                rejections.add(why);
            }
        });
        assertTrue(running.await(10, TimeUnit.SECONDS));
        executor.close();
        assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS), "the running task was interrupted");
        assertEquals(1, rejections.size());
        assertTrue(rejections.get(0) instanceof RejectedExecutionException, rejections.toString());
    }

    @Test
    void idleThreadsEndAndAClosedExecutorRefuses() throws Exception {
        PerKeyExecutor executor = new PerKeyExecutor("idle-test", 100);
        CountDownLatch ran = new CountDownLatch(1);
        executor.execute("m", ran::countDown);
        assertTrue(ran.await(10, TimeUnit.SECONDS));
        waitUntil(() -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().startsWith("idle-test")));
        executor.close();
        assertThrows(RejectedExecutionException.class, () -> executor.execute("m", () -> { }));
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void waitUntil(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "condition not met within 10 s");
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }
}
