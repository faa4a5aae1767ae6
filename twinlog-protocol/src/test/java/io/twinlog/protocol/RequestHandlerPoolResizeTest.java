package io.twinlog.protocol;

import io.twinlog.common.metrics.BrokerMetrics;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code num.io.threads} changed live: the handler pool grows and shrinks while clients keep sending, and every
 * request is handled and answered exactly once; a stopped thread finishes the request it holds.
 */
@Timeout(120)
class RequestHandlerPoolResizeTest {
    private static final int BROKER_ID = 11;
    private static final String HANDLER_THREADS = "twinlog-request-handler-" + BROKER_ID + "-";
    private static final short VERSION = 3;
    private static final String BLOCKING_CLIENT = "blocking";
    private static final int CLIENTS = 4;

    /** How many times each request was handled, by connection and correlation id. */
    private final Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
    private final AtomicInteger answered = new AtomicInteger();
    private final AtomicInteger blockedInside = new AtomicInteger();
    private final CountDownLatch release = new CountDownLatch(1);
    private volatile boolean streaming = true;
    private LoopbackServer broker;

    @AfterEach
    void stop() throws Exception {
        streaming = false;
        release.countDown();
        if (broker != null) {
            broker.close();
        }
    }

    private ApiRegistry registry() {
        return ApiRegistry.builder().add(ApiKeys.API_VERSIONS, this::answer).build();
    }

    private void answer(Request request) throws InterruptedException {
        handled.computeIfAbsent(request.connectionId() + "/" + request.header().correlationId(),
                k -> new AtomicInteger()).incrementAndGet();
        if (request.clientId().equals(BLOCKING_CLIENT)) {
            blockedInside.incrementAndGet();
            release.await();
        } else {
            LockSupport.parkNanos(100_000); // some work, so that a shrink often finds a thread inside a request
        }
        request.respond(new ApiVersionsResponse(new ApiVersionsResponseData()));
    }

    @Test
    void resizeUnderAStreamOfRequestsAnswersEachOnce() throws Exception {
        broker = LoopbackServer.plaintext(BROKER_ID, 2, 2, registry());
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
        try {
            List<Future<Integer>> sent = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                sent.add(clients.submit(this::streamRequests));
            }
            awaitMoreAnswers();
            assertThreads(2);

            broker.handlers.resize(4);
            assertThreads(4);
            awaitMoreAnswers();

            broker.handlers.resize(1);
            assertThreads(1);
            awaitMoreAnswers();

            streaming = false;
            int total = 0;
            for (Future<Integer> f : sent) {
                total += f.get(30, TimeUnit.SECONDS);
            }
            assertEquals(total, answered.get());
            assertEquals(total, handled.size(), "every request sent was handled");
            handled.forEach((request, times) -> assertEquals(1, times.get(), request + " handled once"));
        } finally {
            streaming = false;
            clients.shutdownNow();
        }
    }

    /** One connection sending a request after another until told to stop; returns how many it sent. */
    private int streamRequests() throws IOException {
        try (Socket socket = broker.connect()) {
            int correlationId = 0;
            while (streaming) {
                correlationId++;
                Frames.send(socket, new ApiVersionsRequest.Builder().build(VERSION), "streaming", correlationId);
                Frames.Answer<ApiVersionsResponse> answer = Frames.receive(socket, ApiKeys.API_VERSIONS, VERSION);
                assertEquals(correlationId, answer.correlationId(), "answers come once each, in order");
                answered.incrementAndGet();
            }
            return correlationId;
        }
    }

    @Test
    void shrinkingLetsBusyHandlersFinishTheirRequest() throws Exception {
        broker = LoopbackServer.plaintext(BROKER_ID, 2, 1, registry());
        try (Socket first = broker.connect(); Socket second = broker.connect()) {
            Frames.send(first, new ApiVersionsRequest.Builder().build(VERSION), BLOCKING_CLIENT, 1);
            Frames.send(second, new ApiVersionsRequest.Builder().build(VERSION), BLOCKING_CLIENT, 1);
            Poll.until("both handler threads inside a request", 2, blockedInside::get);

            broker.handlers.resize(1);
            assertEquals(1, broker.handlers.threadCount());
            release.countDown();

            assertEquals(1, Frames.receive(first, ApiKeys.API_VERSIONS, VERSION).correlationId());
            assertEquals(1, Frames.receive(second, ApiKeys.API_VERSIONS, VERSION).correlationId());
            Poll.until("live handler threads", Set.of(HANDLER_THREADS + "0"), () -> Poll.threadsNamed(HANDLER_THREADS));
            Frames.send(first, new ApiVersionsRequest.Builder().build(VERSION), "after", 2);
            assertEquals(2, Frames.receive(first, ApiKeys.API_VERSIONS, VERSION).correlationId());
        }
    }

    @Test
    void threadNumbersContinuePastEveryNumberUsed() throws Exception {
        BrokerMetrics metrics = BrokerMetrics.unreported(BROKER_ID, Time.SYSTEM);
        RequestHandlerPool pool = new RequestHandlerPool(BROKER_ID, 2, new RequestChannel(1), registry(), metrics);
        try {
            pool.start();
            assertNames(Set.of(0, 1));
            pool.resize(4);
            assertNames(Set.of(0, 1, 2, 3));
            pool.resize(1);
            assertNames(Set.of(0));
            pool.resize(2);
            assertNames(Set.of(0, 4));
            assertThrows(IllegalArgumentException.class, () -> pool.resize(0));
            assertEquals(2, pool.threadCount());
        } finally {
            pool.close();
            metrics.close();
        }
        assertTrue(Poll.threadsNamed(HANDLER_THREADS).isEmpty(), "close ends every handler thread");
        assertThrows(IllegalStateException.class, () -> pool.resize(3));
    }

    private void assertThreads(int count) {
        assertEquals(count, broker.handlers.threadCount());
        Poll.until("live handler threads", count, () -> Poll.threadsNamed(HANDLER_THREADS).size());
    }

    private static void assertNames(Set<Integer> numbers) {
        Set<String> names = new TreeSet<>();
        numbers.forEach(n -> names.add(HANDLER_THREADS + n));
        Poll.until("live handler threads", names, () -> Poll.threadsNamed(HANDLER_THREADS));
    }

    /** Waits for 200 more answers, so that each phase of a test runs under load. */
    private void awaitMoreAnswers() {
        int target = answered.get() + 200;
        Poll.until("200 more answers", true, () -> answered.get() >= target);
    }
}
