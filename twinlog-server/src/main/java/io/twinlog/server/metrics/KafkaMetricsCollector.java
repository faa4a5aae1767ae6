package io.twinlog.server.metrics;

import com.yammer.metrics.core.Counter;
import com.yammer.metrics.core.Gauge;
import com.yammer.metrics.core.Histogram;
import com.yammer.metrics.core.Metered;
import com.yammer.metrics.core.Metric;
import com.yammer.metrics.core.MetricName;
import com.yammer.metrics.core.Sampling;
import com.yammer.metrics.core.Summarizable;
import com.yammer.metrics.core.Timer;
import com.yammer.metrics.stats.Snapshot;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Quantile;
import io.prometheus.metrics.model.snapshots.Quantiles;
import io.twinlog.common.metrics.BrokerMetrics;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One broker's metrics, both libraries, as Prometheus families, named the way the usual JMX-exporter rules for
 * Kafka name them (docs/operations.md), so dashboards built on those rules read Twinlog too:
 * <ul>
 *   <li>Yammer {@code kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t}: a meter becomes the
 *   counter {@code kafka_server_brokertopicmetrics_messagesin_total{topic="t"}} (its count; "PerSec" dropped,
 *   Prometheus takes the rate); a gauge {@code kafka_server_replicamanager_underreplicatedpartitions}; a timer or
 *   histogram ({@code kafka.network:type=RequestMetrics,name=TotalTimeMs,request=Produce}) a summary with
 *   quantiles, {@code _count} and {@code _sum}; an idle-percent meter ({@code RequestHandlerAvgIdlePercent}) the
 *   gauge of its one-minute rate, the idle fraction. Every MBean key but type and name is a label, in order.</li>
 *   <li>kafka-clients {@code failed-authentication-total} of group {@code socket-server-metrics}: the counter
 *   {@code kafka_server_socket_server_metrics_failed_authentication_total}; other numeric metrics gauges.</li>
 * </ul>
 */
final class KafkaMetricsCollector implements MultiCollector {
    private static final Logger log = LoggerFactory.getLogger(KafkaMetricsCollector.class);
    private static final double[] QUANTILES = {0.5, 0.75, 0.95, 0.98, 0.99, 0.999};

    private final BrokerMetrics metrics;

    KafkaMetricsCollector(BrokerMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public MetricSnapshots collect() {
        PrometheusFamilies families = new PrometheusFamilies();
        metrics.registry().allMetrics().forEach((name, metric) -> addYammer(families, name, metric));
        for (KafkaMetric metric : metrics.kafkaMetrics().metrics().values()) {
            addKafka(families, metric);
        }
        return families.snapshots();
    }

    private static void addYammer(PrometheusFamilies families, MetricName name, Metric metric) {
        String help = name.getMBeanName();
        Labels labels = PrometheusFamilies.labels(mbeanTags(name.getMBeanName()));
        String base = PrometheusFamilies.name(name.getGroup(), name.getType(), name.getName());
        try {
            if (metric instanceof Gauge<?> gauge) {
                Object value = gauge.value();
                if (value instanceof Number n) {
                    families.gauge(base, help, labels, n.doubleValue());
                } else if (value instanceof Boolean b) {
                    families.gauge(base, help, labels, b ? 1 : 0);
                }
            } else if (metric instanceof Timer || metric instanceof Histogram) {
                Snapshot snapshot = ((Sampling) metric).getSnapshot();
                Quantiles.Builder quantiles = Quantiles.builder();
                for (double q : QUANTILES) {
                    quantiles.quantile(new Quantile(q, snapshot.getValue(q)));
                }
                long count = metric instanceof Timer t ? t.count() : ((Histogram) metric).count();
                families.summary(base, help, labels, count, ((Summarizable) metric).sum(), quantiles.build());
            } else if (metric instanceof Metered meter && meter.rateUnit() == TimeUnit.NANOSECONDS) {
                // an idle-percent meter (idle nanoseconds read per nanosecond): its rate is the fraction
                families.gauge(base, help, labels, meter.oneMinuteRate());
            } else if (metric instanceof Metered meter) {
                String counter = PrometheusFamilies.name(name.getGroup(), name.getType(),
                        stripSuffix(name.getName(), "PerSec"));
                families.counter(counter, help, labels, meter.count());
            } else if (metric instanceof Counter counter) {
                families.gauge(base, help, labels, counter.count());
            }
        } catch (RuntimeException e) {
            // a gauge whose source is closing (a partition moving away): left out of this scrape only
            log.debug("Could not read metric {} for Prometheus", name.getMBeanName(), e);
        }
    }

    private static void addKafka(PrometheusFamilies families, KafkaMetric metric) {
        Object value;
        try {
            value = metric.metricValue();
        } catch (RuntimeException e) {
            // broad: a metric's value function may throw anything; the scrape goes on without it
            log.debug("Could not read metric {} for Prometheus", metric.metricName(), e);
            return;
        }
        if (!(value instanceof Number n)) {
            return;
        }
        var name = metric.metricName(); // Kafka's MetricName; the Yammer one is imported
        Labels labels = PrometheusFamilies.labels(name.tags());
        String help = name.description() == null || name.description().isEmpty() ? name.name() : name.description();
        if (name.name().endsWith("-total")) {
            families.counter(PrometheusFamilies.name(BrokerMetrics.JMX_PREFIX, name.group(),
                    stripSuffix(name.name(), "-total")), help, labels, n.doubleValue());
        } else {
            families.gauge(PrometheusFamilies.name(BrokerMetrics.JMX_PREFIX, name.group(), name.name()), help, labels,
                    n.doubleValue());
        }
    }

    /** The MBean's keys after type and name, in order: {@code ...,name=X,topic=t,partition=0} → topic, partition. */
    static Map<String, String> mbeanTags(String mbeanName) {
        Map<String, String> tags = new LinkedHashMap<>();
        int colon = mbeanName.indexOf(':');
        for (String pair : mbeanName.substring(colon + 1).split(",")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                String key = pair.substring(0, eq);
                if (!key.equals("type") && !key.equals("name")) {
                    tags.put(key, unquote(pair.substring(eq + 1)));
                }
            }
        }
        return tags;
    }

    private static String unquote(String v) {
        return v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"") ? v.substring(1, v.length() - 1) : v;
    }

    private static String stripSuffix(String s, String suffix) {
        return s.endsWith(suffix) && s.length() > suffix.length() ? s.substring(0, s.length() - suffix.length()) : s;
    }
}
