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
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.twinlog.tests.mirror.MirrorPartitions.described;
import static io.twinlog.tests.mirror.MirrorPartitions.isr;
import static io.twinlog.tests.mirror.MirrorPartitions.leaderOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Failback's truncation is partition-wide (issue 12, point 1; decision 38): the truncation point is recorded with
 * the partition's mirror state and every replica applies it explicitly, not through epoch comparison, which the
 * two clusters can fool because each numbers its epochs on its own.
 *
 * <p>The fooling case, for real: A's own tail after the failover is written in the same leader epoch B writes its
 * records in after the failover, at the same offsets. A follower of A that holds that tail and is away during the
 * failback sees, when it returns, a leader whose epoch ends past its own log end: Kafka's comparison keeps its tail.
 * The recorded point makes it cut first.
 */
@Timeout(300)
class FailbackTruncationPointTest {
    private static final String TOPIC = "ledger";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aReplicaAwayDuringFailbackAppliesTheRecordedPointWhenItReturns() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(3),
                TestCluster.builder().brokers(3))) {
            TestCluster a = clusters.source();
            TestCluster b = clusters.destination();
            Admin aAdmin = clusters.sourceAdmin();
            MirrorAdmin onB = clusters.mirrors();
            MirrorAdmin onA = clusters.mirrorsOnSource();
            aAdmin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(0, 1, 2))))).all().get();
            int bEpoch = tailInTheOtherClustersEpoch(a, b, onB);
            int away = awayFollower(a);
            a.stopBroker(away); // holds A's tail; away while A fails back

            MirrorSteps.startMirroring(onA, "from-b", b, TOPIC);
            Waits.waitUntil("A mirrors again", () -> partition(onA).state().equals("MIRRORING"),
                    Duration.ofSeconds(60));
            a.startBroker(away);
            List<ReplicaLogs.Batch> converged = MirrorInvariants.awaitMirrored(b, a, TP);
            assertTrue(converged.stream().flatMap(batch -> batch.values().stream())
                    .noneMatch(v -> v != null && v.startsWith("lost")), "no replica kept A's own tail: " + converged);
            assertEquals(131, converged.get(converged.size() - 1).lastOffset() + 1, "100 + barrier + 30");

            assertEquals(20, partition(onA).truncatedOffsets(), "describe counts what the cut removed");
            assertEquals(-1, partition(onA).consistentFromOffset(), "without the flag nothing is guaranteed through an "
                    + "unclean election");
            // what the leader cut was kept first, with where it came from (issue 12, point 5)
            List<Quarantined> kept = Quarantined.read(a, 20);
            for (int i = 0; i < 20; i++) {
                Quarantined q = kept.get(i);
                assertEquals("lost-" + i, q.value());
                assertEquals(Map.of("twinlog.quarantine.topic", TOPIC, "twinlog.quarantine.partition", "0",
                        "twinlog.quarantine.offset", Long.toString(100 + i),
                        "twinlog.quarantine.leader.epoch", Integer.toString(bEpoch),
                        "twinlog.quarantine.mirror", "from-b"), q.origin("topic", "partition", "offset",
                        "leader.epoch", "mirror"), "headers of " + q);
            }
        }
    }

    /**
     * The flag off, and the worst case for it: the stale replica holding A's own tail is the only one left after the
     * failback and is elected uncleanly. It applies the recorded point before it leads (not Kafka's epoch
     * comparison, which its tail would pass), its new leadership compares the log with B's before mirroring (issue
     * 12 point 4b), and every replica ends identical to B: repaired, not silent.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void withoutTheFlagAStaleReplicaElectedUncleanlyAfterFailbackAppliesThePointBeforeItLeads() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(3),
                TestCluster.builder().brokers(3))) {
            TestCluster a = clusters.source();
            TestCluster b = clusters.destination();
            Admin aAdmin = clusters.sourceAdmin();
            MirrorAdmin onB = clusters.mirrors();
            MirrorAdmin onA = clusters.mirrorsOnSource();
            aAdmin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(0, 1, 2)))
                    .configs(Map.of("unclean.leader.election.enable", "true")))).all().get();
            tailInTheOtherClustersEpoch(a, b, onB);
            int stale = awayFollower(a);
            a.stopBroker(stale);
            MirrorSteps.startMirroring(onA, "from-b", b, TOPIC);
            Waits.waitUntil("A mirrors B's log", () -> partition(onA).state().equals("MIRRORING")
                    && end(a, leaderOf(a, TP)) == 131, Duration.ofSeconds(60));

            List<Integer> others = List.of(0, 1, 2).stream().filter(id -> id != stale).toList();
            for (int id : others) {
                a.killBroker(id);
            }
            a.startBroker(stale); // the only replica left: A's leader by an unclean election
            Waits.waitUntil("the stale replica leads uncleanly", () -> leaderOf(a, TP) == stale);
            Waits.waitUntil("it mirrors again from B", () -> partition(onA).state().equals("MIRRORING")
                    && end(a, stale) == 131, Duration.ofSeconds(60));
            for (int id : others) {
                a.startBroker(id);
            }
            List<ReplicaLogs.Batch> converged = MirrorInvariants.awaitMirrored(b, a, TP);
            assertTrue(converged.stream().flatMap(batch -> batch.values().stream())
                    .noneMatch(v -> v != null && v.startsWith("lost")), "no replica kept A's own tail: " + converged);
            assertEquals(131, converged.get(converged.size() - 1).lastOffset() + 1, "100 + barrier + 30");
        }
    }

    /**
     * Seed 003 with the flag: a replica away during the failback's truncation keeps the partition in LOG_TRUNCATION
     * (describe names the point and the replica), then FAILED after mirror.state.timeout.ms with the reason, not
     * retried by itself; once the broker is back the operator starts the topic again and every replica converges;
     * then an unclean election onto that replica, stale again, introduces no divergence.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void withTheFlagAMissingReplicaHoldsTheTruncationThenFailsItUntilTheOperatorRestartsIt() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(3)
                .brokerProperty("mirror.state.timeout.ms", "5000"),
                TestCluster.builder().brokers(1))) {
            TestCluster a = clusters.source();
            TestCluster b = clusters.destination();
            Admin aAdmin = clusters.sourceAdmin();
            MirrorAdmin onB = clusters.mirrors();
            MirrorAdmin onA = clusters.mirrorsOnSource();
            aAdmin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(0, 1, 2)))
                    .configs(Map.of("mirror.support.unclean.leader.election", "true",
                            "unclean.leader.election.enable", "true")))).all().get();
            produce(a, "a", 50);
            MirrorSteps.startMirroring(onB, "from-a", a, TOPIC);
            Waits.waitUntil("B holds A's 50 records", () -> end(b, 0) == 50);
            MirrorSteps.failOver(onB, "from-a", TOPIC);
            produce(a, "lost", 10);
            ReplicaLogs.awaitIdentical(a, TP, List.of(0, 1, 2));
            produce(b, "b", 20);
            int away = awayFollower(a);
            a.stopBroker(away);

            MirrorSteps.startMirroring(onA, "from-b", b, TOPIC);
            MirrorAdmin.PartitionDescription waiting = Waits.waitFor("LOG_TRUNCATION waiting for broker " + away,
                    () -> partition(onA), p -> p.state().equals("LOG_TRUNCATION") && p.truncationOffset() == 50
                            && p.truncationPendingReplicas().equals(List.of(away)));
            assertEquals(50, waiting.truncationOffset(), "the end of B's last mirrored epoch from A");
            MirrorAdmin.PartitionDescription failed = Waits.waitFor("FAILED after mirror.state.timeout.ms",
                    () -> partition(onA), p -> p.state().equals("FAILED"));
            assertTrue(failed.lastError().contains(away + " (has not applied it)")
                    && failed.lastError().contains("--start"), failed.lastError());
            assertTrue(failed.retryAttempt() < 0, "not retried by itself");

            a.startBroker(away);
            Waits.waitUntil("broker " + away + " applied the point", () -> partition(onA)
                    .truncationPendingReplicas().isEmpty() || !isr(a, TP).contains(away));
            assertEquals("FAILED", partition(onA).state(), "still waiting for the operator");
            assertTrue(onA.startMirrorTopics("from-b", List.of(TOPIC), List.of(), List.of()).isEmpty(),
                    "the operator starts the topic again");
            Waits.waitUntil("A mirrors again", () -> partition(onA).state().equals("MIRRORING"),
                    Duration.ofSeconds(60));
            List<ReplicaLogs.Batch> converged = MirrorInvariants.awaitMirrored(b, a, TP);
            assertTrue(converged.stream().flatMap(batch -> batch.values().stream())
                    .noneMatch(v -> v != null && v.startsWith("lost")), "no replica kept A's own tail");
            assertEquals(71, converged.get(converged.size() - 1).lastOffset() + 1, "50 + barrier + 20");
            assertEquals(50, partition(onA).consistentFromOffset(), "every replica applied the point with the flag: "
                    + "records from it on are consistent with B's through any unclean election");

            // the seed's guarantee: an unclean election onto that replica, stale again, introduces no divergence
            a.stopBroker(away);
            produce(b, "more", 10);
            List<Integer> others = List.of(0, 1, 2).stream().filter(id -> id != away).toList();
            Waits.waitUntil("A's other replicas hold B's 81 offsets", () -> others.stream()
                    .allMatch(id -> end(a, id) == 81));
            for (int id : others) {
                a.killBroker(id);
            }
            a.startBroker(away);
            Waits.waitUntil("broker " + away + " leads uncleanly", () -> leaderOf(a, TP) == away);
            Waits.waitUntil("it mirrors B's tail itself", () -> partition(onA).state().equals("MIRRORING")
                    && end(a, away) == 81, Duration.ofSeconds(60));
            for (int id : others) {
                a.startBroker(id);
            }
            List<ReplicaLogs.Batch> after = MirrorInvariants.awaitMirrored(b, a, TP);
            assertEquals(81, after.get(after.size() - 1).lastOffset() + 1);
            assertEquals(converged, after.subList(0, converged.size()), "what was consistent stayed so");
        }
    }

    /**
     * The flag enabled mid-way (issue 12, point 2): describe shows no consistency guarantee ("none yet", -1) until the
     * next truncation, which every assigned replica then applies; from its point on the records are consistent.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void theFlagEnabledMidWayTakesEffectAtTheNextTruncation() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(1),
                TestCluster.builder().brokers(3).brokerProperty("default.replication.factor", "3"))) {
            TestCluster a = clusters.source();
            TestCluster b = clusters.destination();
            Admin aAdmin = clusters.sourceAdmin();
            Admin bAdmin = clusters.destinationAdmin();
            MirrorAdmin onB = clusters.mirrors();
            aAdmin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            produce(a, "a", 30);
            MirrorSteps.startMirroring(onB, "from-a", a, TOPIC);
            Waits.waitUntil("every replica of B holds A's 30 records", () -> ReplicaLogs.logEndOffsets(b, TP)
                    .values().stream().filter(e -> e == 30).count() == 3);
            assertEquals(-1, described(onB, "from-a", TP).consistentFromOffset(), "started without the flag");

            ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, TOPIC);
            bAdmin.incrementalAlterConfigs(Map.of(topic, List.of(new AlterConfigOp(new ConfigEntry(
                    "mirror.support.unclean.leader.election", "true"), AlterConfigOp.OpType.SET)))).all().get();
            Waits.waitUntil("B's flag is on", () -> "true".equals(flag(bAdmin, topic).value()));
            assertEquals(-1, described(onB, "from-a", TP).consistentFromOffset(), "none yet: no truncation since");

            MirrorSteps.failOver(onB, "from-a", TOPIC);
            produce(b, "b", 5);
            produce(a, "a2", 10);
            assertTrue(onB.startMirrorTopics("from-a", List.of(TOPIC), List.of(), List.of()).isEmpty(),
                    "B follows A again: the next truncation");
            Waits.waitUntil("B mirrors A's 40 records on every replica", () -> described(onB, "from-a", TP).state()
                    .equals("MIRRORING") && ReplicaLogs.logEndOffsets(b, TP).values().stream()
                    .filter(e -> e == 40).count() == 3, Duration.ofSeconds(60));
            assertEquals(0, described(onB, "from-a", TP).consistentFromOffset(), "A has no record of mirroring from "
                    + "B: the point is 0, applied by every replica, so every record is consistent from there");
            MirrorInvariants.awaitMirrored(a, b, TP);
        }
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void theFlagIsATypedTopicConfigShownByDescribeAndNeverCopiedFromTheSource() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start()) {
            TestCluster a = clusters.source();
            Admin aAdmin = clusters.sourceAdmin();
            Admin bAdmin = clusters.destinationAdmin();
            MirrorAdmin onB = clusters.mirrors();
            aAdmin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1).configs(
                    Map.of("mirror.support.unclean.leader.election", "true")))).all().get();
            ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, TOPIC);
            assertEquals("true", flag(aAdmin, topic).value());
            assertEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, flag(aAdmin, topic).source());

            ExecutionException bad = assertThrows(ExecutionException.class, () -> aAdmin.incrementalAlterConfigs(
                    Map.of(topic, List.of(new AlterConfigOp(new ConfigEntry("mirror.support.unclean.leader.election",
                            "sometimes"), AlterConfigOp.OpType.SET)))).all().get());
            assertTrue(bad.getCause() instanceof InvalidConfigurationException
                    || bad.getCause() instanceof InvalidRequestException, bad.toString());
            assertTrue(bad.getCause().getMessage().contains("mirror.support.unclean.leader.election"),
                    bad.getCause().getMessage());

            MirrorSteps.startMirroring(onB, "from-a", a, TOPIC);
            Waits.waitUntil("B's mirror topic exists", () -> bAdmin.listTopics().names().get().contains(TOPIC));
            assertEquals("false", flag(bAdmin, topic).value(), "the destination's own setting: not copied");
            assertEquals(ConfigEntry.ConfigSource.DEFAULT_CONFIG, flag(bAdmin, topic).source());
            bAdmin.incrementalAlterConfigs(Map.of(topic, List.of(new AlterConfigOp(new ConfigEntry(
                    "mirror.support.unclean.leader.election", "true"), AlterConfigOp.OpType.SET)))).all().get();
            Waits.waitUntil("B's flag is on", () -> "true".equals(flag(bAdmin, topic).value()));
        }
    }

    /**
     * A mirrored to B (100 records), B failed over and took 30 records (offsets 101..130 in B's epoch; 100 is the
     * barrier), and A's leader changed until A's epoch is B's before A took 20 records of its own at offsets
     * 100..119: A's tail has B's epoch numbers at B's offsets, the case Kafka's epoch comparison cannot see.
     *
     * @return B's leader epoch, A's now
     */
    private static int tailInTheOtherClustersEpoch(TestCluster a, TestCluster b, MirrorAdmin onB) throws Exception {
        produce(a, "a", 100);
        MirrorSteps.startMirroring(onB, "from-a", a, TOPIC);
        Waits.waitUntil("B holds A's 100 records", () -> end(b, leaderOf(b, TP)) == 100);
        MirrorSteps.failOver(onB, "from-a", TOPIC);
        int bEpoch = leaderEpoch(b);
        produce(b, "b", 30);
        while (leaderEpoch(a) < bEpoch) {
            int leader = leaderOf(a, TP);
            a.stopBroker(leader);
            Waits.waitUntil("a new leader on A", () -> leaderOf(a, TP) >= 0 && leaderOf(a, TP) != leader);
            a.startBroker(leader);
            Waits.waitUntil("broker " + leader + " back in A's ISR", () -> isr(a, TP).size() == 3);
        }
        assertEquals(bEpoch, leaderEpoch(a), "the test needs A's epoch to be exactly B's");
        produce(a, "lost", 20);
        ReplicaLogs.awaitIdentical(a, TP, List.of(0, 1, 2));
        return bEpoch;
    }

    private static ConfigEntry flag(Admin admin, ConfigResource topic) throws Exception {
        return admin.describeConfigs(List.of(topic)).all().get().get(topic)
                .get("mirror.support.unclean.leader.election");
    }

    private static int leaderEpoch(TestCluster c) {
        return Waits.waitFor("a leader of " + TP, () -> leaderOf(c, TP), id -> id >= 0) >= 0
                ? c.broker(leaderOf(c, TP)).replicaManager().partition(TP).orElseThrow().leaderEpoch() : -1;
    }

    private static int awayFollower(TestCluster c) {
        int leader = leaderOf(c, TP);
        return leader == 0 ? 1 : 0;
    }

    private static long end(TestCluster c, int broker) {
        return broker < 0 ? -1 : c.broker(broker).logStore().log(TP).map(l -> l.logEndOffset()).orElse(-1L);
    }

    private static void produce(TestCluster cluster, String prefix, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("linger.ms", 5))) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(TOPIC, 0, null, (prefix + "-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
    }

    /** The partition as mirror "from-b" describes it. */
    private static MirrorAdmin.PartitionDescription partition(MirrorAdmin admin) throws Exception {
        return described(admin, "from-b", TP);
    }
}
