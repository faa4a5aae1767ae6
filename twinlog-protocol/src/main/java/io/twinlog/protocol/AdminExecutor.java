package io.twinlog.protocol;

import org.apache.kafka.common.errors.BrokerNotAvailableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Threads for requests that must wait — on ZooKeeper writes, on the metadata image showing them, on another broker
 * (topic and config changes, forwarding to the controller) — so the request handler threads that serve produce and
 * fetch never do. A handler wrapped by {@link #offRequestThreads} runs here unchanged and answers when it is done;
 * a failure is answered with its error code as on a request thread. A request still queued when its
 * {@link AdminDeadline} passes is answered REQUEST_TIMED_OUT when a thread takes it, and not executed.
 *
 * <p>The queue is bounded ({@code admin.queued.max.requests}): a request that does not fit is answered
 * REQUEST_TIMED_OUT at once, without being executed (decision 69). The threads are then stuck (on a ZooKeeper that
 * does not answer, on a controller) and a request queued behind so many would most likely pass its deadline
 * anyway; the error is retriable and defined for every API, where THROTTLING_QUOTA_EXCEEDED exists only for three
 * APIs from some versions on and tells the client it went over a rate of its own. The first refusal of a streak is
 * logged at WARN, the end of the streak at INFO with the count.
 */
public final class AdminExecutor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminExecutor.class);
    private final ThreadPoolExecutor pool;
    private final int threads;
    private final int maxQueued;
    /** Whether requests are being refused for a full queue, and how many since the streak began. */
    private final AtomicBoolean full = new AtomicBoolean();
    private final AtomicLong refusedInStreak = new AtomicLong();

    /**
     * @param threads   how many admin requests may wait at once; the others queue in order
     * @param maxQueued how many may queue; more are answered REQUEST_TIMED_OUT at once
     */
    public AdminExecutor(String namePrefix, int threads, int maxQueued) {
        if (threads < 1 || maxQueued < 1) {
            throw new IllegalArgumentException("An admin executor needs at least one thread and room for one queued "
                    + "request, not " + threads + " and " + maxQueued);
        }
        AtomicInteger count = new AtomicInteger();
        this.threads = threads;
        this.maxQueued = maxQueued;
        this.pool = new ThreadPoolExecutor(threads, threads, 0L, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(maxQueued), r -> {
            Thread t = new Thread(r, namePrefix + "-" + count.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
    }

    /** {@code handler}, run on these threads instead of the request thread that received the request. */
    public RequestHandler offRequestThreads(RequestHandler handler) {
        return request -> {
            try {
                execute(() -> run(handler, request));
            } catch (RejectedExecutionException e) {
                request.respond(request.errorResponse(pool.isShutdown()
                        ? new BrokerNotAvailableException("The broker is shutting down")
                        : new TimeoutException(e.getMessage())));
            }
        };
    }

    /**
     * Runs background admin work that answers no request itself (a topic auto-created for a Metadata request).
     *
     * @throws RejectedExecutionException when the broker is shutting down or the queue is full (saying which)
     */
    public void execute(Runnable task) {
        try {
            pool.execute(() -> {
                maybeEndFullStreak();
                task.run();
            });
        } catch (RejectedExecutionException e) {
            if (pool.isShutdown()) {
                throw e;
            }
            long refused = refusedInStreak.incrementAndGet();
            String why = "The broker's admin queue is full (" + maxQueued + " requests wait for its " + threads
                    + " admin threads, admin.queued.max.requests); not executed, retry later";
            if (full.compareAndSet(false, true)) {
                log.warn("{}: refusing admin requests until there is room (the threads are stuck, most likely on "
                        + "ZooKeeper or the controller)", why);
            } else {
                log.debug("{} ({} refused so far)", why, refused);
            }
            throw new RejectedExecutionException(why, e);
        }
    }

    /** Taken by a thread: the queue has room again, so a streak of refusals has ended. */
    private void maybeEndFullStreak() {
        if (full.compareAndSet(true, false)) {
            log.info("The admin queue has room again; {} admin requests were refused while it was full",
                    refusedInStreak.getAndSet(0));
        }
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
            // broad: whatever the handler threw, the request gets an error answer
            RequestHandlerPool.answerUnexpected(request, t);
        }
    }

    @Override
    public void close() throws InterruptedException {
        pool.shutdownNow();
        pool.awaitTermination(5, TimeUnit.SECONDS);
    }
}
