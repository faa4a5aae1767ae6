package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.storage.internals.checkpoint.CleanShutdownFileHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Producer ids are allocated from 0 on every cluster, and mirrored batches carry the source's producer ids,
 * epochs and sequences. After a failover the destination's first idempotent producers (kafka-clients' default)
 * get ids the partition already knows from the source; unless the copied producer state is cleared at the
 * failover (the producer-state barrier, decision 24), their first batches are taken for duplicates and
 * acknowledged at the mirrored records' offsets without being written. Every acknowledged record must be in the
 * log, at its acknowledged offset, on every replica, also after a restart; and the same after a failback.
 */
@Timeout(180)
class ProducerIdsAfterFailoverTest {
    private static final String TOPIC = "payments";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @Test
    void newIdempotentProducersAfterFailoverAreWrittenAtTheirAcknowledgedOffsetsOnEveryReplica() throws Exception {
        try (TestCluster source = TestCluster.builder().brokers(1).build().start();
             TestCluster destination = threeBrokers()) {
            mirrorTwoProducersAndFailOver(source, destination);

            // the destination's first producers get ids 0, 1, 2: the first two collide with the mirrored ones
            List<Acked> acked = produceOneEach(destination, "destination", 3);
            assertEveryAckedRecordOnEveryReplica(destination, acked);
            MirrorInvariants.awaitSharedPrefix(source, destination, TP, 2);

            // a restart rebuilds the producer state from the log: the copied ids must stay forgotten
            int leader = leaderOf(destination);
            destination.stopBroker(leader);
            destination.startBroker(leader);
            List<Acked> afterRestart = new ArrayList<>(acked);
            afterRestart.addAll(produceOneEach(destination, "after-restart", 3));
            assertEveryAckedRecordOnEveryReplica(destination, afterRestart);
        }
    }

    @Test
    void aCrashThatLostTheBarriersSnapshotAppliesTheBarrierAgainFromTheLog() throws Exception {
        try (TestCluster source = TestCluster.builder().brokers(1).build().start();
             TestCluster destination = threeBrokers()) {
            mirrorTwoProducersAndFailOver(source, destination);
            ReplicaLogs.awaitIdentical(destination, TP, destination.runningBrokerIds()); // the barrier everywhere

            // the whole cluster goes down before any producer here, as in a power cut: no clean-shutdown file, and
            // the barrier's producer snapshot lost, so Kafka's recovery replays the log across the barrier and
            // brings the source's producers 0 and 1 back
            for (int id : List.of(0, 1, 2)) {
                destination.stopBroker(id);
            }
            for (int id : List.of(0, 1, 2)) {
                Path dir = destination.logDir(id).toPath();
                Files.deleteIfExists(dir.resolve(CleanShutdownFileHandler.CLEAN_SHUTDOWN_FILE_NAME));
                try (Stream<Path> files = Files.list(dir.resolve(TP.toString()))) {
                    for (Path f : files.filter(f -> f.toString().endsWith(".snapshot")).toList()) {
                        Files.delete(f);
                    }
                }
            }
            for (int id : List.of(0, 1, 2)) {
                destination.startBroker(id);
            }
            Set<Long> sourceProducers = producerIds(source, source.runningBrokerIds().get(0));
            assertEquals(2, sourceProducers.size(), "the source's two producers: " + sourceProducers);
            for (int id : List.of(0, 1, 2)) {
                Set<Long> known = producerIds(destination, id);
                known.retainAll(sourceProducers);
                assertEquals(Set.of(), known, "broker " + id + " forgot the source's producers again");
            }

            // and this cluster's first producers (ids from its own blocks, which start where the source's did)
            List<Acked> acked = produceOneEach(destination, "after-crash", 3);
            assertEveryAckedRecordOnEveryReplica(destination, acked);
        }
    }

    @Test
    void newIdempotentProducersOnTheOldSourceAfterAFailbackAreWritten() throws Exception {
        try (TestCluster a = TestCluster.builder().brokers(1).build().start();
             TestCluster b = TestCluster.builder().brokers(1).build().start();
             MirrorAdmin onB = MirrorAdmin.create(b.bootstrapServers(), Duration.ofSeconds(60));
             MirrorAdmin onA = MirrorAdmin.create(a.bootstrapServers(), Duration.ofSeconds(60))) {
            mirrorTwoProducersAndFailOverToB(a, b, onB);
            List<Acked> onBAcked = produceOneEach(b, "b", 4); // B's ids 0..3 (0, 1 collide with A's)
            assertEveryAckedRecordOnEveryReplica(b, onBAcked);

            // failback: A mirrors B, then fails over to itself again
            MirrorSteps.startMirroring(onA, "from-b", b, TOPIC);
            Waits.waitUntil("A mirrors", () -> state(onA, "from-b").equals("MIRRORING"));
            MirrorInvariants.awaitMirrored(b, a, TP); // with B's barrier, mirrored like any batch
            MirrorSteps.failOver(onA, "from-b", TOPIC);
            // A's next producers get A's next ids (2, 3, ...), which B's mirrored producers used
            List<Acked> onAAcked = produceOneEach(a, "a-again", 4);
            assertEveryAckedRecordOnEveryReplica(a, onAAcked);
        }
    }

