package io.twinlog.common.tasks;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.test.TestCondition;
import org.apache.kafka.test.TestUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.helpers.NOPLogger;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fetch loops' base: a round that throws (an Error too) is reported and backed off without ending the thread,
 * a wait ends on new work or shutdown (a wake during a round is not lost, one from before a round does not cut
 * the backoff after it), and shutdown is Kafka's initiate-then-await, with a bounded wait for a thread stuck in its
 * round.
 */
@Timeout(30)
class FetcherThreadTest {
    /** Long enough that a test finishing in time shows the wait was ended early. */
    private static final long LONG_MS = 60_000;

    private TestLoop loop;

    /** Runs the rounds the test queues; with none queued, waits for work for {@code LONG_MS}. */
    private static final class TestLoop extends FetcherThread {
        final BlockingQueue<Runnable> rounds = new LinkedBlockingQueue<>();
        final BlockingQueue<String> events = new LinkedBlockingQueue<>();
        final AtomicInteger shutdownCallbacks = new AtomicInteger();
        final BackgroundTask liveness = BackgroundTask.loop("test-loop", 1_000, Time.SYSTEM,
                NOPLogger.NOP_LOGGER);
        volatile BackgroundTask closed;

        TestLoop(long backoffMs) {
            super("test-fetcher", "[test] ", backoffMs);
        }

        @Override
        protected void doRound() {
            Runnable round = rounds.poll();
            if (round == null) {
                waitForWork(LONG_MS);
                events.add("woken");
                return;
            }
            round.run();
        }

        @Override
        protected BackgroundTask openLiveness() {
            events.add("opened");
            return liveness;
        }

        @Override
        protected void closeLiveness(BackgroundTask task) {
            closed = task;
        }

        @Override
        protected void onShutdownInitiated() {
            shutdownCallbacks.incrementAndGet();
        }
    }

    @AfterEach
    void tearDown() {
        if (loop != null) {
            loop.shutdown();
        }
    }

    @Test
    void aRoundThatThrowsIsReportedAndBackedOffWithoutEndingTheThread() throws Exception {
        loop = new TestLoop(LONG_MS);
        CountDownLatch secondRound = new CountDownLatch(1);
        loop.rounds.add(() -> {
            throw new IllegalStateException("boom");
        });
        loop.rounds.add(secondRound::countDown);
        loop.start();
        assertEquals("opened", loop.events.poll(10, TimeUnit.SECONDS));
        waitFor(() -> loop.liveness.consecutiveFailures() == 1, "the failure reported");
        // backing off for LONG_MS: only a wake starts the next round
        assertFalse(secondRound.await(100, TimeUnit.MILLISECONDS), "the second round ran during the backoff");
        loop.wake();
        assertTrue(secondRound.await(10, TimeUnit.SECONDS));
        waitFor(() -> loop.liveness.consecutiveFailures() == 0, "the completed round reported");
        assertTrue(loop.isAlive());
        assertTrue(loop.liveness.health().lastError().contains("boom"), loop.liveness.health().lastError());
    }

    @Test
    void anErrorInARoundDoesNotEndTheThread() throws Exception {
        loop = new TestLoop(0);
        CountDownLatch after = new CountDownLatch(1);
        loop.rounds.add(() -> {
            throw new AssertionError("an Error");
        });
        loop.rounds.add(after::countDown);
        loop.start();
        assertTrue(after.await(10, TimeUnit.SECONDS));
        assertTrue(loop.isAlive());
        assertFalse(loop.isThreadFailed());
    }

    @Test
    void aWakeDuringARoundBeforeItsWaitIsNotLost() throws Exception {
        loop = new TestLoop(0);
        CountDownLatch inRound = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        loop.rounds.add(() -> { // a round that read its work, then waits for more, as the fetchers' rounds do
            inRound.countDown();
            awaitQuietly(release);
            loop.waitForWork(LONG_MS);
            loop.events.add("woken in the round");
        });
        loop.start();
        assertTrue(inRound.await(10, TimeUnit.SECONDS));
        loop.wake(); // after the round read its work: its wait must return at once
        release.countDown();
        assertEquals("opened", loop.events.poll(10, TimeUnit.SECONDS));
        assertEquals("woken in the round", loop.events.poll(10, TimeUnit.SECONDS));
    }

    @Test
    void aWakeFromBeforeARoundDoesNotCutTheBackoffAfterIt() throws Exception {
        loop = new TestLoop(LONG_MS);
        CountDownLatch secondRound = new CountDownLatch(1);
        loop.rounds.add(() -> {
            throw new IllegalStateException("unreachable");
        });
        loop.rounds.add(secondRound::countDown);
        loop.wake(); // work handed over before the first round, which takes it: not a reason to skip its backoff
        loop.start();
        waitFor(() -> loop.liveness.consecutiveFailures() == 1, "the failure reported");
        assertFalse(secondRound.await(300, TimeUnit.MILLISECONDS), "the backoff was cut short by a stale wake");
        loop.wake();
        assertTrue(secondRound.await(10, TimeUnit.SECONDS));
    }

    @Test
    void shutdownEndsAWaitAndTheThreadAndTellsTheSubclassOnce() throws Exception {
        loop = new TestLoop(0);
        loop.start();
        assertEquals("opened", loop.events.poll(10, TimeUnit.SECONDS));
        assertTrue(loop.initiateShutdown());
        assertFalse(loop.initiateShutdown(), "a second initiation is not one");
        assertTrue(loop.awaitShutdown(10_000));
        assertTrue(loop.isShutdownComplete());
        assertEquals(1, loop.shutdownCallbacks.get());
        assertNotNull(loop.closed, "the liveness was closed when the thread ended");
        loop.shutdown(); // again: nothing more happens
        assertEquals(1, loop.shutdownCallbacks.get());
    }

    @Test
    void awaitShutdownIsBoundedForAThreadStuckInItsRound() throws Exception {
        loop = new TestLoop(0);
        CountDownLatch release = startInABlockedRound();
        loop.initiateShutdown();
        assertFalse(loop.awaitShutdown(50), "the thread is still in its round");
        release.countDown();
        assertTrue(loop.awaitShutdown(10_000));
    }

    @Test
    void awaitShutdownNeedsAnInitiatedShutdown() {
        loop = new TestLoop(0);
        assertThrows(IllegalStateException.class, () -> loop.awaitShutdown(10));
    }

    @Test
    void aThreadNeverStartedShutsDownAtOnce() {
        loop = new TestLoop(0);
        loop.shutdown();
        assertTrue(loop.isShutdownInitiated());
        assertFalse(loop.isAlive());
    }

    /** Starts the loop with a first round that blocks until the returned latch is released; returns once in it. */
    private CountDownLatch startInABlockedRound() throws InterruptedException {
        CountDownLatch inRound = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        loop.rounds.add(() -> {
            inRound.countDown();
            awaitQuietly(release);
        });
        loop.start();
        assertTrue(inRound.await(10, TimeUnit.SECONDS));
        return release;
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void waitFor(TestCondition condition, String what) throws InterruptedException {
        TestUtils.waitForCondition(condition, 10_000, what);
    }
}
