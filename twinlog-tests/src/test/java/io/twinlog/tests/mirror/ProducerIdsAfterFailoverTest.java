package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
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
        try (MirroredClusters clusters = threeBrokerDestination()) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            mirrorTwoProducersAndFailOver(clusters);

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
        try (MirroredClusters clusters = threeBrokerDestination()) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            mirrorTwoProducersAndFailOver(clusters);
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
        try (MirroredClusters clusters = MirroredClusters.start()) {
            TestCluster a = clusters.source();
            TestCluster b = clusters.destination();
            MirrorAdmin onA = clusters.mirrorsOnSource();
            mirrorTwoProducersAndFailOver(clusters);
            List<Acked> onBAcked = produceOneEach(b, "b", 4); // B's ids 0..3 (0, 1 collide with A's)
            assertEveryAckedRecordOnEveryReplica(b, onBAcked);

            // failback: A mirrors B, then fails over to itself again
            clusters.failBack("from-b", TOPIC);
            MirroredClusters.awaitState(onA, "from-b", TOPIC, "MIRRORING");
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
        try (MirroredClusters clusters = MirroredClusters.start()) {
            TestCluster a = clusters.source();
            TestCluster b = clusters.destination();
            MirrorAdmin onB = clusters.mirrors();
            MirrorAdmin onA = clusters.mirrorsOnSource();
            mirrorTwoProducersAndFailOver(clusters); // B's first failover: its barrier at 2
            long firstFailover = lastMirroredOffset(onB, "from-a");
            produceOneEach(b, "b", 2); // B's ids 0, 1

            clusters.failBack("from-b", TOPIC);
            MirrorInvariants.awaitMirrored(b, a, TP);
            MirrorSteps.failOver(onA, "from-b", TOPIC);
            produceOneEach(a, "a-again", 6); // A's ids 2..7, forgotten by no barrier on B yet

            // B fails back (A's barrier and records mirrored), then over again: B's next ids are 2, 3, ...
            Map<String, ?> refused = onB.startMirrorTopics("from-a", List.of(TOPIC), List.of(), List.of());
            assertEquals(Map.of(), refused, "the failback of B");
            MirrorInvariants.awaitMirrored(a, b, TP);
            long mirroredEnd = b.logEndOffset(TP);
            MirrorSteps.failOver(onB, "from-a", TOPIC);
            List<Acked> acked = produceOneEach(b, "b-again", 4);
            assertEveryAckedRecordOnEveryReplica(b, acked);
            assertEquals(mirroredEnd, lastMirroredOffset(onB, "from-a"), "the second failover's own last mirrored "
                    + "offset, not the first's (" + firstFailover + ")");
        }
    }

    /** A one-broker source and a destination of three brokers that replicates its topics three times. */
    private static MirroredClusters threeBrokerDestination() throws Exception {
        return MirroredClusters.start(TestCluster.builder().brokers(1), TestCluster.builder().brokers(3)
                .brokerProperty("default.replication.factor", "3"));
    }

    /**
     * Two idempotent producers on the source (its ids 0 and 1, values {@code a-0}, {@code a-1}) on a new topic,
     * mirrored to the destination by mirror "from-a", which then fails over.
     */
    private static void mirrorTwoProducersAndFailOver(MirroredClusters clusters) throws Exception {
        clusters.createSourceTopics(new NewTopic(TOPIC, 1, (short) 1));
        produceOneEach(clusters.source(), "a", 2);
        clusters.mirror("from-a", TOPIC);
        clusters.awaitMirrored(TP);
        clusters.failOver("from-a", TOPIC);
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

    private static long lastMirroredOffset(MirrorAdmin admin, String mirror) throws Exception {
        return MirroredClusters.partition(admin, mirror, TP).lastMirroredOffset();
    }
}
