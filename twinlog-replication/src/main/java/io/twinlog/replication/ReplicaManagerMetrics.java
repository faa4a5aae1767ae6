package io.twinlog.replication;

import com.yammer.metrics.core.Meter;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.metrics.MetricsGroup;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.storage.internals.log.UnifiedLog;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * What Kafka's {@code ReplicaManager} and its logs report, under Kafka's MBean names and meanings:
 * {@code kafka.server:type=ReplicaManager} (partition and leader counts, under-replicated and under-min-ISR
 * partitions, offline replicas, ISR shrinks and expands), {@code kafka.server:type=ReplicaFetcherManager,
 * name=MaxLag,clientId=Replica}, and {@code kafka.log:type=Log} per hosted partition (Size, LogEndOffset,
 * LogStartOffset, NumLogSegments).
 */
final class ReplicaManagerMetrics {
    private static final List<String> LOG_GAUGES = List.of("Size", "LogEndOffset", "LogStartOffset",
            "NumLogSegments");

    private final ReplicaManager replicas;
    private final MetricsGroup logs;
    private final Meter isrShrinks;
    private final Meter isrExpands;

    ReplicaManagerMetrics(ReplicaManager replicas, ReplicaFetcherManager fetchers, BrokerMetrics metrics) {
        this.replicas = replicas;
        this.logs = metrics.group("kafka.log", "Log");
        MetricsGroup group = metrics.group("kafka.server", "ReplicaManager");
        group.newGauge("PartitionCount", () -> replicas.partitions().size());
        group.newGauge("LeaderCount", () -> count(Partition::isLeader));
        group.newGauge("UnderReplicatedPartitions", () -> count(p -> p.isLeader()
                && p.isr().size() < p.replicas().size()));
        group.newGauge("UnderMinIsrPartitionCount", () -> count(p -> p.isLeader()
                && p.isr().size() < p.effectiveMinIsr()));
        group.newGauge("AtMinIsrPartitionCount", () -> count(p -> p.isLeader()
                && p.isr().size() == p.effectiveMinIsr()));
        group.newGauge("OfflineReplicaCount", () -> replicas.offlinePartitions().size());
        isrShrinks = group.newMeter("IsrShrinksPerSec", "shrinks");
        isrExpands = group.newMeter("IsrExpandsPerSec", "expands");
        metrics.group("kafka.server", "ReplicaFetcherManager").newGauge("MaxLag", fetchers::maxLag,
                Map.of("clientId", "Replica"));
    }

    private int count(Predicate<Partition> test) {
        int n = 0;
        for (Partition p : replicas.partitions()) {
            if (test.test(p)) {
                n++;
            }
        }
        return n;
    }

    /** A leader's ISR changed from {@code before} to {@code after}: Kafka counts a shrink and an expand apart. */
    void isrChanged(List<Integer> before, List<Integer> after) {
        if (!before.containsAll(after)) {
            isrExpands.mark();
        }
        if (!after.containsAll(before)) {
            isrShrinks.mark();
        }
    }

    void hosted(TopicPartition tp) {
        logGauge(tp, "Size", UnifiedLog::size);
        logGauge(tp, "LogEndOffset", UnifiedLog::logEndOffset);
        logGauge(tp, "LogStartOffset", UnifiedLog::logStartOffset);
        logGauge(tp, "NumLogSegments", UnifiedLog::numberOfSegments);
    }

    private void logGauge(TopicPartition tp, String name, ToLongFunction<UnifiedLog> value) {
        // read through the partition map: a gauge scraped while the partition goes away reads 0, not a closed log
        logs.newGauge(name, () -> replicas.partition(tp).map(p -> value.applyAsLong(p.log())).orElse(0L), tags(tp));
    }

    void removed(TopicPartition tp) {
        LOG_GAUGES.forEach(name -> logs.removeMetric(name, tags(tp)));
    }

    private static Map<String, String> tags(TopicPartition tp) {
        // Kafka's order: topic, then partition
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("topic", tp.topic());
        tags.put("partition", Integer.toString(tp.partition()));
        return tags;
    }
}
