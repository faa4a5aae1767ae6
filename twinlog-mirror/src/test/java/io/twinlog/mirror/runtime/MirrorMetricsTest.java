package io.twinlog.mirror.runtime;

import com.yammer.metrics.core.Gauge;
import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.Metric;
import com.yammer.metrics.core.MetricName;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.MirrorPartitionSink;
import io.twinlog.mirror.fetcher.MirrorFetchMetrics;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static io.twinlog.common.mirror.MirrorPartitionState.MIRRORING;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPED;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The mirror metrics' names, values and lifetimes, in a real registry. */
class MirrorMetricsTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private final Time time = Time.SYSTEM;
    private final BrokerMetrics broker = BrokerMetrics.unreported(0, time);
    private final MirrorMetrics metrics = new MirrorMetrics(broker, time);
    private final FakeLog log = new FakeLog();

    @AfterEach
    void close() {
        metrics.close();
        broker.close();
    }

    @Test
    void stateGaugeNamesAreTheKipsCamelCase() {
        assertEquals("LogTruncationPartitionState", MirrorMetrics.stateMetricName(MirrorPartitionState.LOG_TRUNCATION));
        assertEquals("MirroringPartitionState", MirrorMetrics.stateMetricName(MIRRORING));
        assertEquals("UleRecoveryPartitionState", MirrorMetrics.stateMetricName(MirrorPartitionState.ULE_RECOVERY));
        for (MirrorPartitionState state : MirrorPartitionState.values()) {
            assertTrue(registered(name("MirrorMetadataManager", MirrorMetrics.stateMetricName(state), Map.of())));
        }
    }

    @Test
    void aMirroringPartitionIsCountedAndReportsItsLag() {
        long now = time.milliseconds();
        MirrorFetchMetrics fetch = sixtyBehind(now - 8_000);
        fetch.onSourceNewestTimestamp(TP, now - 1_000);

        assertEquals(1, value(name("MirrorMetadataManager", "MirroringPartitionState", Map.of())));
        assertEquals(1, value(name("MirrorMetadataManager", "MirroringPartitionState", Map.of("mirror", "m"))));
        assertEquals(60L, value(partitionName("LagRecords")));
        assertEquals(6_000L, value(partitionName("LagBytes")));
        assertEquals(7.0, value(partitionName("LagSeconds")));
        assertEquals(60L, value(name("ClusterMirror", "LagRecords", Map.of("mirror", "m"))));
        assertEquals(7.0, value(name("ClusterMirror", "LagSeconds", Map.of("mirror", "m"))));
        assertEquals(60L, value(name("MirrorFetcherManager", "MaxLag", Map.of("clientId", "MirrorReplica"))));
        assertEquals(40, meter(name("ClusterMirror", "MirrorMessagesPerSec", Map.of("mirror", "m"))).count());
        assertEquals(4_000, meter(name("ClusterMirror", "MirrorBytesPerSec", Map.of("mirror", "m"))).count());

        log.logEndOffset = 100;
        assertEquals(0L, value(partitionName("LagRecords")));
        assertEquals(0.0, value(partitionName("LagSeconds")), "caught up");
    }

    @Test
    void aPartitionNotFetchedSinceThisBrokerTookItReportsAnUnknownLag() {
        // a new leader (or a restarted broker) whose source does not answer: nothing says a failover loses nothing
        metrics.onPartitionState("m", TP, log, MirrorPartitionState.FAILED);
        log.logEndOffset = 40;

        assertEquals(-1L, value(partitionName("LagRecords")));
        assertEquals(-1L, value(partitionName("LagBytes")));
        assertEquals(-1.0, value(partitionName("LagSeconds")));
        assertEquals(-1.0, value(name("ClusterMirror", "LagSeconds", Map.of("mirror", "m"))));
        assertEquals(0L, value(name("ClusterMirror", "LagRecords", Map.of("mirror", "m"))), "nothing known to sum");
        assertEquals(0L, value(name("MirrorFetcherManager", "MaxLag", Map.of("clientId", "MirrorReplica"))));
    }

    @Test
    void theMirrorsSumsSkipUnknownPartitionsButItsSecondsAreUnknownWhileAnyPartitionsAre() {
        TopicPartition other = new TopicPartition("orders", 1);
        FakeLog otherLog = new FakeLog();
        metrics.onPartitionState("m", other, otherLog, MIRRORING);
        otherLog.logEndOffset = 10;
        long now = time.milliseconds();
        MirrorFetchMetrics fetch = sixtyBehind(now - 8_000);
        fetch.onSourceNewestTimestamp(TP, now - 1_000);

        MetricName mirrorSeconds = name("ClusterMirror", "LagSeconds", Map.of("mirror", "m"));
        assertEquals(60L, value(name("ClusterMirror", "LagRecords", Map.of("mirror", "m"))));
        assertEquals(6_000L, value(name("ClusterMirror", "LagBytes", Map.of("mirror", "m"))));
        assertEquals(-1.0, value(mirrorSeconds), "orders-1 may be any time behind: not the 7 s of orders-0");
        assertEquals(60L, value(name("MirrorFetcherManager", "MaxLag", Map.of("clientId", "MirrorReplica"))));

        fetch.onFetched(other, 10, 0, 0, -1); // caught up
        assertEquals(7.0, value(mirrorSeconds));
    }

    @Test
    void aPartitionBehindIsUnknownInSecondsUntilTheSourceGivesItsNewestTimestamp() {
        long now = time.milliseconds();
        MirrorFetchMetrics fetch = sixtyBehind(now - 300_000);

        assertEquals(60L, value(partitionName("LagRecords")));
        assertEquals(-1.0, value(partitionName("LagSeconds")));
        assertEquals(-1.0, value(name("ClusterMirror", "LagSeconds", Map.of("mirror", "m"))));
        fetch.onSourceNewestTimestamp(TP, now - 290_000);
        assertEquals(10.0, value(partitionName("LagSeconds")));
    }

    @Test
    void aFailoverIsCountedAndTheStoppedPartitionLosesItsLagGauges() {
        metrics.onPartitionState("m", TP, log, MIRRORING);
        metrics.onPartitionState("m", TP, log, STOPPING);
        metrics.onTransition("m", STOPPING, STOPPED);
        metrics.onPartitionState("m", TP, log, STOPPED);

        assertEquals(0, value(name("MirrorMetadataManager", "MirroringPartitionState", Map.of("mirror", "m"))));
        assertEquals(1, value(name("MirrorMetadataManager", "StoppedPartitionState", Map.of("mirror", "m"))));
        assertEquals(1, meter(name("ClusterMirror", "Failovers", Map.of("mirror", "m"))).count());
        assertFalse(registered(partitionName("LagRecords")));
        assertFalse(registered(partitionName("LagSeconds")));
    }

    @Test
    void aPartitionNoLongerLedIsNoLongerCounted() {
        metrics.onPartitionState("m", TP, log, MIRRORING);
        metrics.removePartition(TP);

        assertEquals(0, value(name("MirrorMetadataManager", "MirroringPartitionState", Map.of())));
        assertFalse(registered(partitionName("LagRecords")));
        metrics.fetchMetrics("m").onFetched(TP, 100, 10, 1, 0); // a fetch still in flight: ignored
        assertFalse(registered(partitionName("LagRecords")));
    }

    @Test
    void aMirrorGoneLeavesNothingBehind() {
        metrics.onPartitionState("m", TP, log, MIRRORING);
        MirrorFetchMetrics.FetchCounter fetches = metrics.fetchMetrics("m").fetcherStarted(new Node(1, "h", 9092));
        fetches.onFetch();
        fetches.close();
        metrics.retainMirrors(Set.of());

        assertEquals(0, value(name("MirrorMetadataManager", "MirroringPartitionState", Map.of())));
        List<String> left = broker.registry().allMetrics().keySet().stream().map(MetricName::getMBeanName)
                .filter(n -> n.contains("mirror=") || n.contains("ClusterMirrorPartition")).toList();
        assertEquals(List.of(), left);
    }

    @Test
    void theControllersSyncKeepsAMirrorWithoutTopicsAndItsSyncAge() {
        metrics.syncedMirrors(Set.of("m"));
        metrics.onGroupOffsetSyncError("m");
        MetricName age = name("MirrorMetadataManager", "ConsumerGroupOffsetSyncAgeMs", Map.of("mirror", "m"));
        assertEquals(-1L, value(age), "never synced");
        metrics.onGroupOffsetSync("m");
        metrics.retainMirrors(Set.of());

        long ageMs = (Long) value(age);
        assertTrue(ageMs >= 0 && ageMs < 60_000, "the age of a sync just made: " + ageMs);
        assertEquals(1, meter(name("MirrorMetadataManager", "ConsumerGroupOffsetSyncError", Map.of("mirror", "m")))
                .count());
        metrics.syncedMirrors(Set.of()); // no longer the controller
        metrics.retainMirrors(Set.of());
        assertFalse(registered(age));
    }

    @Test
    void closingRemovesEveryMirrorMetric() {
        metrics.onPartitionState("m", TP, log, MIRRORING);
        metrics.close();
        assertEquals(Set.of(), broker.registry().allMetrics().keySet());
    }

    /**
     * orders-0 mirroring, 60 records behind: its log ends at 40, the source's high watermark is 100, and 40 offsets
     * of 4,000 bytes were mirrored, the newest batch stamped {@code newestMirroredTimestamp}.
     */
    private MirrorFetchMetrics sixtyBehind(long newestMirroredTimestamp) {
        metrics.onPartitionState("m", TP, log, MIRRORING);
        log.logEndOffset = 40;
        MirrorFetchMetrics fetch = metrics.fetchMetrics("m");
        fetch.onFetched(TP, 100, 4_000, 40, newestMirroredTimestamp);
        return fetch;
    }

    private MetricName partitionName(String name) {
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("mirror", "m");
        tags.put("topic", TP.topic());
        tags.put("partition", Integer.toString(TP.partition()));
        return name("ClusterMirrorPartition", name, tags);
    }

    private MetricName name(String type, String name, Map<String, String> tags) {
        return broker.group("kafka.server", type).metricName(name, tags);
    }

    private boolean registered(MetricName name) {
        return broker.registry().allMetrics().containsKey(name);
    }

    private Object value(MetricName name) {
        Metric metric = broker.registry().allMetrics().get(name);
        assertTrue(metric instanceof Gauge<?>, name.getMBeanName() + " is a gauge: " + metric);
        return ((Gauge<?>) metric).value();
    }

    private Meter meter(MetricName name) {
        return (Meter) broker.registry().allMetrics().get(name);
    }

    /** A destination log whose end the test sets. */
    private static final class FakeLog implements MirrorPartitionSink {
        private long logEndOffset;

        @Override
        public boolean isLeader() {
            return true;
        }

        @Override
        public int leaderEpoch() {
            return 0;
        }

        @Override
        public long logEndOffset() {
            return logEndOffset;
        }

        @Override
        public long logStartOffset() {
            return 0;
        }

        @Override
        public Optional<Integer> latestEpoch() {
            return Optional.empty();
        }

        @Override
        public void appendMirrored(MemoryRecords records) {
            throw new UnsupportedOperationException("not appended to in this test");
        }

        @Override
        public void truncateFullyAndStartAt(long offset, String reason) {
            throw new UnsupportedOperationException("not truncated in this test");
        }
    }
}
