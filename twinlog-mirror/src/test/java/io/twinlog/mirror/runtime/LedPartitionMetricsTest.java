package io.twinlog.mirror.runtime;

import com.yammer.metrics.core.Gauge;
import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.Metric;
import com.yammer.metrics.core.MetricName;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.mirror.MirrorPartitionState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One mirror's metrics ({@link MirrorSetMetrics}) and its led partitions' lag ({@link LedPartitionMetrics}) in a
 * real registry ({@link MirrorMetricRegistry}): per-partition gauges while a partition mirrors, the mirror's sums
 * over its own partitions only, the size-per-offset fallback, and removal of exactly the owner's metrics.
 */
@Timeout(30)
class LedPartitionMetricsTest {
    private static final TopicPartition TP0 = new TopicPartition("orders", 0);
    private static final TopicPartition TP1 = new TopicPartition("orders", 1);

    private final BrokerMetrics broker = BrokerMetrics.unreported(0, Time.SYSTEM);
    private final MirrorMetricRegistry registry = new MirrorMetricRegistry(broker, Time.SYSTEM);
    private final List<LedPartitionMetrics> partitions = new CopyOnWriteArrayList<>();
    private final MirrorSetMetrics set = new MirrorSetMetrics("m", registry, partitions);
    private final FakeMirrorBroker brokerPartitions = new FakeMirrorBroker();

    @AfterEach
    void close() {
        broker.close();
    }

    @Test
    void lagGaugesExistOnlyWhileThePartitionMirrors() {
        LedPartitionMetrics p = led(set, TP0, 40);
        assertFalse(p.reportsLag());
        assertNull(metric(partitionName("LagRecords", "m", TP0)));

        p.registerLagGauges();
        p.registerLagGauges(); // a second registration is a no-op
        assertTrue(p.reportsLag());
        assertEquals(-1L, value(partitionName("LagRecords", "m", TP0)), "nothing fetched yet: unknown");
        assertEquals(-1L, value(partitionName("LagBytes", "m", TP0)));
        assertEquals(-1.0, value(partitionName("LagSeconds", "m", TP0)));

        p.onFetched(100, 600, 60, 1_000);
        p.sourceNewestTimestamp = 4_000;
        assertEquals(60L, value(partitionName("LagRecords", "m", TP0)));
        assertEquals(600L, value(partitionName("LagBytes", "m", TP0)), "60 records of 10 bytes each");
        assertEquals(3.0, value(partitionName("LagSeconds", "m", TP0)));
        assertEquals(600, meter(mirrorName("MirrorBytesPerSec")).count());
        assertEquals(60, meter(mirrorName("MirrorMessagesPerSec")).count());

        p.sourceEndOutOfDate = true;
        assertEquals(-1L, value(partitionName("LagRecords", "m", TP0)), "an out-of-date source end is unknown");
        p.onFetched(100, 0, 0, -1);
        assertEquals(60L, value(partitionName("LagRecords", "m", TP0)), "the next answer clears it");
        assertEquals(60, meter(mirrorName("MirrorMessagesPerSec")).count(), "an empty fetch marks nothing");

        p.removeLagGauges();
        assertFalse(p.reportsLag());
        for (String name : List.of("LagRecords", "LagBytes", "LagSeconds")) {
            assertNull(metric(partitionName(name, "m", TP0)), name);
        }
    }

    @Test
    void aPartitionWithoutItsOwnFetchesSizesItsLagByTheMirrorsAverage() {
        LedPartitionMetrics copied = led(set, TP0, 0);
        copied.registerLagGauges();
        copied.onFetched(50, 500, 50, 1_000); // 10 bytes per offset, caught up
        LedPartitionMetrics idle = led(set, TP1, 100);
        idle.registerLagGauges();
        idle.onFetched(130, 0, 0, -1);
        assertEquals(30L, value(partitionName("LagRecords", "m", TP1)));
        assertEquals(300L, value(partitionName("LagBytes", "m", TP1)));
    }

