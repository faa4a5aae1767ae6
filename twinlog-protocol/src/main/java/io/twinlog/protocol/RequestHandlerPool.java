package io.twinlog.protocol;

import com.yammer.metrics.core.Meter;
import io.twinlog.common.metrics.BrokerMetrics;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code num.io.threads} threads that take requests from the {@link RequestChannel} and run their handler.
 *
 * <p>An exception that escapes a handler is a bug or an unexpected storage failure, never the client's fault by
 * design; it is logged at ERROR and the client gets Kafka's error response for it, so one bad request cannot take a
 * handler thread or the broker down.
 *
 * <p>The pool can be resized while it runs ({@code num.io.threads} is a dynamic broker config): see {@link #resize}.
 */
public final class RequestHandlerPool implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RequestHandlerPool.class);

    private final int brokerId;
    private final RequestChannel channel;
    private final ApiRegistry registry;
    /** The handlers serving now, lowest number first; replaced whole under {@code this} by {@link #resize}. */
    private volatile List<Handler> handlers;
    /** Handlers told to stop that may still be finishing a request; {@link #close} waits for them too. */
    private final List<Handler> retiring = new ArrayList<>();
    /** Never reused, so that a thread still finishing its request never shares its name with a new one. */
    private int nextHandlerNumber;
    private boolean started;
    private volatile boolean running = true;
    private final Meter idle;

    public RequestHandlerPool(int brokerId, int numThreads, RequestChannel channel, ApiRegistry registry,
                              BrokerMetrics metrics) {
        this.brokerId = brokerId;
        this.channel = channel;
        this.registry = registry;
        // Kafka's: idle nanoseconds over all handler threads, read per nanosecond, i.e. the average idle fraction
        this.idle = metrics.group("kafka.server", "KafkaRequestHandlerPool")
                .newMeter("RequestHandlerAvgIdlePercent", "percent", TimeUnit.NANOSECONDS);
        this.handlers = List.copyOf(newHandlers(numThreads));
    }

    /** One handler thread with its own stop flag, so that a shrink stops just the threads it removes. */
    private final class Handler {
        private final Thread thread;
        private volatile boolean stopped;

        Handler(int number) {
            this.thread = new Thread(() -> runLoop(this), "twinlog-request-handler-" + brokerId + "-" + number);
            this.thread.setDaemon(true);
        }
    }

    private List<Handler> newHandlers(int count) {
        List<Handler> created = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            created.add(new Handler(nextHandlerNumber++));
        }
        return created;
    }

    public synchronized void start() {
        started = true;
        handlers.forEach(h -> h.thread.start());
    }

    /** The number of handler threads serving requests (those told to stop by a shrink no longer count). */
    public int threadCount() {
        return handlers.size();
    }

    /**
     * Sets the number of handler threads, for a dynamic {@code num.io.threads}. Growing starts new threads (if the
     * pool is started) whose numbers continue after the highest ever used. Shrinking stops the highest-numbered
     * threads: each finishes the request it is handling and takes no other, so no request is lost or handled twice,
     * and queued requests stay in the shared {@link RequestChannel} for the threads that remain. It does not wait
     * for the stopped threads to end. Kafka's limits on the change (at most double, at least half) are the
     * caller's to check.
     *
     * @throws IllegalArgumentException if {@code newThreads} is below 1
     * @throws IllegalStateException    if the pool is closed
     */
    public synchronized void resize(int newThreads) {
        if (newThreads < 1) {
            throw new IllegalArgumentException("A request handler pool needs at least 1 thread, not " + newThreads);
        }
        if (!running) {
            throw new IllegalStateException("The request handler pool of broker " + brokerId + " is closed");
        }
        List<Handler> current = handlers;
        int oldThreads = current.size();
        if (newThreads == oldThreads) {
            return;
        }
        retiring.removeIf(h -> !h.thread.isAlive());
        List<Handler> next;
        if (newThreads > oldThreads) {
            List<Handler> added = newHandlers(newThreads - oldThreads);
            next = new ArrayList<>(current);
            next.addAll(added);
            handlers = List.copyOf(next);
            if (started) {
                added.forEach(h -> h.thread.start());
            }
        } else {
            List<Handler> removed = current.subList(newThreads, oldThreads);
            handlers = List.copyOf(current.subList(0, newThreads));
            for (Handler h : removed) {
                h.stopped = true;
                retiring.add(h);
            }
        }
        log.info("Request handler threads of broker {}: {} -> {}", brokerId, oldThreads, newThreads);
    }

    private void runLoop(Handler self) {
        // the flag is read before taking a request, never between taking and handling it: a stopped thread
        // finishes what it took
        while (running && !self.stopped) {
            Request request;
            long waitStart = System.nanoTime();
            try {
                request = channel.poll(300);
            } catch (InterruptedException e) {
                return;
            }
            // divided by the live count, so that the meter stays an average fraction across a resize
            idle.mark((System.nanoTime() - waitStart) / Math.max(1, handlers.size()));
            if (request != null) {
                request.markDequeued();
                dispatch(request);
                request.markLocalComplete();
            }
        }
    }

    void dispatch(Request request) {
        if (request.isCustom()) {
            dispatchCustom(request);
            return;
        }
        ApiRegistry.Registration r = registry.registration(request.apiKey());
        try {
            if (r == null || !registry.supports(request.apiKey(), request.apiVersion())) {
                request.respond(request.errorResponse(new UnsupportedVersionException(
                        "Twinlog does not serve " + request.apiKey() + " version " + request.apiVersion())));
                return;
            }
            r.handler().handle(request);
        } catch (Throwable t) {
            // broad: whatever the handler threw, the request gets an error answer
            answerUnexpected(request, t);
        }
    }

    /** A handler threw: answered with the error's code, or the connection closed if even that cannot be built. */
    static void answerUnexpected(Request request, Throwable t) {
        log.error("Unexpected error handling {}; answering with an error response", request, t);
        try {
            request.respond(request.errorResponse(t));
        } catch (Throwable t2) {
            // broad: if even the error answer fails, the connection is closed so the client does not wait
            log.error("Could not build the error response for {}; closing the connection", request, t2);
            request.closeConnection();
        }
    }

    private void dispatchCustom(Request request) {
        CustomApiHeader h = request.customHeader();
        ApiRegistry.CustomRegistration r = registry.customRegistration(h.apiKey());
        if (r != null) {
            request.customName(r.name());
        }
        try {
            if (r == null || h.apiVersion() < r.minVersion() || h.apiVersion() > r.maxVersion()) {
                request.markUnsupportedVersion();
                log.info("Closing connection {}: {} (unsupported version)", request.connectionId(), request);
                request.closeConnection();
                return;
            }
            r.handler().handle(request);
        } catch (Throwable t) {
            // broad: a body that does not decode is the client's fault, anything else is ours; either way no partial
            // answer
            log.warn("Could not handle {}; closing the connection", request, t);
            request.closeConnection();
        }
    }

    @Override
    public void close() throws InterruptedException {
        List<Handler> all;
        synchronized (this) {
            running = false;
            all = new ArrayList<>(handlers);
            all.addAll(retiring);
        }
        for (Handler h : all) {
            h.thread.join(5_000);
        }
    }
}
