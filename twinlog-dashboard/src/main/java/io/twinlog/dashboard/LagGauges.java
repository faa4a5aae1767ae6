package io.twinlog.dashboard;

import com.yammer.metrics.core.Gauge;
import com.yammer.metrics.core.Metric;
import com.yammer.metrics.core.MetricName;
import com.yammer.metrics.core.MetricsRegistry;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.server.metrics.KafkaYammerMetrics;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * A mirror partition's lag gauges as this broker publishes them in its Yammer registry
 * ({@code kafka.server:type=ClusterMirrorPartition,name=LagSeconds|LagRecords|LagBytes,mirror=M,topic=T,partition=P}).
 * They exist on the partition's destination leader only: for other partitions the value is absent and the dashboard
 * says which broker has it. A gauge that reads -1 (the lag is not known) is absent too.
 */
final class LagGauges {
    static final String GROUP = "kafka.server";
    static final String TYPE = "ClusterMirrorPartition";
    static final String LAG_SECONDS = "LagSeconds";
    static final String LAG_BYTES = "LagBytes";

    private final MetricsRegistry registry;

    LagGauges(MetricsRegistry registry) {
        this.registry = registry;
    }

    OptionalDouble value(String name, String mirror, TopicPartition tp) {
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("mirror", mirror);
        tags.put("topic", tp.topic());
        tags.put("partition", Integer.toString(tp.partition()));
        MetricName metricName = KafkaYammerMetrics.getMetricName(GROUP, TYPE, name, new LinkedHashMap<>(tags));
        Metric metric = registry.allMetrics().get(metricName);
        if (metric instanceof Gauge<?> gauge && gauge.value() instanceof Number n && n.doubleValue() >= 0) {
            return OptionalDouble.of(n.doubleValue());
        }
        return OptionalDouble.empty();
    }
}
