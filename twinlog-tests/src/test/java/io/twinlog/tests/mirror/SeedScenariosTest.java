package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.Quarantined;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.twinlog.tests.mirror.MirrorPartitions.described;
import static io.twinlog.tests.mirror.MirrorPartitions.isr;
import static io.twinlog.tests.mirror.MirrorPartitions.leaderOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The seeds' scenarios (../shared/seeds/000), replayed on 3-broker clusters on both sides, asserting every replica
 * of both clusters batch for batch (offset, epoch, value) at the end (issue 12, point 7).
 */
@Timeout(300)
class SeedScenariosTest {
    private static final String TOPIC = "foo";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    /**
     * Seed 000, clean election: A and B mirrored; a clean leadership change on the source bumps its epoch and it
     * appends C at offset 2; before the destination fetches it the source goes down and the destination fails over
     * and takes D. At failback the old source cuts C (kept in its quarantine) and mirrors D: every replica of both
     * clusters holds A, B, the destination's producer-state barrier, D.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void seed000CleanElection() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(3),
                TestCluster.builder().brokers(3).brokerProperty("default.replication.factor", "3"))) {
            TestCluster src = clusters.source();
            TestCluster dst = clusters.destination();
            Admin srcAdmin = clusters.sourceAdmin();
            MirrorAdmin onDst = clusters.mirrors();
            MirrorAdmin onSrc = clusters.mirrorsOnSource();
            srcAdmin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(0, 1, 2))))).all().get();
            Waits.waitUntil("A's ISR complete", () -> isr(src, TP).size() == 3);
            produce(src, "A");
            changeLeader(src); // a clean leadership change: B in the next epoch
            produce(src, "B");
            MirrorSteps.startMirroring(onDst, "m", src, TOPIC);
            Waits.waitUntil("every destination replica holds offsets 0 and 1", () -> replicated(dst, 2));
            onDst.pauseMirrorTopics("m", List.of(TOPIC), List.of()); // it will not fetch what follows
            Waits.waitUntil("paused", () -> described(onDst, "m", TP).state().equals("PAUSED"));
            changeLeader(src);
            produce(src, "C"); // offset 2, in the source's next epoch; never mirrored

            // the source goes down; failover; the destination takes D
            for (int id : List.of(0, 1, 2)) {
                src.stopBroker(id);
            }
            MirrorSteps.failOver(onDst, "m", TOPIC);
            produce(dst, "D");

            // the old source comes back and fails back from the destination
            for (int id : List.of(0, 1, 2)) {
                src.startBroker(id);
            }
            onSrc.createClusterMirror("back", Map.of("bootstrap.servers", dst.bootstrapServers()));
            assertTrue(onSrc.startMirrorTopics("back", List.of(TOPIC), List.of(), List.of()).isEmpty());
            List<ReplicaLogs.Batch> converged = MirrorInvariants.awaitMirrored(dst, src, TP);
            assertEquals(Arrays.asList("A", "B", null, "D"), flatten(converged), "offsets 0-3: A, B, the barrier, D");
            assertTrue(epochOf(converged, "A") < epochOf(converged, "B") && epochOf(converged, "B")
                    < epochOf(converged, "D"), "A, B and D each in a later epoch, on both clusters: " + converged);
            List<Quarantined> kept = Quarantined.read(src, 1);
            assertEquals("C", kept.get(0).value(), "C is in the old source's quarantine");
            assertEquals("2", kept.get(0).headers().get("twinlog.quarantine.offset"));
        }
    }

    /**
     * Seed 000, unclean election: the source's new leader has an empty log (its disk was lost) and takes C at offset
     * 0 in a new epoch, after the destination had mirrored A and B; the source goes down, the destination fails
     * over and takes D. At failback the old source has no epoch of what was mirrored: its point is 0, C goes to its
     * quarantine, and every replica of both clusters ends with A, B, the barrier, D.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void seed000UncleanElectionOntoAnEmptyReplica() throws Exception {
        lostDiskElection(Map.of("unclean.leader.election.enable", "true"), true);
    }

    /**
     * Campaign defect 1 (seed 11, SEED_000_UNCLEAN): as above, but the empty replica elected after its disk was lost
     * writes nothing, so its leader-epoch checkpoint holds a new epoch at offset 0 over an empty log. At failback
     * the truncation point at 0 must drop that entry: kept, it was sent as the last fetched epoch, the destination
     * answered with a divergence that cut nothing, and the partition cycled MIRRORING -> ULE_RECOVERY for ever.
     * Here it mirrors A, B, the barrier and D like the other replicas, in one pass.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void seed000ElectionOfAnEmptyReplicaThatWritesNothing() throws Exception {
        lostDiskElection(Map.of("unclean.leader.election.enable", "true",
                "mirror.support.unclean.leader.election", "true"), false);
    }

    /**
     * A and B mirrored, the mirror paused; a replica of the source loses its disk, the leader dies, the empty one
     * leads (taking C at offset 0 with acks=1 if {@code takesC}); the source goes down, the destination fails over
     * and takes D; the source comes back with that leader first and fails back: every replica of both clusters
     * ends with A, B, the barrier, D, and C (if written) is in the old source's quarantine.
     */
    private void lostDiskElection(Map<String, String> topicConfigs, boolean takesC) throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(3),
                TestCluster.builder().brokers(3).brokerProperty("default.replication.factor", "3"))) {
            TestCluster src = clusters.source();
            TestCluster dst = clusters.destination();
            Admin srcAdmin = clusters.sourceAdmin();
            MirrorAdmin onDst = clusters.mirrors();
            MirrorAdmin onSrc = clusters.mirrorsOnSource();
            srcAdmin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(0, 1))).configs(topicConfigs)))
                    .all().get();
            Waits.waitUntil("A's ISR complete", () -> isr(src, TP).size() == 2);
            produce(src, "A");
            produce(src, "B");
            MirrorSteps.startMirroring(onDst, "m", src, TOPIC);
            Waits.waitUntil("every destination replica holds offsets 0 and 1", () -> replicated(dst, 2));
            onDst.pauseMirrorTopics("m", List.of(TOPIC), List.of());
            Waits.waitUntil("paused", () -> described(onDst, "m", TP).state().equals("PAUSED"));

            int leader = leaderOf(src, TP);
            int other = leader == 0 ? 1 : 0;
            src.stopBroker(other);
            src.wipeBroker(other); // its disk is lost
            src.killBroker(leader);
            src.startBroker(other);
            Waits.waitUntil("the empty replica leads uncleanly", () -> leaderOf(src, TP) == other);
            UnifiedLog emptyLog = src.broker(other).logStore().log(TP).orElseThrow();
            assertEquals(0, emptyLog.logEndOffset());
            assertTrue(emptyLog.latestEpoch().isPresent(), "its checkpoint holds the epoch it leads in, at 0");
            if (takesC) {
                produce1(src, "C"); // offset 0, in a new epoch: the seed's "C at offset 0 in epoch 2"
            }

            src.stopBroker(other);
            MirrorSteps.failOver(onDst, "m", TOPIC);
            produce(dst, "D");

            // the source comes back with its unclean leader's history: that broker first
            src.startBroker(other);
            Waits.waitUntil("the unclean leader leads again", () -> leaderOf(src, TP) == other);
            src.startBroker(leader);
            ReplicaLogs.awaitIdentical(src, TP, List.of(leader, other)); // the old leader drops A, B
            onSrc.createClusterMirror("back", Map.of("bootstrap.servers", dst.bootstrapServers()));
            assertTrue(onSrc.startMirrorTopics("back", List.of(TOPIC), List.of(), List.of()).isEmpty());
            List<ReplicaLogs.Batch> converged = MirrorInvariants.awaitMirrored(dst, src, TP);
            assertEquals(Arrays.asList("A", "B", null, "D"), flatten(converged),
                    "A, B, the barrier, D on every replica of both clusters");
            assertEquals("MIRRORING", described(onSrc, "back", TP).state());
            if (takesC) {
                assertEquals("C", Quarantined.read(src, 1).get(0).value(), "C is in the old source's quarantine");
            }
        }
    }

    private static int epochOf(List<ReplicaLogs.Batch> log, String value) {
        return log.stream().filter(b -> b.values().contains(value)).findFirst().orElseThrow().partitionLeaderEpoch();
    }

    /** One entry per record (null for a control record), in offset order. */
    private static List<String> flatten(List<ReplicaLogs.Batch> log) {
        List<String> out = new ArrayList<>();
        for (ReplicaLogs.Batch b : log) {
            if (b.control()) {
                out.add(null);
            } else {
                out.addAll(b.values());
            }
        }
        return out;
    }

    private static boolean replicated(TestCluster c, long end) {
        Map<Integer, Long> ends = ReplicaLogs.logEndOffsets(c, TP);
        return ends.size() == 3 && ends.values().stream().allMatch(e -> e == end);
    }

    /** A clean leadership change: the leader stops (controlled shutdown) and comes back; its epoch is left. */
    private static void changeLeader(TestCluster c) throws Exception {
        int leader = leaderOf(c, TP);
        c.stopBroker(leader);
        Waits.waitUntil("a new leader", () -> leaderOf(c, TP) >= 0 && leaderOf(c, TP) != leader);
        c.startBroker(leader);
        Waits.waitUntil("broker " + leader + " back in the ISR", () -> isr(c, TP).size() == 3);
    }

    /** With acks=1: the unclean leader is alone in its ISR. */
    private static void produce1(TestCluster cluster, String value) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("acks", "1"))) {
            p.send(new ProducerRecord<>(TOPIC, 0, null, value.getBytes(StandardCharsets.UTF_8))).get();
        }
    }

    private static void produce(TestCluster cluster, String value) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("acks", "all"))) {
            p.send(new ProducerRecord<>(TOPIC, 0, null, value.getBytes(StandardCharsets.UTF_8))).get();
        }
    }
}
