package io.twinlog.mirror.runtime;

import io.twinlog.mirror.runtime.MirrorCalls.Outcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The per-mirror call threads of the mirror manager (issue 25, point 3): work runs off the manager's thread, one
 * mirror's stuck call never holds another's, calls of different partitions run side by side on the mirror's threads
 * each with its own comparison (decision 98), outcomes (failures too) come back on the manager's thread, the queue
 * is bounded, and close ends the threads.
 */
@Timeout(30)
class MirrorCallsTest {
    /** Stands for the manager's thread: outcomes run there, one at a time. */
    private final ExecutorService manager = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-manager"));
    private final List<MirrorCalls> created = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        created.forEach(c -> manager.execute(c::close));
        manager.shutdown();
        assertTrue(manager.awaitTermination(5, TimeUnit.SECONDS));
    }

    private MirrorCalls calls(String mirror) throws Exception {
        MirrorCalls c = new MirrorCalls(7, mirror, manager);
        created.add(c);
        return c;
    }

    /** Runs {@code action} on the manager thread and waits for it (calls are made there, as in the manager). */
    private <T> T onManager(Callable<T> action) throws Exception {
        return manager.submit(action).get(10, TimeUnit.SECONDS);
    }

    @Test
    void aStuckCallOfOneMirrorDoesNotHoldAnotherMirrorsCall() throws Exception {
        MirrorCalls m1 = calls("m1");
        MirrorCalls m2 = calls("m2");
        CountDownLatch peerAnswers = new CountDownLatch(1);
        BlockingQueue<String> outcomes = new LinkedBlockingQueue<>();
        AtomicReference<String> ranOn = new AtomicReference<>();
        onManager(() -> m1.call("ask/t1", "asking m1's blackholed peer", () -> {
            peerAnswers.await();
            return "m1 answered";
        }, o -> outcomes.add(o.value())));
        onManager(() -> m2.call("ask/t2", "asking m2's peer", () -> {
            ranOn.set(Thread.currentThread().getName());
            return "m2 answered";
        }, o -> outcomes.add(o.value() + " on " + Thread.currentThread().getName())));

        assertEquals("m2 answered on test-manager", outcomes.poll(10, TimeUnit.SECONDS),
                "m2's outcome arrives on the manager's thread while m1's call is stuck");
        assertTrue(ranOn.get().startsWith("twinlog-mirror-calls-7-m2-"), "the work ran on one of m2's own threads, "
                + "not " + ranOn.get());
        assertNull(outcomes.poll(), "m1 is still waiting");
        peerAnswers.countDown();
        assertEquals("m1 answered", outcomes.poll(10, TimeUnit.SECONDS));
    }

    @Test
    void callsOfTheSameKeyInFlightShareOneRun() throws Exception {
        MirrorCalls m = calls("m");
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        BlockingQueue<String> outcomes = new LinkedBlockingQueue<>();
        for (int p = 0; p < 3; p++) {
            int partition = p;
            assertTrue(onManager(() -> m.call("ask/t", "asking for t", () -> {
                runs.incrementAndGet();
                release.await();
                return "answer";
            }, o -> outcomes.add(partition + ":" + o.value()))));
        }
        release.countDown();
        List<String> got = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            got.add(outcomes.poll(10, TimeUnit.SECONDS));
        }
        assertEquals(List.of("0:answer", "1:answer", "2:answer"), got);
        assertEquals(1, runs.get(), "one lookup for the topic's three partitions");

        // once finished, the same key runs again
        onManager(() -> m.call("ask/t", "asking for t", () -> runs.incrementAndGet(), o -> outcomes.add("again")));
        assertEquals("again", outcomes.poll(10, TimeUnit.SECONDS));
        assertEquals(2, runs.get());
    }

    @Test
    void aFailureComesBackAsAFailedOutcome() throws Exception {
        MirrorCalls m = calls("m");
        BlockingQueue<Outcome<Object>> outcomes = new LinkedBlockingQueue<>();
        onManager(() -> m.call("copy/t-0", "copying to the quarantine", () -> {
            throw new IOException("the quarantine's in-sync replicas are too few");
        }, outcomes::add));
        Outcome<Object> o = outcomes.poll(10, TimeUnit.SECONDS);
        assertTrue(o.isFailure());
        assertInstanceOf(IOException.class, o.error());
        assertEquals("the quarantine's in-sync replicas are too few", o.error().getMessage());

        // an Error too: the waiting partition hears of it instead of waiting for ever
        onManager(() -> m.call("copy/t-1", "copying to the quarantine", () -> {
            throw new AssertionError("boom");
        }, outcomes::add));
        assertInstanceOf(AssertionError.class, outcomes.poll(10, TimeUnit.SECONDS).error());
    }

    @Test
    void callsOfDifferentPartitionsRunSideBySideOnTheMirrorsThreads() throws Exception {
        MirrorCalls m = calls("m");
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch allRunning = new CountDownLatch(MirrorCalls.CALL_THREADS);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        Set<PeerComparison> comparisons = ConcurrentHashMap.newKeySet();
        BlockingQueue<Integer> outcomes = new LinkedBlockingQueue<>();
        int calls = MirrorCalls.CALL_THREADS + 2;
        for (int p = 0; p < calls; p++) {
            int partition = p;
            assertTrue(onManager(() -> m.call("compare/t-" + partition, "comparing t-" + partition, () -> {
                mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
                comparisons.add(m.comparison()); // the thread's own: a second call on it finds the same one
                allRunning.countDown();
                release.await();
                running.decrementAndGet();
                return partition;
            }, o -> outcomes.add(o.value()))));
        }
        assertTrue(allRunning.await(10, TimeUnit.SECONDS), "the comparisons of " + MirrorCalls.CALL_THREADS
                + " partitions run at once, none waits for another's peer");
        assertEquals(MirrorCalls.CALL_THREADS, mostAtOnce.get(), "no more than the mirror's threads at once");
        assertEquals(MirrorCalls.CALL_THREADS, comparisons.size(), "one comparison per thread");
        release.countDown();
        Set<Integer> got = new HashSet<>();
        for (int i = 0; i < calls; i++) {
            got.add(outcomes.poll(10, TimeUnit.SECONDS));
        }
        assertEquals(calls, got.size(), "the queued calls ran too: " + got);
        assertEquals(MirrorCalls.CALL_THREADS, comparisons.size(), "the queued calls used the threads' comparisons");
        assertEquals(MirrorCalls.CALL_THREADS, m.openComparisons());

        onManager(() -> {
            m.close();
            return null;
        });
        assertTrue(m.awaitTermination(5_000));
        assertEquals(0, m.openComparisons(), "each thread's comparison is closed as the thread ends");
    }

    @Test
    void aFullQueueRefusesTheCallAndTheCallerAsksAgainLater() throws Exception {
        MirrorCalls m = calls("m");
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(MirrorCalls.CALL_THREADS);
        for (int i = 0; i < MirrorCalls.CALL_THREADS; i++) {
            int key = i;
            assertTrue(onManager(() -> m.call("running/" + key, "a stuck call", () -> {
                running.countDown();
                release.await();
                return 0;
            }, o -> { })));
        }
        assertTrue(running.await(10, TimeUnit.SECONDS), "every thread of the mirror holds a stuck call");
        CountDownLatch drained = new CountDownLatch(MirrorCalls.QUEUE_CAPACITY);
        for (int i = 0; i < MirrorCalls.QUEUE_CAPACITY; i++) {
            int key = i;
            assertTrue(onManager(() -> m.call("queued/" + key, "queued", () -> key, o -> drained.countDown())));
        }
        assertFalse(onManager(() -> m.call("one-too-many", "over the limit", () -> 0, o -> { })),
                "the queue holds at most " + MirrorCalls.QUEUE_CAPACITY + " calls");
        assertFalse(onManager(() -> m.call("two-too-many", "over the limit", () -> 0, o -> { })));
        // the streak is counted (one warning, not one per refusal) until the queue takes a call again
        assertEquals(2L, onManager(m::refusedWhileFull));
        release.countDown();
        assertTrue(drained.await(10, TimeUnit.SECONDS));
        BlockingQueue<Outcome<Object>> later = new LinkedBlockingQueue<>();
        assertTrue(onManager(() -> m.call("asked-again", "asked again", () -> "done", later::add)),
                "the drained queue takes the call asked again");
        assertEquals("done", later.poll(10, TimeUnit.SECONDS).value());
        assertEquals(0L, onManager(m::refusedWhileFull), "the streak ends once a call is taken");
    }

    @Test
    void aQueueThatFillsAgainSoonAfterIsNotReportedAgain() throws Exception {
        MirrorCalls m = calls("m");
        for (int streak = 0; streak < 2; streak++) {
            CountDownLatch release = fillQueue(m, "streak " + streak);
            assertFalse(onManager(() -> m.call("over", "over the limit", () -> 0, o -> { })));
            assertEquals(1L, onManager(m::refusedWhileFull));
            release.countDown();
            BlockingQueue<Object> taken = new LinkedBlockingQueue<>();
            assertTrue(eventually(() -> onManager(() -> m.call("again/" + taken.size(), "asked again", () -> 0,
                    taken::add))), "the drained queue takes calls again");
            assertEquals(0L, onManager(m::refusedWhileFull));
        }
        assertEquals(1L, onManager(m::streaksReported), "the second streak, within "
                + MirrorCalls.REPORT_INTERVAL_SECONDS + " s of the first, is counted into the next warning, not warned");
    }

    /** Every thread of {@code m} stuck and its queue full; counting the latch down lets them all finish. */
    private CountDownLatch fillQueue(MirrorCalls m, String name) throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(MirrorCalls.CALL_THREADS);
        for (int i = 0; i < MirrorCalls.CALL_THREADS + MirrorCalls.QUEUE_CAPACITY; i++) {
            String key = name + "/" + i;
            boolean stuck = i < MirrorCalls.CALL_THREADS;
            assertTrue(onManager(() -> m.call(key, "a call of " + name, () -> {
                running.countDown();
                release.await();
                return 0;
            }, o -> { })));
            if (stuck && i == MirrorCalls.CALL_THREADS - 1) {
                assertTrue(running.await(10, TimeUnit.SECONDS), "every thread holds a stuck call");
            }
        }
        return release;
    }

    /** Polls {@code condition} until it holds, for at most 10 s. */
    private static boolean eventually(Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (condition.call()) {
                return true;
            }
            Thread.onSpinWait();
        }
        return false;
    }

    @Test
    void closeEndsTheThreadAndDeliversNothingMore() throws Exception {
        MirrorCalls m = calls("m");
        CountDownLatch running = new CountDownLatch(1);
        BlockingQueue<Outcome<Object>> outcomes = new LinkedBlockingQueue<>();
        onManager(() -> m.call("ask/t", "asking a blackholed peer", () -> {
            running.countDown();
            new CountDownLatch(1).await(); // until interrupted
            return "never";
        }, outcomes::add));
        assertTrue(running.await(10, TimeUnit.SECONDS));
        assertTrue(m.threadAlive());
        onManager(() -> {
            m.close();
            return null;
        });
        assertTrue(m.awaitTermination(5_000), "the mirror's thread ends");
        assertFalse(m.threadAlive());
        assertTrue(m.isClosed());
        assertFalse(onManager(() -> m.call("ask/t", "after close", () -> 1, outcomes::add)));
        onManager(() -> null); // whatever the interrupted call handed back has run by now
        assertNull(outcomes.poll(), "no outcome after close");
        assertNotEquals(0, MirrorCalls.IDLE_SECONDS, "an idle mirror's thread ends by itself too");
    }
}
