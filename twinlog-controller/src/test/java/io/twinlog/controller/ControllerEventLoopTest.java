package io.twinlog.controller;

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every task runs on the one thread in order, and every request's caller is answered, whatever happens. */
@Timeout(60)
class ControllerEventLoopTest {
    private final ControllerEventLoop loop = new ControllerEventLoop(7, Time.SYSTEM, "[test] ");

    @AfterEach
    void close() throws InterruptedException {
        loop.close();
    }

    @Test
    void tasksRunInOrderOnTheControllerThread() throws Exception {
        List<String> ran = new CopyOnWriteArrayList<>();
        CompletableFuture<String> last = new CompletableFuture<>();
        loop.run("a", () -> ran.add("a " + Thread.currentThread().getName()));
        loop.run("b", () -> ran.add("b"));
        loop.submit("c", last, ApiError::message, () -> last.complete("c"));
        assertEquals("c", last.get(10, TimeUnit.SECONDS));
        assertEquals("b", ran.get(1));
        assertTrue(ran.get(0).startsWith("a twinlog-controller-7-"), ran.get(0));
    }

    @Test
    void aFailingRequestIsAnsweredWithAnError() throws Exception {
        CompletableFuture<ApiError> result = new CompletableFuture<>();
        loop.submit("boom", result, error -> error, () -> {
            throw new IllegalStateException("bug");
        });
        ApiError answer = result.get(10, TimeUnit.SECONDS);
        assertEquals(Errors.UNKNOWN_SERVER_ERROR, answer.error());
        assertTrue(answer.message().contains("bug"), answer.message());
        CountDownLatch after = new CountDownLatch(1);
        loop.run("next", after::countDown);
        assertTrue(after.await(10, TimeUnit.SECONDS), "the loop goes on after a failure");
    }

    @Test
    void aRequestAnsweredWhileQueuedIsNotRun() throws Exception {
        CountDownLatch hold = new CountDownLatch(1);
        loop.run("hold", () -> {
            try {
                hold.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        List<String> ran = new CopyOnWriteArrayList<>();
        CompletableFuture<String> timedOut = new CompletableFuture<>();
        loop.submit("late", timedOut, ApiError::message, () -> ran.add("late"));
        timedOut.complete("timed out"); // the handler's deadline passed
        CompletableFuture<String> next = new CompletableFuture<>();
        loop.submit("next", next, ApiError::message, () -> next.complete("next"));
        hold.countDown();
        assertEquals("next", next.get(10, TimeUnit.SECONDS));
        assertEquals(List.of(), ran);
    }

    @Test
    void aRequestAfterCloseIsAnsweredNotController() throws Exception {
        loop.close();
        CompletableFuture<ApiError> result = new CompletableFuture<>();
        loop.submit("late", result, error -> error, () -> result.complete(ApiError.NONE));
        assertEquals(Errors.NOT_CONTROLLER, result.get(10, TimeUnit.SECONDS).error());
    }

    @Test
    void aDeferredTaskRunsOnceAtTheEarlierDeadlineOfItsTag() throws Exception {
        long start = System.nanoTime();
        List<String> ran = new CopyOnWriteArrayList<>();
        CompletableFuture<Long> ranAfter = new CompletableFuture<>();
        loop.schedule("tag", 200, () -> ran.add("first"));
        loop.schedule("tag", 60_000, () -> {
            ran.add("second");
            ranAfter.complete(System.nanoTime() - start);
        });
        long elapsedNanos = ranAfter.get(10, TimeUnit.SECONDS);
        assertTrue(elapsedNanos >= TimeUnit.MILLISECONDS.toNanos(200), "ran after " + elapsedNanos + " ns");
        assertEquals(List.of("second"), ran, "the later scheduling replaces the task, keeping the earlier deadline");
    }
}
