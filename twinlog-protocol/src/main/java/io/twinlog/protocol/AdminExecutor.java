package io.twinlog.protocol;

import org.apache.kafka.common.errors.BrokerNotAvailableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Threads for requests that must wait — on ZooKeeper writes, on the metadata image showing them, on another broker
 * (topic and config changes, forwarding to the controller) — so the request handler threads that serve produce and
 * fetch never do. A handler wrapped by {@link #offRequestThreads} runs here unchanged and answers when it is done;
 * a failure is answered with its error code as on a request thread. A request still queued when its
 * {@link AdminDeadline} passes is answered REQUEST_TIMED_OUT when a thread takes it, and not executed.
 */
public final class AdminExecutor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminExecutor.class);
    private final ExecutorService pool;

    /** @param threads how many admin requests may wait at once; the others queue in order */
    public AdminExecutor(String namePrefix, int threads) {
        AtomicInteger count = new AtomicInteger();
        this.pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, namePrefix + "-" + count.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
    }

    /** {@code handler}, run on these threads instead of the request thread that received the request. */
    public RequestHandler offRequestThreads(RequestHandler handler) {
        return request -> {
            try {
                pool.execute(() -> run(handler, request));
            } catch (RejectedExecutionException e) {
                request.respond(request.errorResponse(new BrokerNotAvailableException("The broker is shutting down")));
            }
        };
    }

    /**
     * Runs background admin work that answers no request itself (a topic auto-created for a Metadata request).
     *
     * @throws RejectedExecutionException when the broker is shutting down
     */
    public void execute(Runnable task) {
        pool.execute(task);
    }

    private static void run(RequestHandler handler, Request request) {
        AdminDeadline deadline = AdminDeadline.of(request);
        long now = System.nanoTime();
        if (deadline.hasPassed(now)) {
            TimeoutException timedOut = deadline.exception(now);
            log.info("{} not executed: {}", request, timedOut.getMessage());
            request.respond(request.errorResponse(timedOut));
            return;
        }
        try {
            handler.handle(request);
        } catch (Throwable t) {
            RequestHandlerPool.answerUnexpected(request, t);
        }
    }

    @Override
    public void close() throws InterruptedException {
        pool.shutdownNow();
        pool.awaitTermination(5, TimeUnit.SECONDS);
    }
}
