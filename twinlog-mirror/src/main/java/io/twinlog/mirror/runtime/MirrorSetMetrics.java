package io.twinlog.mirror.runtime;

import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.MetricName;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.fetcher.MirrorFetchQuota;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToLongFunction;

/**
 * One mirror's metrics on this broker ({@code kafka.server:type=MirrorMetadataManager,mirror=<m>} and
 * {@code kafka.server:type=ClusterMirror,mirror=<m>}, see {@link MirrorMetrics}): its partitions per state, its
 * lag summed over the partitions of it this broker leads, what its fetchers appended, its failovers, failbacks,
 * truncations, quarantined records and reconciliations, its sync errors and group offset sync age, and its
 * bandwidth cap. Registered when the mirror is first named, removed by {@link #remove}.
 *
 * <p>Threading: meters are marked by whichever thread saw the event; the state counts and fields are atomic or
 * volatile; the gauges are read by any reporter thread.
 */
final class MirrorSetMetrics {
    private static final MirrorPartitionState[] STATES = MirrorPartitionState.values();

    final String mirror;
    private final MirrorMetricRegistry registry;
    /** Every led partition of the broker (of all mirrors): the lag gauges sum those of this mirror. */
    private final Collection<LedPartitionMetrics> partitions;
    private final List<MetricName> names = new ArrayList<>();
    final AtomicIntegerArray stateCounts = new AtomicIntegerArray(STATES.length);
    final Meter bytes;
    final Meter messages;
    final Meter failovers;
    final Meter failbacks;
    final Meter truncations;
    final Meter recordsQuarantined;
    final Meter reconciliationsMatched;
    final Meter reconciliationsRepaired;
    final Meter reconciliationsFailed;
    final Meter topicConfigSyncErrors;
    final Meter groupOffsetSyncErrors;
    final Meter aclSyncErrors;
    final Meter topicMetadataRefreshErrors;
    /** Bytes and offsets this broker's fetchers appended for the mirror: the fallback size per offset. */
    final LongAdder bytesMirrored = new LongAdder();
    final LongAdder offsetsMirrored = new LongAdder();
    volatile long lastGroupOffsetSyncMs = -1;
    /** Milliseconds this broker's fetch threads of the mirror waited for its bandwidth cap. */
    final Meter throttledTime;
    volatile long replicationThrottledRate = MirrorFetchQuota.UNLIMITED;

    MirrorSetMetrics(String mirror, MirrorMetricRegistry registry, Collection<LedPartitionMetrics> partitions) {
        this.mirror = mirror;
        this.registry = registry;
        this.partitions = partitions;
        Map<String, String> tags = Map.of("mirror", mirror);
        for (MirrorPartitionState state : STATES) {
            registry.gauge(names, registry.metadataManager, MirrorMetricRegistry.stateMetricName(state), tags,
                    () -> stateCounts.get(state.ordinal()));
        }
        topicConfigSyncErrors = registry.meter(names, registry.metadataManager, "TopicConfigSyncError", "errors",
                tags);
        groupOffsetSyncErrors = registry.meter(names, registry.metadataManager, "ConsumerGroupOffsetSyncError",
                "errors", tags);
        aclSyncErrors = registry.meter(names, registry.metadataManager, "AclSyncError", "errors", tags);
        topicMetadataRefreshErrors = registry.meter(names, registry.metadataManager, "TopicMetadataRefreshError",
                "errors", tags);
        registry.gauge(names, registry.metadataManager, "ConsumerGroupOffsetSyncAgeMs", tags, () -> {
            long last = lastGroupOffsetSyncMs;
            return last < 0 ? -1L : Math.max(0, registry.time.milliseconds() - last);
        });
        registry.gauge(names, registry.clusterMirror, "LagRecords", tags, () -> sum(LedPartitionMetrics::lagRecords));
        registry.gauge(names, registry.clusterMirror, "LagBytes", tags, () -> sum(LedPartitionMetrics::lagBytes));
        registry.gauge(names, registry.clusterMirror, "LagSeconds", tags,
                () -> maxSeconds(LedPartitionMetrics::lagMillis));
        registry.gauge(names, registry.clusterMirror, "MaxRpoSeconds", tags,
                () -> maxSeconds(LedPartitionMetrics::rpoMillis));
        bytes = registry.meter(names, registry.clusterMirror, "MirrorBytesPerSec", "bytes", tags);
        messages = registry.meter(names, registry.clusterMirror, "MirrorMessagesPerSec", "messages", tags);
        failovers = registry.meter(names, registry.clusterMirror, "Failovers", "partitions", tags);
        failbacks = registry.meter(names, registry.clusterMirror, "Failbacks", "partitions", tags);
        truncations = registry.meter(names, registry.clusterMirror, "Truncations", "truncations", tags);
        recordsQuarantined = registry.meter(names, registry.clusterMirror, "RecordsQuarantined", "records", tags);
        reconciliationsMatched = registry.meter(names, registry.clusterMirror, "ReconciliationsMatched",
                "comparisons", tags);
        reconciliationsRepaired = registry.meter(names, registry.clusterMirror, "ReconciliationsRepaired",
                "comparisons", tags);
        reconciliationsFailed = registry.meter(names, registry.clusterMirror, "ReconciliationsFailed", "comparisons",
                tags);
        throttledTime = registry.meter(names, registry.clusterMirror, "ThrottledTimeMs", "milliseconds", tags);
        // the cap in force on this broker, -1 for none (mirror.replication.throttled.rate)
        registry.gauge(names, registry.clusterMirror, "ReplicationThrottledRate", tags, () -> replicationThrottledRate
                == MirrorFetchQuota.UNLIMITED ? -1L : replicationThrottledRate);
    }

    /** The sum over the partitions whose lag is known. */
    private long sum(ToLongFunction<LedPartitionMetrics> lag) {
        long sum = 0;
        for (LedPartitionMetrics p : partitions) {
            if (p.mirror == this && p.reportsLag()) {
                sum += Math.max(0, lag.applyAsLong(p));
            }
        }
        return sum;
    }

    /**
     * The lag in seconds, or the RPO, of failing the mirror over now: the max over its partitions, or -1 while any
     * partition's is unknown (a partition that cannot say must not let the mirror claim less than it may lose).
     */
    private double maxSeconds(ToLongFunction<LedPartitionMetrics> millisOf) {
        long max = 0;
        for (LedPartitionMetrics p : partitions) {
            if (p.mirror == this && p.reportsLag()) {
                long millis = millisOf.applyAsLong(p);
                if (millis < 0) {
                    return PartitionLag.UNKNOWN;
                }
                max = Math.max(max, millis);
            }
        }
        return PartitionLag.seconds(max);
    }

    void remove() {
        registry.remove(names);
    }
}
