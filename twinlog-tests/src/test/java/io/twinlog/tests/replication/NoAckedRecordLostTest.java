package io.twinlog.tests.replication;

import io.twinlog.replication.Partition;
import io.twinlog.server.BrokerServer;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import static io.twinlog.tests.replication.Replication.assertAckedRecordsReadable;
import static io.twinlog.tests.replication.Replication.awaitIsr;
import static io.twinlog.tests.replication.Replication.awaitSingleLeader;
import static io.twinlog.tests.replication.Replication.createTopic;
import static io.twinlog.tests.replication.Replication.localLeaders;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The acks=all promise under repeated leader crashes: with min.insync.replicas=2 and RF 3, every record the cluster
 * acknowledged stays readable at the offset it was acknowledged with, however often the leader dies, and the three
 * replicas end byte-identical.
 */
@Timeout(300)
class NoAckedRecordLostTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final int ROUNDS = 4;

    @Test
    void leaderCrashesLoseNoAcknowledgedRecord() throws Exception {
        TopicPartition tp = new TopicPartition("acked", 0);
        try (TestCluster cluster = TestCluster.builder().brokers(3)
                .brokerProperty("replica.lag.time.max.ms", "3000").build().start();
             Admin admin = cluster.admin()) {
            createTopic(admin, tp.topic(), Map.of(0, List.of(0, 1, 2)), Map.of("min.insync.replicas", "2"));
            awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
            List<Long> failoverMs = new ArrayList<>();
            try (ProducerLoop producer = new ProducerLoop(cluster, tp, "r", Map.of(
                    ProducerConfig.ACKS_CONFIG, "all",
                    ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                    ProducerConfig.LINGER_MS_CONFIG, 5)).start()) {
                producer.awaitMoreAcked(200, TIMEOUT);
                for (int round = 0; round < ROUNDS; round++) {
                    int leader = awaitSingleLeader(cluster, admin, tp, TIMEOUT);
                    List<BrokerServer> survivors = new ArrayList<>();
                    cluster.runningBrokerIds().stream().filter(id -> id != leader)
                            .forEach(id -> survivors.add(cluster.broker(id)));
                    long killedAt = System.nanoTime();
                    // the crash runs on its own thread: tearing the dead broker down takes longer than failover
                    CompletableFuture<Void> kill = CompletableFuture.runAsync(() -> cluster.killBroker(leader));
                    Waits.waitUntil("a surviving broker to lead " + tp + " after broker " + leader + " crashed",
                            () -> survivors.stream().anyMatch(b -> b.replicaManager().partition(tp)
                                    .map(Partition::isLeader).orElse(false)));
                    long elected = (System.nanoTime() - killedAt) / 1_000_000;
                    kill.get();
                    producer.awaitMoreAcked(200, TIMEOUT);
                    long producing = (System.nanoTime() - killedAt) / 1_000_000;
                    failoverMs.add(elected);
                    System.out.printf("round %d: killed leader %d; new leader %s after %d ms; acks=all produce "
                            + "resumed within %d ms%n", round, leader, localLeaders(cluster, tp), elected, producing);
                    cluster.startBroker(leader);
                    awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
                    producer.awaitMoreAcked(100, TIMEOUT);
                }
                producer.stop();
                assertEquals(List.of(), producer.errors(), "an idempotent producer retries through failovers");
                System.out.printf("%d records acknowledged of %d sent; kill-to-new-leader times %s ms%n",
                        producer.acked().size(), producer.sent(), failoverMs);
                assertAckedRecordsReadable(cluster, tp, producer.acked());
            }
            List<ReplicaLogs.Batch> log = ReplicaLogs.awaitIdentical(cluster, tp, List.of(0, 1, 2));
            assertTrue(log.get(log.size() - 1).partitionLeaderEpoch() >= ROUNDS, "every crash started an epoch");
            // the session of a crashed broker ends at once, so failover should not wait for a timeout
            failoverMs.forEach(ms -> assertTrue(ms < 3_000, "kill-to-new-leader times " + failoverMs));
        }
    }
}
