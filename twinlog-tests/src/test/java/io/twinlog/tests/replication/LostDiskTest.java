package io.twinlog.tests.replication;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;

import static io.twinlog.tests.replication.Replication.assertAckedRecordsReadable;
import static io.twinlog.tests.replication.Replication.awaitIsr;
import static io.twinlog.tests.replication.Replication.awaitLeaderIn;
import static io.twinlog.tests.replication.Replication.createTopic;
import static io.twinlog.tests.replication.Replication.describe;
import static io.twinlog.tests.replication.Replication.leaderId;
import static io.twinlog.tests.replication.Replication.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A broker that comes back without its disk while the metadata still has it in an ISR is never elected from that
 * ISR (campaign defect 3: elected with an empty log, the other replicas truncated the records it no longer had). It
 * registers the replica as lost: a partition whose only in-sync replica it was stays offline, the replicas that
 * hold the records keep them, an operator's unclean election picks one of those, and the broker rejoins the ISR
 * once caught up.
 */
@Timeout(180)
class LostDiskTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final int RECORDS = 50;

    @Test
    void theLastInSyncReplicaBackWithoutItsDiskDoesNotLeadAndTheRecordsSurvive() throws Exception {
        TopicPartition tp = new TopicPartition("lost", 0);
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start()) {
            NavigableMap<Long, String> acked = createAndFill(cluster, tp, List.of(1, 0, 2));
            // 0 and 2 crash: 1 is the last in-sync replica; then it crashes too and its disk is lost
            cluster.killBroker(0);
            cluster.killBroker(2);
            try (Admin admin = cluster.admin()) {
                awaitIsr(admin, tp, Set.of(1), TIMEOUT);
            }
            cluster.killBroker(1);
            cluster.wipeBroker(1);

            // back alone, as its own (new) controller: the ISR still says [1], the log is empty
            cluster.startBroker(1);
            try (Admin admin = cluster.admin()) {
                TopicPartitionInfo offline = Waits.waitFor("no leader of " + tp, () -> describe(admin, tp),
                        i -> leaderId(i) == -1, TIMEOUT);
                assertEquals(List.of(1), offline.isr().stream().map(n -> n.id()).toList(),
                        "the ISR is kept, so no out-of-sync replica is elected cleanly");
                File lostFile = new File(cluster.logDir(1), "twinlog-lost-replicas.json");
                assertTrue(lostFile.exists(), "the loss is recorded in the log dir for a start before it is resolved");

                cluster.startBroker(0);
                cluster.startBroker(2);
                for (int id : List.of(0, 2)) {
                    Waits.waitUntil("broker " + id + " hosts " + tp, () -> cluster.broker(id).replicaManager()
                            .partition(tp).isPresent(), TIMEOUT);
                    UnifiedLog log = cluster.broker(id).logStore().log(tp).orElseThrow();
                    assertEquals(RECORDS, log.logEndOffset(), "broker " + id + " keeps every record");
                }
                assertEquals(-1, leaderId(describe(admin, tp)), "still offline: only 1 was in sync");

                // the operator chooses availability: the unclean election passes over the empty replica
                admin.electLeaders(ElectionType.UNCLEAN, Set.of(tp)).partitions().get().get(tp)
                        .ifPresent(e -> {
                            throw new AssertionError("unclean election failed", e);
                        });
                int leader = awaitLeaderIn(admin, tp, Set.of(0, 2), TIMEOUT);
                assertFalse(leader == 1);
                awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
                assertEquals(RECORDS, cluster.broker(1).logStore().log(tp).orElseThrow().logEndOffset(),
                        "the broker that lost its disk caught up and rejoined the ISR");
                Waits.waitUntil("the loss record removed once resolved", () -> !lostFile.exists(), TIMEOUT);
            }
            assertAckedRecordsReadable(cluster, tp, acked);
        }
    }

    @Test
    void aFollowerBackWithoutItsDiskWhileTheLeaderIsDownIsNotElectedAndTheLeaderTakesOverWhenBack()
            throws Exception {
        TopicPartition tp = new TopicPartition("lost-follower", 0);
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start()) {
            NavigableMap<Long, String> acked = createAndFill(cluster, tp, List.of(2, 1, 0));
            // all three crash at once (the ISR stays [2, 1, 0]); 1 comes back first, without its disk
            cluster.killBroker(1);
            cluster.killBroker(0);
            cluster.killBroker(2);
            cluster.wipeBroker(1);
            cluster.startBroker(1);
            try (Admin admin = cluster.admin()) {
                Waits.waitFor("no leader of " + tp, () -> describe(admin, tp), i -> leaderId(i) == -1, TIMEOUT);
                cluster.startBroker(2);
                assertEquals(2, awaitLeaderIn(admin, tp, Set.of(2), TIMEOUT), "the replica with the records leads");
                cluster.startBroker(0);
                awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
            }
            assertAckedRecordsReadable(cluster, tp, acked);
        }
    }

    /** The topic with {@code replicas} (the first leads), every replica in sync, and RECORDS acknowledged by all. */
    private static NavigableMap<Long, String> createAndFill(TestCluster cluster, TopicPartition tp,
                                                            List<Integer> replicas) throws Exception {
        NavigableMap<Long, String> acked = new TreeMap<>();
        try (Admin admin = cluster.admin()) {
            createTopic(admin, tp.topic(), Map.of(0, replicas),
                    Map.of("min.insync.replicas", "2", "unclean.leader.election.enable", "false"));
            awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
            assertEquals(replicas.get(0), awaitLeaderIn(admin, tp, Set.of(replicas.get(0)), TIMEOUT));
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG,
                    "all"))) {
                for (int i = 0; i < RECORDS; i++) {
                    acked.put(send(producer, tp, "v" + i).offset(), "v" + i);
                }
            }
        }
        return acked;
    }
}
