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
 */
public final class RequestHandlerPool implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RequestHandlerPool.class);

    private final RequestChannel channel;
    private final ApiRegistry registry;
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running = true;
    private final int numThreads;
    private final Meter idle;

    public RequestHandlerPool(int brokerId, int numThreads, RequestChannel channel, ApiRegistry registry,
                              BrokerMetrics metrics) {
        this.channel = channel;
        this.registry = registry;
        this.numThreads = numThreads;
        // Kafka's: idle nanoseconds over all handler threads, read per nanosecond, i.e. the average idle fraction
        this.idle = metrics.group("kafka.server", "KafkaRequestHandlerPool")
                .newMeter("RequestHandlerAvgIdlePercent", "percent", TimeUnit.NANOSECONDS);
        for (int i = 0; i < numThreads; i++) {
            Thread t = new Thread(this::runLoop, "twinlog-request-handler-" + brokerId + "-" + i);
            t.setDaemon(true);
            threads.add(t);
        }
    }

    public void start() {
        threads.forEach(Thread::start);
    }

    private void runLoop() {
        while (running) {
            Request request;
            long waitStart = System.nanoTime();
            try {
                request = channel.poll(300);
            } catch (InterruptedException e) {
                return;
            }
            idle.mark((System.nanoTime() - waitStart) / numThreads);
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
            answerUnexpected(request, t);
        }
    }

    /** A handler threw: answered with the error's code, or the connection closed if even that cannot be built. */
    static void answerUnexpected(Request request, Throwable t) {
        log.error("Unexpected error handling {}; answering with an error response", request, t);
        try {
            request.respond(request.errorResponse(t));
        } catch (Throwable t2) {
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
            // a body that does not decode is the client's fault; anything else is ours — either way no partial answer
            log.warn("Could not handle {}: {}; closing the connection", request, t.toString());
            request.closeConnection();
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        for (Thread t : threads) {
            t.join(5_000);
        }
    }
}
