package io.twinlog.common.metrics;

import com.yammer.metrics.core.MetricsRegistry;
import io.twinlog.common.tasks.BackgroundTasks;
import org.apache.kafka.common.metrics.JmxReporter;
import org.apache.kafka.common.metrics.KafkaMetricsContext;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.metrics.FilteringJmxReporter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * One broker's metrics, in Kafka's two libraries as a Kafka broker keeps them: a Yammer registry for the broker's
 * own metrics ({@code kafka.server:type=BrokerTopicMetrics}, {@code kafka.network:type=RequestMetrics}, ...) and a
 * kafka-clients {@link Metrics} for what Kafka's client-side classes record (the listeners' selectors: connections,
 * failed authentications; the authorizer). Both are exported over JMX when {@code metric.reporters} lists Kafka's
 * {@link JmxReporter} (Kafka 4's default), with {@code metrics.jmx.include}/{@code exclude} applied to both, and both
 * are read by the Prometheus endpoint.
 *
 * <p>The registry is the broker's own rather than Kafka's JVM-wide default (decision 53): several brokers share a
 * JVM in the quickstart and the tests, and each must report its own. Such a JVM turns JMX off
 * ({@code metric.reporters=}), since JMX names have no room for the broker.
 */
public final class BrokerMetrics implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BrokerMetrics.class);
    /** The JMX domain of the kafka-clients metrics of a broker, as Kafka's ({@code kafka.server:type=...}). */
    public static final String JMX_PREFIX = "kafka.server";

    private final int brokerId;
    private final MetricsRegistry registry = new MetricsRegistry();
    private final Metrics kafkaMetrics;
    private final FilteringJmxReporter yammerJmx;
    private final BackgroundTasks backgroundTasks = new BackgroundTasks(group(BackgroundTasks.GROUP,
            BackgroundTasks.TYPE));

    /**
     * @param reporters the {@code metric.reporters} instances, configured; a {@link JmxReporter} among them also
     *                  exports the Yammer registry
     */
    public BrokerMetrics(int brokerId, MetricConfig config, List<MetricsReporter> reporters,
                         Map<String, ?> jmxFilterConfigs, Time time) {
        this.brokerId = brokerId;
        this.kafkaMetrics = new Metrics(config, reporters, time, true,
                new KafkaMetricsContext(JMX_PREFIX, Map.of("kafka.broker.id", Integer.toString(brokerId))));
        if (reporters.stream().anyMatch(JmxReporter.class::isInstance)) {
            Predicate<String> mbeans = JmxReporter.compilePredicate(jmxFilterConfigs);
            yammerJmx = new FilteringJmxReporter(registry, name -> mbeans.test(name.getMBeanName()));
            yammerJmx.start();
            log.info("Broker {} exports its metrics over JMX (Kafka's MBean names)", brokerId);
        } else {
            yammerJmx = null;
        }
    }

    /** Metrics for tests and tools: no reporter, Kafka's default sampling. */
    public static BrokerMetrics unreported(int brokerId, Time time) {
        return new BrokerMetrics(brokerId, new MetricConfig(), List.of(), Map.of(), time);
    }

    /** Kafka's sampling settings ({@code metrics.num.samples}, {@code metrics.sample.window.ms}, recording level). */
    public static MetricConfig metricConfig(int samples, long windowMs, String recordingLevel) {
        return new MetricConfig().samples(samples).timeWindow(windowMs, TimeUnit.MILLISECONDS)
                .recordLevel(Sensor.RecordingLevel.forName(recordingLevel));
    }

    public int brokerId() {
        return brokerId;
    }

    /** The group of MBean type {@code type} in domain {@code group}: {@code group("kafka.server", "ReplicaManager")}. */
    public MetricsGroup group(String group, String type) {
        return new MetricsGroup(registry, group, type);
    }

    /** This broker's Yammer registry, for Kafka classes that take one and for exporters. */
    public MetricsRegistry registry() {
        return registry;
    }

    /** This broker's background tasks, each with the age of its last success (decision 63). */
    public BackgroundTasks backgroundTasks() {
        return backgroundTasks;
    }

    /** This broker's kafka-clients metrics, for Kafka classes that record into them (selectors, authorizer). */
    public Metrics kafkaMetrics() {
        return kafkaMetrics;
    }

    @Override
    public void close() {
        if (yammerJmx != null) {
            yammerJmx.shutdown();
        }
        registry.shutdown();
        kafkaMetrics.close();
    }
}