    /**
     * Fault campaign seed 20261205, round 26: every failover after a cluster's first kept the last mirrored offset
     * of that first one, found its barrier and wrote none, so the producers mirrored since stayed known and this
     * cluster's first producers with the same ids were answered as duplicates: seven acknowledged records lost.
     */
    @Test
    void aSecondFailoverOfTheSameClusterWritesItsOwnBarrierAndRecordsItsOwnOffset() throws Exception {
        try (TestCluster a = TestCluster.builder().brokers(1).build().start();
             TestCluster b = TestCluster.builder().brokers(1).build().start();
             MirrorAdmin onB = MirrorAdmin.create(b.bootstrapServers(), Duration.ofSeconds(60));
             MirrorAdmin onA = MirrorAdmin.create(a.bootstrapServers(), Duration.ofSeconds(60))) {
            mirrorTwoProducersAndFailOverToB(a, b, onB); // B's first failover: its barrier at 2
            long firstFailover = lastMirroredOffset(onB, "from-a");
            produceOneEach(b, "b", 2); // B's ids 0, 1

            MirrorSteps.startMirroring(onA, "from-b", b, TOPIC);
            MirrorInvariants.awaitMirrored(b, a, TP);
            MirrorSteps.failOver(onA, "from-b", TOPIC);
            produceOneEach(a, "a-again", 6); // A's ids 2..7, forgotten by no barrier on B yet

            // B fails back (A's barrier and records mirrored), then over again: B's next ids are 2, 3, ...
            Map<String, ?> refused = onB.startMirrorTopics("from-a", List.of(TOPIC), List.of(), List.of());
            assertEquals(Map.of(), refused, "the failback of B");
            MirrorInvariants.awaitMirrored(a, b, TP);
            long mirroredEnd = end(b);
            MirrorSteps.failOver(onB, "from-a", TOPIC);
            List<Acked> acked = produceOneEach(b, "b-again", 4);
            assertEveryAckedRecordOnEveryReplica(b, acked);
            assertEquals(mirroredEnd, lastMirroredOffset(onB, "from-a"), "the second failover's own last mirrored "
                    + "offset, not the first's (" + firstFailover + ")");
        }
    }

    /** A's first two producers (its ids 0 and 1) on a new topic, mirrored to B, which then fails over. */
    private static void mirrorTwoProducersAndFailOverToB(TestCluster a, TestCluster b, MirrorAdmin onB)
            throws Exception {
        try (Admin aAdmin = a.admin()) {
            aAdmin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
        }
        produceOneEach(a, "a", 2);
        MirrorSteps.startMirroring(onB, "from-a", a, TOPIC);
        Waits.waitUntil("B holds A's records", () -> end(b) == 2);
        MirrorSteps.failOver(onB, "from-a", TOPIC);
    }

    private static TestCluster threeBrokers() throws Exception {
        return TestCluster.builder().brokers(3).brokerProperty("default.replication.factor", "3").build().start();
    }

    /** Two idempotent producers on the source (its ids 0 and 1), mirrored to the destination, then failed over. */
    private static void mirrorTwoProducersAndFailOver(TestCluster source, TestCluster destination) throws Exception {
        try (Admin sourceAdmin = source.admin();
             MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
            sourceAdmin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            produceOneEach(source, "source", 2);
            MirrorSteps.startMirroring(mirrors, "dr", source, TOPIC);
            MirrorInvariants.awaitMirrored(source, destination, TP);
            MirrorSteps.failOver(mirrors, "dr", TOPIC);
        }
    }

    /** An acknowledged record: the offset the broker answered and the value sent. */
    private record Acked(long offset, String value) {
    }

    /** One record from each of {@code producers} new idempotent producers, each closed before the next starts. */
    private static List<Acked> produceOneEach(TestCluster cluster, String prefix, int producers) throws Exception {
        List<Acked> out = new ArrayList<>();
        for (int i = 0; i < producers; i++) {
            String value = prefix + "-" + i;
            try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of())) { // enable.idempotence=true: default
                RecordMetadata m = p.send(new ProducerRecord<>(TOPIC, 0, null,
                        value.getBytes(StandardCharsets.UTF_8))).get();
                out.add(new Acked(m.offset(), value));
            }
        }
        return out;
    }

    private static void assertEveryAckedRecordOnEveryReplica(TestCluster cluster, List<Acked> acked) throws Exception {
        List<ReplicaLogs.Batch> log = ReplicaLogs.awaitIdentical(cluster, TP, cluster.runningBrokerIds());
        for (Acked a : acked) {
            String found = log.stream().flatMap(batch -> batch.records().stream())
                    .filter(r -> r.offset() == a.offset()).map(ReplicaLogs.StoredRecord::value).findFirst()
                    .orElse("<no record>");
            assertEquals(a.value(), found, "the record acknowledged at offset " + a.offset() + " is in the log there");
        }
        assertTrue(acked.stream().map(Acked::offset).distinct().count() == acked.size(),
                "every acknowledgement has its own offset: " + acked);
    }

    /** The producer ids a broker's replica of the partition knows. */
    private static Set<Long> producerIds(TestCluster cluster, int broker) {
        return new HashSet<>(cluster.broker(broker).replicaManager().partition(TP).orElseThrow().log()
                .producerStateManager().activeProducers().keySet());
    }

    private static int leaderOf(TestCluster cluster) throws Exception {
        try (Admin admin = cluster.admin()) {
            return admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC).partitions().get(0).leader()
                    .id();
        }
    }

    private static String state(MirrorAdmin admin, String mirror) throws Exception {
        return admin.describeClusterMirrors(List.of(mirror)).get(mirror).topics().get(TOPIC).partitions().get(0)
                .state();
    }

    private static long lastMirroredOffset(MirrorAdmin admin, String mirror) throws Exception {
        return admin.describeClusterMirrors(List.of(mirror)).get(mirror).topics().get(TOPIC).partitions().get(0)
                .lastMirroredOffset();
    }

    private static long end(TestCluster c) {
        return c.broker(c.runningBrokerIds().get(0)).logStore().log(TP).map(l -> l.logEndOffset()).orElse(-1L);
    }
}
