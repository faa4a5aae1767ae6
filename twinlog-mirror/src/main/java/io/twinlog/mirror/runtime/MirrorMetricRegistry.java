package io.twinlog.mirror.runtime;

import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.MetricName;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.metrics.MetricsGroup;
import io.twinlog.common.mirror.MirrorPartitionState;
import org.apache.kafka.common.utils.Time;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Where the mirror metrics of one broker are registered: the broker's Yammer registry, under the five Kafka-style
 * groups of {@link MirrorMetrics}. Every metric registered through it is named in a list its owner keeps, so that
 * the owner removes exactly its own when it goes ({@link #remove}).
 */
final class MirrorMetricRegistry {
    static final String GROUP = "kafka.server";
    static final String CLIENT_ID = "MirrorReplica";

    final BrokerMetrics metrics;
    final Time time;
    final MetricsGroup metadataManager;
    final MetricsGroup fetcherManager;
    final MetricsGroup fetcherStats;
    final MetricsGroup clusterMirror;
    final MetricsGroup clusterMirrorPartition;

    MirrorMetricRegistry(BrokerMetrics metrics, Time time) {
        this.metrics = metrics;
        this.time = time;
        this.metadataManager = metrics.group(GROUP, "MirrorMetadataManager");
        this.fetcherManager = metrics.group(GROUP, "MirrorFetcherManager");
        this.fetcherStats = metrics.group(GROUP, "FetcherStats");
        this.clusterMirror = metrics.group(GROUP, "ClusterMirror");
        this.clusterMirrorPartition = metrics.group(GROUP, "ClusterMirrorPartition");
    }

    /** A state gauge's name (KIP-1279's): {@code LOG_TRUNCATION} → {@code LogTruncationPartitionState}. */
    static String stateMetricName(MirrorPartitionState state) {
        StringBuilder out = new StringBuilder();
        for (String word : state.name().split("_")) {
            out.append(word.charAt(0)).append(word.substring(1).toLowerCase(Locale.ROOT));
        }
        return out.append("PartitionState").toString();
    }

    <T> void gauge(List<MetricName> names, MetricsGroup group, String name, Map<String, String> tags,
                   Supplier<T> value) {
        MetricName metricName = group.metricName(name, tags);
        metrics.registry().removeMetric(metricName); // one left by an earlier owner would keep its old reader
        group.newGauge(name, value, tags);
        names.add(metricName);
    }

    Meter meter(List<MetricName> names, MetricsGroup group, String name, String eventType, Map<String, String> tags) {
        names.add(group.metricName(name, tags));
        return group.newMeter(name, eventType, tags);
    }

    void remove(List<MetricName> names) {
        names.forEach(metrics.registry()::removeMetric);
        names.clear();
    }
}
