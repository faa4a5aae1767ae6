package io.twinlog.mirror.runtime;

import com.yammer.metrics.core.MetricName;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.MirrorPartitionSink;
import io.twinlog.mirror.partition.MirroredTime;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The metrics of one mirror partition this broker leads: its state (counted by {@link MirrorMetrics}) and, while it
 * mirrors, its lag gauges ({@code kafka.server:type=ClusterMirrorPartition,mirror,topic,partition}: records, bytes,
 * seconds; -1 when unknown, {@link PartitionLag}) and its RPO ({@code RpoSeconds}, {@link MirroredTime}).
 *
 * <p>Threading: the state and the gauges' registration change on the mirror manager's thread; the fetch thread
 * that appends to the partition (one at a time: the fetcher's append lock) writes the progress fields; any reporter
 * thread reads the gauges. Nothing on the fetch path allocates.
 */
final class LedPartitionMetrics {
    final MirrorSetMetrics mirror;
    final TopicPartition tp;
    private final MirrorPartitionSink log;
    private final MirrorMetricRegistry registry;
    /** Manager thread only. */
    MirrorPartitionState state;
    /** The registered lag gauges' names; null while the partition does not mirror. Set by the manager thread. */
    private volatile List<MetricName> lagGauges;
    // written by the fetch thread that appends to the partition, read by gauges
    private volatile long sourceHighWatermark = -1;
    volatile long sourceNewestTimestamp = PartitionLag.NOT_ASKED;
    private volatile long mirroredNewestTimestamp = -1;
    private volatile long bytesMirrored;
    private volatile long offsetsMirrored;
    /** Its leader's newest mirrored timestamp and mirrored-up-to time; set by the manager or a fetch thread. */
    volatile MirroredTime mirroredTime = MirroredTime.UNKNOWN;
    /** Set by the manager's pass, cleared by the next fetch answer. */
    volatile boolean sourceEndOutOfDate;

    LedPartitionMetrics(MirrorSetMetrics mirror, TopicPartition tp, MirrorPartitionSink log,
                        MirrorMetricRegistry registry) {
        this.mirror = mirror;
        this.tp = tp;
        this.log = log;
        this.registry = registry;
    }

    /** Whether its lag gauges are registered: it mirrors (not STOPPING, STOPPED or UNKNOWN). */
    boolean reportsLag() {
        return lagGauges != null;
    }

    void onFetched(long sourceHighWatermark, int bytes, int offsets, long newestTimestamp) {
        this.sourceHighWatermark = sourceHighWatermark;
        this.sourceEndOutOfDate = false;
        if (offsets > 0) {
            bytesMirrored += bytes; // one writer: the fetch thread holding the partition's append lock
            offsetsMirrored += offsets;
            mirroredNewestTimestamp = newestTimestamp;
            mirror.bytesMirrored.add(bytes);
            mirror.offsetsMirrored.add(offsets);
            mirror.bytes.mark(bytes);
            mirror.messages.mark(offsets);
        }
    }

    long lagRecords() {
        return PartitionLag.records(sourceEndOutOfDate ? PartitionLag.UNKNOWN : sourceHighWatermark,
                log.logEndOffset());
    }

    long lagBytes() {
        long own = offsetsMirrored;
        return own > 0 ? PartitionLag.bytes(lagRecords(), bytesMirrored, own)
                : PartitionLag.bytes(lagRecords(), mirror.bytesMirrored.sum(), mirror.offsetsMirrored.sum());
    }

    long lagMillis() {
        return PartitionLag.millis(lagRecords(), sourceNewestTimestamp, mirroredNewestTimestamp,
                registry.time.milliseconds());
    }

    /** Now minus the mirrored-up-to time, or -1 while that is unknown (decision 122). */
    long rpoMillis() {
        return mirroredTime.rpoMs(registry.time.milliseconds());
    }

    void registerLagGauges() {
        if (lagGauges != null) {
            return;
        }
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("mirror", mirror.mirror);
        tags.put("topic", tp.topic());
        tags.put("partition", Integer.toString(tp.partition()));
        List<MetricName> names = new ArrayList<>(4);
        registry.gauge(names, registry.clusterMirrorPartition, "LagRecords", tags, this::lagRecords);
        registry.gauge(names, registry.clusterMirrorPartition, "LagBytes", tags, this::lagBytes);
        registry.gauge(names, registry.clusterMirrorPartition, "LagSeconds", tags,
                () -> PartitionLag.seconds(lagMillis()));
        registry.gauge(names, registry.clusterMirrorPartition, "RpoSeconds", tags,
                () -> PartitionLag.seconds(rpoMillis()));
        lagGauges = names;
    }

    void removeLagGauges() {
        List<MetricName> names = lagGauges;
        if (names != null) {
            lagGauges = null;
            registry.remove(names);
        }
    }
}
