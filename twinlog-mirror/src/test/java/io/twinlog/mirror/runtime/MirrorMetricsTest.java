package io.twinlog.mirror.runtime;

import com.yammer.metrics.core.Gauge;
import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.Metric;
import com.yammer.metrics.core.MetricName;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;
import io.twinlog.mirror.MirrorPartitionSink;
import io.twinlog.mirror.fetcher.MirrorFetchListener;
import io.twinlog.mirror.fetcher.MirrorFetchMetrics;
import io.twinlog.mirror.fetcher.MirrorFetchQuota;
import io.twinlog.mirror.fetcher.MirrorFetcher;
import io.twinlog.mirror.partition.EpochHistory;
import io.twinlog.mirror.partition.FailbackDecision;
import io.twinlog.mirror.partition.MirrorAction;
import io.twinlog.mirror.partition.MirrorDecision;
import io.twinlog.mirror.partition.MirrorEvent;
import io.twinlog.mirror.partition.MirrorPartitionDriver;
import io.twinlog.mirror.partition.MirrorPartitionHost;
import io.twinlog.mirror.partition.MirrorPartitionMachine;
import io.twinlog.mirror.partition.MirrorSettings;
import io.twinlog.mirror.partition.PartitionView;
import io.twinlog.mirror.partition.PeerLookup;
import io.twinlog.mirror.partition.VersionedRecord;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.twinlog.common.mirror.MirrorPartitionState.EPOCH_FENCING;
import static io.twinlog.common.mirror.MirrorPartitionState.LOG_TRUNCATION;
import static io.twinlog.common.mirror.MirrorPartitionState.MIRRORING;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPED;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The mirror metrics' names, values and lifetimes, in a real registry. */
@Timeout(60)
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
    void aPartitionTheFetcherFailsHasAnUnknownLagAfterItsRetryUntilAFetchAnswers() throws Exception {
        sixtyBehind(time.milliseconds());
        assertEquals(60L, value(partitionName("LagRecords")));
        CountDownLatch failed = new CountDownLatch(1);
        // a fetcher whose client configs make no channel fails every partition it is given, on its own thread
        MirrorFetcher fetcher = new MirrorFetcher("m", Map.of("bootstrap.servers", "127.0.0.1:9",
                "security.protocol", "NOT_A_PROTOCOL"), 10_000, new FailureLatch(failed),
                metrics.fetchMetrics("m"), new MirrorFetchQuota(MirrorFetchQuota.Windows.KAFKA_DEFAULT, time), time);
        fetcher.addPartition(TP, log);
        fetcher.start();
        try {
            assertTrue(failed.await(10, TimeUnit.SECONDS), "the fetcher did not fail the partition");
        } finally {
            fetcher.shutdown();
        }
        assertEquals(-1L, value(partitionName("LagRecords")), "not 60 from the figure before the failure");

        metrics.onPartitionState("m", TP, log, MirrorPartitionState.FAILED);
        metrics.onPartitionState("m", TP, log, MIRRORING); // the manager's retry
        log.logEndOffset = 100; // a figure the old source end would show as caught up
        assertEquals(-1L, value(partitionName("LagRecords")), "unknown, not 0, until a fetch answers");
        assertEquals(-1L, value(partitionName("LagBytes")));
        assertEquals(-1.0, value(partitionName("LagSeconds")));

        metrics.fetchMetrics("m").onFetched(TP, 130, 0, 0, -1);
        assertEquals(30L, value(partitionName("LagRecords")));
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
     * A failback's LOG_TRUNCATION in which the source is asked three times — the comparison fails (FAILED, retried
     * after the backoff), then the recorded point is refused (the record changed concurrently) — counts one
     * failback: when its point is written.
     */
    @Test
    void aFailbackIsCountedOnceWhenItsPointIsRecordedNotPerQuestionToTheSource() throws Exception {
        FailbackLeader leader = new FailbackLeader();
        MirrorPartitionDriver driver = new MirrorPartitionDriver(new MirrorPartitionMachine(
                MirrorSettings.defaults(TimeUnit.HOURS.toMillis(1)), new Random(7)));
        long nowMs = 0;
        for (int pass = 0; pass < 5; pass++, nowMs += 60_000) { // a minute apart: past any retry backoff
            driver.pass(leader.new Pass(), DesiredMirrorState.MIRRORING, MirrorEvent.TICK, Optional.empty(),
                    OptionalLong.empty(), nowMs);
        }

        assertEquals(3, leader.asked, "asked again after the failed comparison and after the refused write");
        assertEquals(EPOCH_FENCING, leader.stored.record().state(), "the point recorded and applied: fencing");
        assertEquals(1, meter(name("ClusterMirror", "Failbacks", Map.of("mirror", "m"))).count());
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

    /**
     * A leader in LOG_TRUNCATION with 150 records, epoch 3 from offset 50, and a source that mirrored this log up
     * to offset 100 in epoch 3: the first comparison fails, the first record of a point is refused. Each pass has
     * its own host, like {@code MirrorManager}'s, which counts a failback once a point's record is accepted.
     */
    private final class FailbackLeader {
        private final LastMirrored lastMirrored = new LastMirrored(3, 100);
        private VersionedRecord stored = new VersionedRecord(
                MirrorPartitionRecord.initial(6).transitionTo(LOG_TRUNCATION, 6), 0);
        private long logEndOffset = 150;
        private Map<Integer, Long> truncationsApplied = Map.of();
        private int asked;
        private int compared;
        private boolean pointRefused;

        private final class Pass implements MirrorPartitionHost {
            /** The peer's answer in this pass, as the driver has it. */
            private PeerLookup peer = PeerLookup.NOT_ASKED;

            @Override
            public Optional<VersionedRecord> stored() {
                return Optional.of(stored);
            }

            @Override
            public PartitionView view() {
                return new PartitionView(6, logEndOffset, logEndOffset, EpochHistory.EMPTY.appended(0, 0)
                        .appended(3, 50), OptionalLong.empty(), List.of(0), List.of(0))
                        .withCluster(false, truncationsApplied);
            }

            @Override
            public PeerLookup execute(MirrorAction action, PeerLookup before) {
                peer = before;
                if (action instanceof MirrorAction.AskPeer) {
                    asked++;
                    peer = new PeerLookup.Answered(Optional.of(lastMirrored));
                } else if (action instanceof MirrorAction.ComparePeer) {
                    peer = compared++ == 0 ? new PeerLookup.Failed(PeerLookup.Failure.DISCONNECTED,
                            "connection refused")
                            : new PeerLookup.Compared(Optional.of(lastMirrored), OptionalLong.empty());
                } else if (action instanceof MirrorAction.ApplyTruncationPoint point) {
                    logEndOffset = Math.min(logEndOffset, point.offset());
                    truncationsApplied = Map.of(0, point.id());
                }
                return peer;
            }

            @Override
            public int write(VersionedRecord current, MirrorDecision decision) {
                boolean failback = FailbackDecision.recordsFailback(current.record().state(), decision, peer);
                if (failback && !pointRefused) {
                    pointRefused = true; // changed concurrently: the next pass starts from the stored record
                    return -1;
                }
                stored = new VersionedRecord(decision.write().orElseThrow(), current.version() + 1);
                if (failback) {
                    metrics.onFailback("m");
                }
                return stored.version();
            }
        }
    }

    /** Counts the fetcher's failure reports down; nothing else is expected of it here. */
    private record FailureLatch(CountDownLatch failed) implements MirrorFetchListener {
        @Override
        public void onEpochFencingNeeded(TopicPartition partition, int sourceEpoch) {
        }

        @Override
        public void onProgress(TopicPartition partition, long sourceHighWatermark, long localLogEndOffset) {
        }

        @Override
        public void onMirrored(TopicPartition partition, long appendedNewestTimestamp, long caughtUpAtMs) {
        }

        @Override
        public void onSourceDiverged(TopicPartition partition, int sourceEpoch, long sourceEndOffset, String reason) {
        }

        @Override
        public void onFailure(TopicPartition partition, String reason, boolean retriable) {
            failed.countDown();
        }
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
