package io.twinlog.tests.replication;

import io.twinlog.replication.Partition;
import io.twinlog.server.BrokerServer;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

import static io.twinlog.tests.replication.Replication.assertAckedRecordsReadable;
import static io.twinlog.tests.replication.Replication.awaitIsr;
import static io.twinlog.tests.replication.Replication.awaitSingleLeader;
import static io.twinlog.tests.replication.Replication.createTopic;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower that lost its disk catches up from the leader and rejoins the ISR with a byte-identical log; a leader
 * shut down cleanly hands its leadership over before it stops, so an acks=all producer barely notices.
 */
@Timeout(300)
class WipedDiskTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void followerWithAWipedDiskCatchesUpAndRejoinsTheIsr() throws Exception {
        TopicPartition tp = new TopicPartition("wiped", 0);
        try (TestCluster cluster = cluster(); Admin admin = cluster.admin()) {
            // small segments: the wiped follower has to copy several
            createTopic(admin, tp.topic(), Map.of(0, List.of(0, 1, 2)),
                    Map.of("min.insync.replicas", "2", "segment.bytes", "1048576"));
            awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
            int leader = awaitSingleLeader(cluster, admin, tp, TIMEOUT);
            int follower = (leader + 1) % 3;
            byte[] padding = new byte[1_000];
            Arrays.fill(padding, (byte) 'x');
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all",
                    ProducerConfig.LINGER_MS_CONFIG, 5))) {
                write(producer, tp, "before", 2_000, padding);
                cluster.stopBroker(follower);
                cluster.wipeBroker(follower);
                awaitIsr(admin, tp, Set.of(leader, 3 - leader - follower), TIMEOUT);
                write(producer, tp, "while-down", 2_000, padding);
            }
            assertTrue(cluster.broker(leader).logStore().log(tp).orElseThrow().logSegments().size() >= 3,
                    "the leader's log spans several segments");

            cluster.startBroker(follower);
            awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
            List<ReplicaLogs.Batch> log = ReplicaLogs.awaitIdentical(cluster, tp, List.of(0, 1, 2));
            assertEquals(4_000, log.stream().mapToInt(b -> b.values().size()).sum());
            assertEquals(0, log.get(0).baseOffset());
        }
    }

    @Test
    void controlledShutdownOfTheLeaderMovesLeadershipFirst() throws Exception {
        TopicPartition tp = new TopicPartition("handover", 0);
        try (TestCluster cluster = cluster(); Admin admin = cluster.admin()) {
            createTopic(admin, tp.topic(), Map.of(0, List.of(0, 1, 2)), Map.of("min.insync.replicas", "2"));
            awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
            try (ProducerLoop producer = new ProducerLoop(cluster, tp, "h", Map.of(
                    ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                    ProducerConfig.LINGER_MS_CONFIG, 5)).start()) {
                producer.awaitMoreAcked(500, TIMEOUT);
                int oldLeader = awaitSingleLeader(cluster, admin, tp, TIMEOUT);
                Partition onOldLeader = cluster.broker(oldLeader).replicaManager().partition(tp).orElseThrow();
                int oldEpoch = onOldLeader.leaderEpoch();
                List<BrokerServer> survivors = new ArrayList<>();
                cluster.runningBrokerIds().stream().filter(id -> id != oldLeader)
                        .forEach(id -> survivors.add(cluster.broker(id)));

                long stopAt = System.nanoTime();
                Future<Void> stop = CompletableFuture.runAsync(() -> cluster.stopBroker(oldLeader));
                Waits.waitUntil("a surviving broker to lead " + tp, () -> survivors.stream().anyMatch(b ->
                        b.replicaManager().partition(tp).map(Partition::isLeader).orElse(false)));
                long movedMs = (System.nanoTime() - stopAt) / 1_000_000;
                producer.awaitMoreAcked(500, TIMEOUT);
                long resumedMs = (System.nanoTime() - stopAt) / 1_000_000;
                stop.get();
                long stoppedMs = (System.nanoTime() - stopAt) / 1_000_000;
                System.out.printf("controlled shutdown of leader %d: leadership moved after %d ms, acks=all resumed "
                        + "after %d ms, broker stopped after %d ms%n", oldLeader, movedMs, resumedMs, stoppedMs);

                // the stopping broker learned of its successor while it was still up: it left as a follower
                assertTrue(!onOldLeader.isLeader() && onOldLeader.leaderEpoch() == oldEpoch + 1,
                        "the old leader applied the handover before stopping: " + onOldLeader);
                assertTrue(resumedMs < 3_000, "acks=all produce resumed after " + resumedMs + " ms");

                cluster.startBroker(oldLeader);
                awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
                producer.awaitMoreAcked(200, TIMEOUT);
                producer.stop();
                assertEquals(List.of(), producer.errors(), "no send failed during the handover");
                assertAckedRecordsReadable(cluster, tp, producer.acked());
            }
            ReplicaLogs.awaitIdentical(cluster, tp, List.of(0, 1, 2));
        }
    }

    private static void write(KafkaProducer<byte[], byte[]> producer, TopicPartition tp, String prefix, int count,
                              byte[] padding) throws Exception {
        List<Future<?>> sends = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            byte[] value = (prefix + "-" + i + "-" + new String(padding, StandardCharsets.US_ASCII))
                    .getBytes(StandardCharsets.US_ASCII);
            sends.add(producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, value)));
        }
        for (Future<?> f : sends) {
            f.get();
        }
    }

    private static TestCluster cluster() throws Exception {
        return TestCluster.builder().brokers(3).brokerProperty("replica.lag.time.max.ms", "3000").build().start();
    }
}
