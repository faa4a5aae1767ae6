package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mirroring under source-side faults: source leader changes under continuous acks=all production, the whole source
 * going away and coming back, source retention deleting past the destination's end, a compacted source log with
 * offset gaps, and lag reporting after a paused mirror resumes. Every case ends with the destination log equal to the
 * source log batch for batch (offsets, epochs, CRCs).
 */
@Timeout(300)
class MirrorFaultsTest {
    private static final String MIRROR = "dr";
    /** Kafka's testing override of the 1 MiB minimum segment size, accepted by CreateTopics (see RetentionAndCleanupTest). */
    private static final String SMALL_SEGMENTS = "internal.segment.bytes";
    /** Producer batches must fit a 4 KiB segment. */
    private static final Map<String, Object> SMALL_BATCHES = Map.of(ProducerConfig.BATCH_SIZE_CONFIG, 1024);

    @Test
    void sourceLeaderChangesWhileMirroringKeepTheLogsIdentical() throws Exception {
        String topic = "orders";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(3),
                TestCluster.builder().brokers(1))) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            Admin sourceAdmin = clusters.sourceAdmin();
            MirrorAdmin mirrors = clusters.mirrors();
            sourceAdmin.createTopics(List.of(new NewTopic(topic, 1, (short) 3)
                    .configs(Map.of("min.insync.replicas", "2")))).all().get();
            mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", source.bootstrapServers()));
            assertEquals(Map.of(), mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of(), List.of()));

            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong acked = new AtomicLong();
            AtomicReference<Exception> sendError = new AtomicReference<>();
            CompletableFuture<Void> producing = CompletableFuture.runAsync(() -> {
                try (KafkaProducer<byte[], byte[]> p = source.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all",
                        ProducerConfig.LINGER_MS_CONFIG, 5))) {
                    for (int i = 0; !stop.get(); i++) {
                        p.send(new ProducerRecord<>(topic, 0, null, bytes("v" + i)), (md, e) -> {
                            if (e != null) {
                                sendError.compareAndSet(null, e);
                            } else {
                                acked.incrementAndGet();
                            }
                        });
                        if (i % 50 == 49) {
                            p.flush(); // bounds what is in flight, so production keeps pace with the kills
                        }
                    }
                    p.flush();
                }
            });

            Waits.waitUntil("production and mirroring under way", () -> acked.get() > 200 && end(destination, tp) > 0);
            for (int round = 0; round < 2; round++) {
                int leader = describe(sourceAdmin, topic).partitions().get(0).leader().id();
                long ackedBefore = acked.get();
                source.killBroker(leader);
                int newLeader = Waits.waitFor("a new source leader and production continuing after killing broker "
                        + leader, () -> {
                            var l = describe(sourceAdmin, topic).partitions().get(0).leader();
                            return l == null || acked.get() <= ackedBefore + 200 ? -1 : l.id();
                        }, l -> l >= 0 && l != leader);
                // The mirror must follow the new leader while the old one is still down: records acknowledged by
                // the new leader reach the destination before the old leader comes back.
                long newLeaderHighWatermark = source.broker(newLeader).logStore().log(tp).orElseThrow().highWatermark();
                Waits.waitUntil("the destination mirroring from the new source leader " + newLeader + " up to "
                        + newLeaderHighWatermark, () -> end(destination, tp) >= newLeaderHighWatermark,
                        Duration.ofSeconds(10));
                assertEquals("MIRRORING", partition(mirrors, topic).state());
                source.startBroker(leader);
                Waits.waitUntil("broker " + leader + " back in the source ISR",
                        () -> describe(sourceAdmin, topic).partitions().get(0).isr().size() == 3);
            }
            long ackedBeforeStop = acked.get();
            Waits.waitUntil("production after the last restart", () -> acked.get() > ackedBeforeStop + 100);
            stop.set(true);
            producing.get(60, TimeUnit.SECONDS);
            assertNull(sendError.get(), "every acks=all send succeeded across the leader changes");

            List<ReplicaLogs.Batch> sourceLog = ReplicaLogs.awaitIdentical(source, tp, List.of(0, 1, 2));
            long sourceEnd = sourceLog.get(sourceLog.size() - 1).lastOffset() + 1;
            assertTrue(sourceEnd >= acked.get(), "the source holds every acknowledged record");
            assertTrue(sourceLog.stream().map(ReplicaLogs.Batch::partitionLeaderEpoch).distinct().count() >= 3,
                    "the source log spans at least three leader epochs");
            Waits.waitUntil("the destination caught up to " + sourceEnd, () -> end(destination, tp) == sourceEnd);
            int sourceLeader = describe(sourceAdmin, topic).partitions().get(0).leader().id();
            assertEquals(ReplicaLogs.read(source.broker(sourceLeader), tp),
                    ReplicaLogs.awaitIdentical(destination, tp, List.of(0)), "batch for batch across leader changes");
            MirrorInvariants.awaitMirrored(source, destination, tp);
            assertEquals("MIRRORING", partition(mirrors, topic).state());
        }
    }

    @Test
    void sourceUnreachableFailsRetriablyThenRecoversByItself() throws Exception {
        String topic = "events";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (MirroredClusters clusters = MirroredClusters.start()) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            Admin sourceAdmin = clusters.sourceAdmin();
            MirrorAdmin mirrors = clusters.mirrors();
            sourceAdmin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            produce(source, topic, 100, "a", Map.of());
            mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", source.bootstrapServers()));
            assertEquals(Map.of(), mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of(), List.of()));
            Waits.waitUntil("100 records mirrored", () -> end(destination, tp) == 100);
            MirrorInvariants.awaitMirrored(source, destination, tp);

            source.stopBroker(0);
            MirrorAdmin.PartitionDescription failed = Waits.waitFor("FAILED with a retriable reason",
                    () -> partition(mirrors, topic), d -> d.state().equals("FAILED") && d.retryAttempt() > 0,
                    Duration.ofSeconds(15));
            assertTrue(failed.lastError() != null && failed.lastError().contains("unreachable"), failed.lastError());

            source.startBroker(0); // same port: the mirror's bootstrap address is valid again
            produce(source, topic, 50, "b", Map.of());
            Waits.waitUntil("mirroring recovered by itself and caught up",
                    () -> partition(mirrors, topic).state().equals("MIRRORING") && end(destination, tp) == 150);
            assertEquals(ReplicaLogs.read(source.broker(0), tp), ReplicaLogs.read(destination.broker(0), tp));
            MirrorInvariants.awaitMirrored(source, destination, tp);
        }
    }

    @Test
    void sourceRetentionPastTheDestinationEndRestartsAtTheSourceLogStart() throws Exception {
        String topic = "logs";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(1)
                .brokerProperty("log.retention.check.interval.ms", "100")
                .brokerProperty("log.initial.task.delay.ms", "0").brokerProperty("log.segment.delete.delay.ms", "0"),
                TestCluster.builder().brokers(1))) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            Admin sourceAdmin = clusters.sourceAdmin();
            MirrorAdmin mirrors = clusters.mirrors();
            sourceAdmin.createTopics(List.of(new NewTopic(topic, 1, (short) 1)
                    .configs(Map.of(SMALL_SEGMENTS, "4096")))).all().get();
            long twoHoursAgo = System.currentTimeMillis() - Duration.ofHours(2).toMillis();
            produceAt(source, topic, 100, "old", twoHoursAgo);
            mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", source.bootstrapServers()));
            assertEquals(Map.of(), mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of(), List.of()));
            Waits.waitUntil("100 records mirrored", () -> end(destination, tp) == 100);
            MirrorInvariants.awaitMirrored(source, destination, tp);

            assertEquals(Map.of(), mirrors.pauseMirrorTopics(MIRROR, List.of(topic), List.of()));
            Waits.waitUntil("paused", () -> partition(mirrors, topic).state().equals("PAUSED"));
            produceAt(source, topic, 150, "older", twoHoursAgo);
            produceAt(source, topic, 50, "recent", System.currentTimeMillis());
            // Retention of one hour on the source only: the two-hour-old segments go, past the destination's end.
            sourceAdmin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic),
                    List.of(new AlterConfigOp(new ConfigEntry("retention.ms", Long.toString(Duration.ofHours(1)
                            .toMillis())), AlterConfigOp.OpType.SET)))).all().get();
            UnifiedLog sourceLog = source.broker(0).logStore().log(tp).orElseThrow();
            long sourceStart = Waits.waitFor("source retention past the destination's end (100)",
                    sourceLog::logStartOffset, start -> start > 100);
            assertTrue(sourceStart <= 250, "the segment holding the first recent record stays: " + sourceStart);

            assertEquals(Map.of(), mirrors.resumeMirrorTopics(MIRROR, List.of(topic), List.of()));
            Waits.waitUntil("resumed and caught up", () -> partition(mirrors, topic).state().equals("MIRRORING")
                    && end(destination, tp) == 300);
            UnifiedLog destinationLog = destination.broker(0).logStore().log(tp).orElseThrow();
            assertEquals(sourceLog.logStartOffset(), destinationLog.logStartOffset(),
                    "the destination restarted at the source's log start");
            assertEquals(ReplicaLogs.read(source.broker(0), tp), ReplicaLogs.read(destination.broker(0), tp),
                    "the records present are identical");
            MirrorInvariants.awaitMirrored(source, destination, tp);
        }
    }

    @Test
    void compactedSourceIsMirroredWithItsOffsetGaps() throws Exception {
        String topic = "compacted";
        TopicPartition tp = new TopicPartition(topic, 0);
        // The destination's own cleaner would compact the copy on its own schedule (the topic config is
        // copied); off here so that the comparison is of what mirroring copied.
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(1)
                .brokerProperty("log.cleaner.backoff.ms", "100"),
                TestCluster.builder().brokers(1).brokerProperty("log.cleaner.enable", "false"))) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            Admin sourceAdmin = clusters.sourceAdmin();
            MirrorAdmin mirrors = clusters.mirrors();
            sourceAdmin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of(
                    "cleanup.policy", "compact", SMALL_SEGMENTS, "4096", "min.cleanable.dirty.ratio", "0.01"))))
                    .all().get();
            try (KafkaProducer<byte[], byte[]> p = source.producer(SMALL_BATCHES)) {
                for (int i = 0; i < 80; i++) {
                    p.send(new ProducerRecord<>(topic, 0, bytes("key-" + (i % 10)), bytes("value-" + i + "-"
                            + "x".repeat(80))));
                }
                p.flush();
            }
            // Only segments behind the active one are cleaned: filler moves the active segment on.
            Waits.waitFor("the source cleaner to leave offset gaps", () -> {
                produceFiller(source, topic);
                return ReplicaLogs.read(source.broker(0), tp);
            }, MirrorFaultsTest::hasGaps, Duration.ofSeconds(30));
            // Then let the cleaner finish: its checkpoint reaches the active segment, nothing is left to clean, and
            // the source log no longer changes under the comparison.
            UnifiedLog sourceLog = source.broker(0).logStore().log(tp).orElseThrow();
            Waits.waitUntil("the source cleaner to catch up with the active segment", () ->
                    cleanerCheckpoint(source.logDir(0), tp) == sourceLog.logSegments()
                            .get(sourceLog.logSegments().size() - 1).baseOffset());
            long sourceEnd = sourceLog.logEndOffset();

            mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", source.bootstrapServers()));
            assertEquals(Map.of(), mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of(), List.of()));
            Waits.waitUntil("mirrored to " + sourceEnd, () -> end(destination, tp) == sourceEnd);
            List<ReplicaLogs.Batch> mirrored = ReplicaLogs.read(destination.broker(0), tp);
            assertEquals(ReplicaLogs.read(source.broker(0), tp), mirrored, "batch for batch, gaps kept");
            assertTrue(hasGaps(mirrored), "the destination has the source's offset gaps");
            MirrorInvariants.awaitMirrored(source, destination, tp);
        }
    }

    @Test
    void lagAfterResumeGoesToZeroAtTheSourceEnd() throws Exception {
        String topic = "burst";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (MirroredClusters clusters = MirroredClusters.start()) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            Admin sourceAdmin = clusters.sourceAdmin();
            MirrorAdmin mirrors = clusters.mirrors();
            sourceAdmin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            produce(source, topic, 100, "a", Map.of());
            mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", source.bootstrapServers()));
            assertEquals(Map.of(), mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of(), List.of()));
            Waits.waitUntil("lag 0 at 100", () -> {
                MirrorAdmin.PartitionDescription d = partition(mirrors, topic);
                return d.lag() == 0 && d.destinationLogEndOffset() == 100 && d.sourceLogEndOffset() == 100;
            });
            MirrorInvariants.awaitMirrored(source, destination, tp);

            assertEquals(Map.of(), mirrors.pauseMirrorTopics(MIRROR, List.of(topic), List.of()));
            Waits.waitUntil("paused", () -> partition(mirrors, topic).state().equals("PAUSED"));
            produce(source, topic, 2000, "burst", Map.of());
            assertEquals(100, end(destination, tp), "nothing is fetched while paused");

            assertEquals(Map.of(), mirrors.resumeMirrorTopics(MIRROR, List.of(topic), List.of()));
            MirrorAdmin.PartitionDescription caughtUp = Waits.waitFor("lag 0 at the source end after resume",
                    () -> {
                        MirrorAdmin.PartitionDescription d = partition(mirrors, topic);
                        if (d.sourceLogEndOffset() >= 0 && d.destinationLogEndOffset() >= 0) {
                            assertEquals(Math.max(0, d.sourceLogEndOffset() - d.destinationLogEndOffset()), d.lag(),
                                    "lag = source end - destination end: " + d);
                        }
                        return d;
                    }, d -> d.state().equals("MIRRORING") && d.lag() == 0 && d.sourceLogEndOffset() == 2100);
            assertEquals(2100, caughtUp.destinationLogEndOffset());
            assertEquals(2100, end(destination, tp));
            assertEquals(ReplicaLogs.read(source.broker(0), tp), ReplicaLogs.read(destination.broker(0), tp));
            MirrorInvariants.awaitMirrored(source, destination, tp);
        }
    }

    // ---- helpers ----

    private static MirrorAdmin.PartitionDescription partition(MirrorAdmin mirrors, String topic) throws Exception {
        return mirrors.describeClusterMirrors(List.of(MIRROR)).get(MIRROR).topics().get(topic).partitions().get(0);
    }

    private static TopicDescription describe(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
    }

    /** Log end offset of the destination's (single or first running) replica; -1 if it has none yet. */
    private static long end(TestCluster cluster, TopicPartition tp) {
        return cluster.broker(cluster.runningBrokerIds().get(0)).logStore().log(tp).map(UnifiedLog::logEndOffset)
                .orElse(-1L);
    }

    private static boolean hasGaps(List<ReplicaLogs.Batch> batches) {
        long previous = -1;
        for (ReplicaLogs.Batch b : batches) {
            for (ReplicaLogs.StoredRecord r : b.records()) {
                if (previous >= 0 && r.offset() > previous + 1) {
                    return true;
                }
                previous = r.offset();
            }
        }
        return false;
    }

    /** The log cleaner's checkpoint (first dirty offset) of {@code tp}, from the log directory's checkpoint file. */
    private static long cleanerCheckpoint(File logDir, TopicPartition tp) throws Exception {
        File f = new File(logDir, "cleaner-offset-checkpoint");
        if (!f.exists()) {
            return -1;
        }
        for (String line : Files.readAllLines(f.toPath())) {
            String[] parts = line.trim().split(" ");
            if (parts.length == 3 && parts[0].equals(tp.topic()) && parts[1].equals(Integer.toString(tp.partition()))) {
                return Long.parseLong(parts[2]);
            }
        }
        return -1;
    }

    private static void produce(TestCluster cluster, String topic, int count, String prefix,
                                Map<String, Object> overrides) throws Exception {
        Map<String, Object> config = new HashMap<>(Map.of(ProducerConfig.LINGER_MS_CONFIG, 5));
        config.putAll(overrides);
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(config)) {
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                futures.add(p.send(new ProducerRecord<>(topic, 0, bytes("k" + i),
                        bytes(prefix + i))));
            }
            for (var f : futures) {
                f.get();
            }
        }
    }

    /** Writes of one more key to a compacted topic, so that its active segment moves past the older records. */
    private static void produceFiller(TestCluster cluster, String topic) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(SMALL_BATCHES)) {
            for (int i = 0; i < 12; i++) {
                p.send(new ProducerRecord<>(topic, 0, bytes("filler"), bytes("f".repeat(100))));
            }
            p.flush();
        }
    }

    /** Records of about 100 bytes with the given timestamp, in batches that fit a 4 KiB segment. */
    private static void produceAt(TestCluster cluster, String topic, int count, String prefix, long timestamp)
            throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(SMALL_BATCHES)) {
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                futures.add(p.send(new ProducerRecord<>(topic, 0, timestamp, null,
                        bytes(prefix + "-" + i + "-" + "x".repeat(80)))));
            }
            for (var f : futures) {
                f.get();
            }
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
