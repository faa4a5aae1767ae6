package io.twinlog.common.metrics;

import com.yammer.metrics.core.Gauge;
import com.yammer.metrics.core.Histogram;
import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.MetricName;
import com.yammer.metrics.core.MetricsRegistry;
import com.yammer.metrics.core.Timer;
import org.apache.kafka.server.metrics.KafkaYammerMetrics;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The metrics of one Kafka MBean type ({@code kafka.server:type=ReplicaManager}, ...) in one broker's registry:
 * Kafka's {@code KafkaMetricsGroup}, but on a registry of the caller's instead of the JVM-wide default, so that
 * brokers sharing a JVM (the quickstart, the tests) keep their metrics apart. Names are built by Kafka's own
 * {@link KafkaYammerMetrics#getMetricName}, so MBean names are exactly Kafka's: tags in the order given, empty tag
 * values left out.
 */
public final class MetricsGroup {
    private final MetricsRegistry registry;
    private final String group;
    private final String type;

    MetricsGroup(MetricsRegistry registry, String group, String type) {
        this.registry = registry;
        this.group = group;
        this.type = type;
    }

    public MetricName metricName(String name, Map<String, String> tags) {
        return KafkaYammerMetrics.getMetricName(group, type, name, new LinkedHashMap<>(tags));
    }

    /** A gauge read from {@code value} whenever it is reported; an existing gauge of that name is kept. */
    public <T> Gauge<T> newGauge(String name, Supplier<T> value) {
        return newGauge(name, value, Map.of());
    }

    public <T> Gauge<T> newGauge(String name, Supplier<T> value, Map<String, String> tags) {
        return registry.newGauge(metricName(name, tags), new Gauge<T>() {
            @Override
            public T value() {
                return value.get();
            }
        });
    }

    /** A meter (count and 1/5/15-minute rates per second), e.g. {@code MessagesInPerSec} of event type messages. */
    public Meter newMeter(String name, String eventType) {
        return newMeter(name, eventType, Map.of());
    }

    public Meter newMeter(String name, String eventType, Map<String, String> tags) {
        return registry.newMeter(metricName(name, tags), eventType, TimeUnit.SECONDS);
    }

    /**
     * A meter whose rate is per {@code rateUnit}: Kafka's idle-percent meters mark idle nanoseconds and are read per
     * nanosecond, which makes their rates the idle fraction.
     */
    public Meter newMeter(String name, String eventType, TimeUnit rateUnit) {
        return registry.newMeter(metricName(name, Map.of()), eventType, rateUnit);
    }

    /** A histogram with Kafka's reservoir (biased: exponentially decaying, as Kafka's request time histograms). */
    public Histogram newHistogram(String name, Map<String, String> tags) {
        return registry.newHistogram(metricName(name, tags), true);
    }

    /** A timer in milliseconds with a per-second rate, as Kafka's {@code LeaderElectionRateAndTimeMs}. */
    public Timer newTimer(String name) {
        return registry.newTimer(metricName(name, Map.of()), TimeUnit.MILLISECONDS, TimeUnit.SECONDS);
    }

    public void removeMetric(String name) {
        removeMetric(name, Map.of());
    }

    public void removeMetric(String name, Map<String, String> tags) {
        registry.removeMetric(metricName(name, tags));
    }
}
