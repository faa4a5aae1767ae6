package io.twinlog.tests.replication;

import io.twinlog.replication.Partition;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static io.twinlog.tests.replication.Replication.awaitIsr;
import static io.twinlog.tests.replication.Replication.awaitShrinkWhileProducing;
import static io.twinlog.tests.replication.Replication.createTopic;
import static io.twinlog.tests.replication.Replication.describe;
import static io.twinlog.tests.replication.Replication.ids;
import static io.twinlog.tests.replication.Replication.leaderId;
import static io.twinlog.tests.replication.Replication.localLeaders;
import static io.twinlog.tests.replication.Replication.noRetries;
import static io.twinlog.tests.replication.Replication.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka's data loss under unclean leader election, reproduced exactly, and the old leader's truncation by epoch:
 * a follower falls out of the ISR, the leader takes more records alone and dies, the out-of-sync follower leads in
 * a higher epoch without those records and takes new ones at the same offsets; the old leader returns, truncates to
 * where the epochs diverge, and every replica ends byte-identical. Without unclean election the partition waits,
 * offline, for its last in-sync replica, and nothing is lost.
 *
 * <p>Topology: the partition's two replicas are the two brokers that are not the controller, so cutting the link
 * between them leaves both able to reach the controller (the leader's ISR shrink goes through).
 */
@Timeout(300)
class UncleanElectionTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final int COMMON = 10;

    @Test
    void uncleanElectionByTopicConfigLosesTheOldLeadersTailWhichItTruncates() throws Exception {
        uncleanElectionScenario(false);
    }

    @Test
    void uncleanElectionRequestedThroughTheAdminClient() throws Exception {
        uncleanElectionScenario(true);
    }

    private void uncleanElectionScenario(boolean requestedByAdmin) throws Exception {
        TopicPartition tp = new TopicPartition("unclean", 0);
        try (TestCluster cluster = cluster(); Admin admin = cluster.admin()) {
            int[] pair = nonControllers(admin);
            int oldLeader = pair[0];
            int survivor = pair[1];
            createTopic(admin, tp.topic(), Map.of(0, List.of(oldLeader, survivor)),
                    Map.of("unclean.leader.election.enable", Boolean.toString(!requestedByAdmin)));
            awaitIsr(admin, tp, Set.of(oldLeader, survivor), TIMEOUT);
            int oldEpoch;
            long divergedAt;
            try (KafkaProducer<byte[], byte[]> acksAll = cluster.producer(noRetries("all"));
                 KafkaProducer<byte[], byte[]> acksOne = cluster.producer(noRetries("1"))) {
                for (int i = 0; i < COMMON; i++) {
                    send(acksAll, tp, "common-" + i);
                }
                oldEpoch = cluster.broker(oldLeader).replicaManager().partition(tp).orElseThrow().leaderEpoch();

                cluster.cutNetwork(oldLeader, survivor);
                awaitShrinkWhileProducing(admin, acksOne, tp, Set.of(oldLeader), TIMEOUT);
                for (int i = 0; i < 5; i++) {
                    send(acksOne, tp, "only-on-old-leader-" + i);
                }
                divergedAt = cluster.broker(survivor).logStore().log(tp).orElseThrow().logEndOffset();
                assertEquals(COMMON, divergedAt, "the cut-off follower has the common records only");
            }
            List<ReplicaLogs.Batch> oldLeaderLog = ReplicaLogs.read(cluster.broker(oldLeader), tp);

            cluster.killBroker(oldLeader);
            cluster.healNetwork(oldLeader, survivor);
            if (requestedByAdmin) {
                // without unclean election by config the partition has no leader until someone accepts the loss
                Waits.waitUntil("the partition offline after its only in-sync replica died",
                        () -> leaderId(describe(admin, tp)) == -1);
                Map<TopicPartition, Optional<Throwable>> result = admin.electLeaders(ElectionType.UNCLEAN, Set.of(tp))
                        .partitions().get();
                assertEquals(Optional.empty(), result.get(tp), "unclean election of " + tp);
            }
            Waits.waitUntil("the out-of-sync replica " + survivor + " to lead",
                    () -> leaderId(describe(admin, tp)) == survivor && localLeaders(cluster, tp).equals(Set.of(survivor)));
            Partition newLeader = cluster.broker(survivor).replicaManager().partition(tp).orElseThrow();
            assertEquals(oldEpoch + 1, newLeader.leaderEpoch(), "an unclean election starts a new epoch");
            assertEquals(List.of(survivor), newLeader.isr(), "the unclean leader is the whole ISR");
            assertEquals(COMMON, newLeader.log().logEndOffset(), "the old leader's tail is gone");

            try (KafkaProducer<byte[], byte[]> acksAll = cluster.producer(noRetries("all"))) {
                for (int i = 0; i < 3; i++) {
                    assertEquals(COMMON + i, send(acksAll, tp, "new-leader-" + i).offset(),
                            "new records reuse the offsets of the lost ones");
                }
            }

            cluster.startBroker(oldLeader);
            awaitIsr(admin, tp, Set.of(oldLeader, survivor), TIMEOUT);
            List<ReplicaLogs.Batch> log = ReplicaLogs.awaitIdentical(cluster, tp, List.of(oldLeader, survivor));
            List<String> values = values(log);
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < COMMON; i++) {
                expected.add("common-" + i);
            }
            for (int i = 0; i < 3; i++) {
                expected.add("new-leader-" + i);
            }
            assertEquals(expected, values, "the old leader's divergent records are gone from every replica");
            assertTrue(values(oldLeaderLog).contains("only-on-old-leader-4"), "the old leader had them before");
            // the shared prefix is the old leader's own batches, unchanged; the rest is the new epoch's
            assertEquals(oldLeaderLog.stream().filter(b -> b.lastOffset() < COMMON).toList(),
                    log.stream().filter(b -> b.lastOffset() < COMMON).toList());
            log.stream().filter(b -> b.baseOffset() >= COMMON)
                    .forEach(b -> assertEquals(oldEpoch + 1, b.partitionLeaderEpoch(), "epoch of " + b));
            assertEquals(Set.of(survivor), localLeaders(cluster, tp));
        }
    }

    @Test
    void withoutUncleanElectionThePartitionWaitsOfflineForItsInSyncReplica() throws Exception {
        TopicPartition tp = new TopicPartition("clean-only", 0);
        try (TestCluster cluster = cluster(); Admin admin = cluster.admin()) {
            int[] pair = nonControllers(admin);
            int lastInSync = pair[0];
            int outOfSync = pair[1];
            createTopic(admin, tp.topic(), Map.of(0, List.of(lastInSync, outOfSync)),
                    Map.of("unclean.leader.election.enable", "false"));
            awaitIsr(admin, tp, Set.of(lastInSync, outOfSync), TIMEOUT);
            try (KafkaProducer<byte[], byte[]> acksOne = cluster.producer(noRetries("1"))) {
                for (int i = 0; i < COMMON; i++) {
                    send(acksOne, tp, "common-" + i);
                }
                cluster.cutNetwork(lastInSync, outOfSync);
                awaitShrinkWhileProducing(admin, acksOne, tp, Set.of(lastInSync), TIMEOUT);
                send(acksOne, tp, "acked-by-the-last-in-sync-replica");
            }
            List<ReplicaLogs.Batch> before = ReplicaLogs.read(cluster.broker(lastInSync), tp);

            cluster.killBroker(lastInSync);
            cluster.healNetwork(lastInSync, outOfSync);
            Waits.waitUntil("the partition offline", () -> leaderId(describe(admin, tp)) == -1);
            // a leader could only come from the out-of-sync replica: it must not, however long we look
            long until = System.currentTimeMillis() + 2_000;
            while (System.currentTimeMillis() < until) {
                assertEquals(-1, leaderId(describe(admin, tp)));
                assertEquals(Set.of(), localLeaders(cluster, tp));
                assertEquals(Set.of(lastInSync), ids(describe(admin, tp).isr()), "the ISR keeps its last member");
            }

            cluster.startBroker(lastInSync);
            Waits.waitUntil("the returning in-sync replica to lead",
                    () -> leaderId(describe(admin, tp)) == lastInSync);
            awaitIsr(admin, tp, Set.of(lastInSync, outOfSync), TIMEOUT);
            List<ReplicaLogs.Batch> after = ReplicaLogs.awaitIdentical(cluster, tp, List.of(lastInSync, outOfSync));
            assertEquals(before, after, "nothing was lost and the out-of-sync replica caught up");
        }
    }

    private static TestCluster cluster() throws Exception {
        return TestCluster.builder().brokers(3).withFaultProxies()
                .brokerProperty("replica.lag.time.max.ms", "3000").build().start();
    }

    /** The two brokers that are not the controller, in id order. */
    private static int[] nonControllers(Admin admin) throws Exception {
        int controller = admin.describeCluster().controller().get().id();
        return List.of(0, 1, 2).stream().filter(id -> id != controller).mapToInt(Integer::intValue).toArray();
    }

    private static List<String> values(List<ReplicaLogs.Batch> log) {
        List<String> out = new ArrayList<>();
        log.forEach(b -> out.addAll(b.values()));
        return out;
    }
}