    @Test
    void theMirrorsLagSumsItsOwnMirroringPartitionsAndIsUnknownWhenOneIsUnknown() {
        MirrorSetMetrics other = new MirrorSetMetrics("other", registry, partitions);
        LedPartitionMetrics a = led(set, TP0, 10);
        LedPartitionMetrics b = led(set, TP1, 20);
        LedPartitionMetrics elsewhere = led(other, TP0, 0);
        LedPartitionMetrics notMirroring = led(set, new TopicPartition("orders", 2), 0);
        for (LedPartitionMetrics p : List.of(a, b, elsewhere)) {
            p.registerLagGauges();
        }
        a.onFetched(40, 300, 30, 1_000);
        a.sourceNewestTimestamp = 3_000;
        b.onFetched(25, 50, 5, 1_000);
        b.sourceNewestTimestamp = 1_500;
        elsewhere.onFetched(1_000, 1_000, 100, 1_000);
        notMirroring.onFetched(1_000, 1_000, 100, 1_000);

        assertEquals(35L, value(mirrorName("LagRecords")), "30 + 5: another mirror's and a stopped one's not");
        assertEquals(350L, value(mirrorName("LagBytes")));
        assertEquals(2.0, value(mirrorName("LagSeconds")), "the max");

        b.sourceNewestTimestamp = PartitionLag.NOT_ASKED;
        assertEquals(-1.0, value(mirrorName("LagSeconds")), "one partition cannot say: the mirror cannot either");
        b.removeLagGauges();
        assertEquals(30L, value(mirrorName("LagRecords")));
        assertEquals(2.0, value(mirrorName("LagSeconds")));
    }

    @Test
    void stateCountsThrottleAndSyncAgeAreGauges() {
        assertEquals(0, value(metadataName(MirrorMetricRegistry.stateMetricName(MirrorPartitionState.MIRRORING))));
        set.stateCounts.addAndGet(MirrorPartitionState.MIRRORING.ordinal(), 3);
        assertEquals(3, value(metadataName("MirroringPartitionState")));
        assertEquals(-1L, value(mirrorName("ReplicationThrottledRate")), "no cap");
        set.replicationThrottledRate = 1_000_000;
        assertEquals(1_000_000L, value(mirrorName("ReplicationThrottledRate")));
        assertEquals(-1L, value(metadataName("ConsumerGroupOffsetSyncAgeMs")), "never synced");
        set.lastGroupOffsetSyncMs = Time.SYSTEM.milliseconds() + 60_000;
        assertEquals(0L, value(metadataName("ConsumerGroupOffsetSyncAgeMs")), "never negative");
    }

    @Test
    void removingAMirrorRemovesExactlyItsMetricsAndANewOwnerReplacesAGauge() {
        MirrorSetMetrics other = new MirrorSetMetrics("other", registry, partitions);
        set.failovers.mark();
        set.remove();
        assertNull(metric(mirrorName("Failovers")));
        assertNull(metric(mirrorName("LagRecords")));
        assertNull(metric(metadataName("MirroringPartitionState")));
        assertTrue(metric(broker.group("kafka.server", "ClusterMirror").metricName("Failovers",
                Map.of("mirror", "other"))) instanceof Meter);

        // a gauge left registered by an earlier owner reads the new owner's value
        other.stateCounts.set(MirrorPartitionState.PAUSED.ordinal(), 1);
        MirrorSetMetrics again = new MirrorSetMetrics("other", registry, partitions);
        again.stateCounts.set(MirrorPartitionState.PAUSED.ordinal(), 7);
        assertEquals(7, value(broker.group("kafka.server", "MirrorMetadataManager").metricName(
                "PausedPartitionState", Map.of("mirror", "other"))));
    }

    /** A led partition whose log ends at {@code logEndOffset}. */
    private LedPartitionMetrics led(MirrorSetMetrics mirror, TopicPartition tp, long logEndOffset) {
        FakeMirrorBroker.Partition log = brokerPartitions.new Partition();
        log.logEndOffset = logEndOffset;
        LedPartitionMetrics p = new LedPartitionMetrics(mirror, tp, log, registry);
        partitions.add(p);
        return p;
    }

    private MetricName partitionName(String name, String mirror, TopicPartition tp) {
        Map<String, String> tags = new LinkedHashMap<>(); // in the order the metric is registered with
        tags.put("mirror", mirror);
        tags.put("topic", tp.topic());
        tags.put("partition", Integer.toString(tp.partition()));
        return broker.group("kafka.server", "ClusterMirrorPartition").metricName(name, tags);
    }

    private MetricName mirrorName(String name) {
        return broker.group("kafka.server", "ClusterMirror").metricName(name, Map.of("mirror", "m"));
    }

    private MetricName metadataName(String name) {
        return broker.group("kafka.server", "MirrorMetadataManager").metricName(name, Map.of("mirror", "m"));
    }

    private Metric metric(MetricName name) {
        return broker.registry().allMetrics().get(name);
    }

    private Object value(MetricName name) {
        Metric metric = metric(name);
        assertTrue(metric instanceof Gauge<?>, name.getMBeanName() + " is a gauge: " + metric);
        return ((Gauge<?>) metric).value();
    }

    private Meter meter(MetricName name) {
        return (Meter) metric(name);
    }
}
