package io.twinlog.protocol;

import com.yammer.metrics.core.Histogram;
import com.yammer.metrics.core.Meter;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.metrics.MetricsGroup;
import org.apache.kafka.common.protocol.Errors;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Kafka's {@code kafka.network:type=RequestMetrics} per request type: {@code RequestsPerSec} (also per version),
 * {@code ErrorsPerSec} per error, and the time a request spent in each stage, in milliseconds:
 * {@code RequestQueueTimeMs} (read, waiting for a handler thread), {@code LocalTimeMs} (in its handler),
 * {@code RemoteTimeMs} (waiting for others: acks=all, a long poll, the controller), {@code ThrottleTimeMs} (the
 * client quota throttle its response carried), {@code ResponseQueueTimeMs}
 * (answered, waiting for its network thread), {@code ResponseSendTimeMs} (being written) and
 * {@code TotalTimeMs}. Fetches are also counted as {@code FetchConsumer} or {@code FetchFollower}, as Kafka does.
 */
public final class RequestMetrics {
    private final MetricsGroup group;
    private final Map<String, Stages> stages = new ConcurrentHashMap<>();
    private final Map<String, Meter> requests = new ConcurrentHashMap<>();
    private final Map<String, Meter> errors = new ConcurrentHashMap<>();

    public RequestMetrics(BrokerMetrics metrics) {
        this.group = metrics.group("kafka.network", "RequestMetrics");
    }

    private record Stages(Histogram requestQueue, Histogram local, Histogram remote, Histogram throttle,
                          Histogram responseQueue, Histogram responseSend, Histogram total) {
    }

    /** A request's response was written (or none was due): records every stage. */
    void record(Request request, long completedNanos) {
        String name = request.metricsName();
        record(name, request, completedNanos);
        if (request.fetchKind() != null) {
            record(request.fetchKind(), request, completedNanos);
        }
        Map<Errors, Integer> errorCounts = request.errorCounts();
        if (errorCounts != null) {
            errorCounts.forEach((error, count) -> errors.computeIfAbsent(name + '\0' + error.name(),
                    k -> group.newMeter("ErrorsPerSec", "requests", tags(name, "error", error.name()))).mark(count));
        }
    }

    private void record(String name, Request request, long completedNanos) {
        String version = request.versionForMetrics();
        requests.computeIfAbsent(name + '\0' + version, k -> group.newMeter("RequestsPerSec", "requests",
                tags(name, "version", version))).mark();
        Stages s = stages.computeIfAbsent(name, this::newStages);
        long received = request.receivedNanos();
        long dequeued = atLeast(request.dequeuedNanos(), received);
        long localDone = atLeast(request.localCompleteNanos(), dequeued);
        long ready = atLeast(request.responseReadyNanos(), localDone);
        long sendStart = atLeast(request.responseDequeuedNanos(), ready);
        long done = atLeast(completedNanos, sendStart);
        s.requestQueue.update(ms(dequeued - received));
        s.local.update(ms(localDone - dequeued));
        s.remote.update(ms(ready - localDone));
        s.throttle.update(request.throttleTimeMs());
        s.responseQueue.update(ms(sendStart - ready));
        s.responseSend.update(ms(done - sendStart));
        s.total.update(ms(done - received));
    }

    private Stages newStages(String name) {
        Map<String, String> tags = Map.of("request", name);
        return new Stages(group.newHistogram("RequestQueueTimeMs", tags), group.newHistogram("LocalTimeMs", tags),
                group.newHistogram("RemoteTimeMs", tags), group.newHistogram("ThrottleTimeMs", tags),
                group.newHistogram("ResponseQueueTimeMs", tags),
                group.newHistogram("ResponseSendTimeMs", tags), group.newHistogram("TotalTimeMs", tags));
    }

    /** A stage not reached (no response sent, a stamp missing) takes the time of the one before it. */
    private static long atLeast(long stamp, long previous) {
        return stamp == 0 ? previous : Math.max(stamp, previous);
    }

    /** Rounded, as Kafka does: a stage of 0.6 ms reads 1, not 0. */
    private static long ms(long nanos) {
        return Math.round(nanos / 1_000_000.0);
    }

    private static Map<String, String> tags(String request, String key, String value) {
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("request", request);
        tags.put(key, value);
        return tags;
    }
}
