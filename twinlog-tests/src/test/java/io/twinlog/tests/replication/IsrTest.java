package io.twinlog.tests.replication;

import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.twinlog.tests.replication.Replication.awaitIsr;
import static io.twinlog.tests.replication.Replication.awaitShrinkWhileProducing;
import static io.twinlog.tests.replication.Replication.createTopic;
import static io.twinlog.tests.replication.Replication.describe;
import static io.twinlog.tests.replication.Replication.ids;
import static io.twinlog.tests.replication.Replication.noRetries;
import static io.twinlog.tests.replication.Replication.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ISR membership as Kafka keeps it: a follower cut off from its leader leaves the ISR once it has been behind the
 * leader's log end for {@code replica.lag.time.max.ms} (not merely silent: a follower of an idle partition stays),
 * and rejoins when it has caught up again; acks=all needs min.insync.replicas members while acks=1 does not, and
 * a record appended while the ISR was large enough but committed only after it shrank below that is written but not
 * acknowledged (NOT_ENOUGH_REPLICAS_AFTER_APPEND).
 */
@Timeout(300)
class IsrTest {
    private static final long LAG_TIME_MAX_MS = 3_000;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void isrShrinksAndExpandsWithTheFollowersAndGuardsAcksAll() throws Exception {
        TopicPartition tp = new TopicPartition("isr", 0);
        TopicPartition idle = new TopicPartition("idle", 0);
        try (TestCluster cluster = TestCluster.builder().brokers(3).withFaultProxies()
                .brokerProperty("replica.lag.time.max.ms", Long.toString(LAG_TIME_MAX_MS)).build().start();
             Admin admin = cluster.admin()) {
            // the leader is the controller, so its ISR changes reach the controller whatever link is cut
            int leader = admin.describeCluster().controller().get().id();
            List<Integer> followers = new ArrayList<>(List.of(0, 1, 2));
            followers.remove(Integer.valueOf(leader));
            int first = followers.get(0);
            int second = followers.get(1);
            createTopic(admin, tp.topic(), Map.of(0, List.of(leader, first, second)), Map.of("min.insync.replicas", "2"));
            createTopic(admin, idle.topic(), Map.of(0, List.of(leader, first)), Map.of());
            awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
            awaitIsr(admin, idle, Set.of(leader, first), TIMEOUT);
            try (KafkaProducer<byte[], byte[]> acksAll = cluster.producer(noRetries("all"));
                 KafkaProducer<byte[], byte[]> acksOne = cluster.producer(noRetries("1"))) {
                send(acksAll, tp, "all-isr-0");
                send(acksAll, idle, "idle-0");

                cluster.cutNetwork(leader, first);
                long cutAt = System.nanoTime();
                awaitShrinkWhileProducing(admin, acksOne, tp, Set.of(leader, second), TIMEOUT);
                long shrunkAfterMs = (System.nanoTime() - cutAt) / 1_000_000;
                System.out.printf("follower %d left the ISR %d ms after the cut%n", first, shrunkAfterMs);
                // lastCaughtUp is the follower's last fetch before the cut (a fetch wait or so earlier): the shrink
                // comes about replica.lag.time.max.ms after the cut, not at once
                assertTrue(shrunkAfterMs >= LAG_TIME_MAX_MS / 2, "left the ISR after only " + shrunkAfterMs + " ms");
                assertEquals(Set.of(leader, first), ids(describe(admin, idle).isr()),
                        "a follower at the log end of an idle partition stays in sync however long it is silent");
                send(acksAll, tp, "all-isr-2"); // ISR of 2 = min.insync.replicas: still accepted

                cluster.cutNetwork(leader, second);
                // accepted while the ISR still has 2 members, then stranded: the leader has it, nobody else will
                Future<RecordMetadata> stranded = acksAll.send(new ProducerRecord<>(tp.topic(), tp.partition(), null,
                        "all-stranded".getBytes(StandardCharsets.UTF_8)));
                awaitShrinkWhileProducing(admin, acksOne, tp, Set.of(leader), TIMEOUT);
                // the ISR shrink lets the high watermark pass it, but below min.insync.replicas: not acknowledged
                ExecutionException afterAppend = assertThrows(ExecutionException.class,
                        () -> stranded.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
                assertInstanceOf(NotEnoughReplicasAfterAppendException.class, afterAppend.getCause(),
                        afterAppend.toString());
                ExecutionException refused = assertThrows(ExecutionException.class, () -> send(acksAll, tp, "all-isr-1"));
                assertInstanceOf(NotEnoughReplicasException.class, refused.getCause(), refused.toString());
                send(acksOne, tp, "one-isr-1");

                cluster.healNetwork(leader, first);
                cluster.healNetwork(leader, second);
                awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
                send(acksAll, tp, "all-isr-3-again");
            }
            List<ReplicaLogs.Batch> log = ReplicaLogs.awaitIdentical(cluster, tp, List.of(0, 1, 2));
            assertTrue(log.stream().noneMatch(b -> b.values().contains("all-isr-1")), "the refused record is nowhere");
            assertTrue(log.stream().anyMatch(b -> b.values().contains("all-stranded")),
                    "a record refused after its append stays written, as in Kafka");
            assertEquals(List.of("all-isr-3-again"), log.get(log.size() - 1).values());
        }
    }

    /**
     * Kafka's effective min ISR: min.insync.replicas above the replication factor asks for no more than the
     * replicas there are, so acks=all writes to a single-replica topic of a cluster whose default is 2 (and to a
     * 2-replica topic set to 3) are accepted, as Kafka accepts them, instead of all refused NOT_ENOUGH_REPLICAS.
     */
    @Test
    void minInsyncReplicasAboveTheReplicationFactorAsksForEveryReplicaNotMore() throws Exception {
        TopicPartition single = new TopicPartition("single", 0);
        TopicPartition pair = new TopicPartition("pair", 0);
        try (TestCluster cluster = TestCluster.builder().brokers(2).brokerProperty("min.insync.replicas", "2")
                .build().start();
             Admin admin = cluster.admin()) {
            createTopic(admin, single.topic(), Map.of(0, List.of(0)), Map.of());
            createTopic(admin, pair.topic(), Map.of(0, List.of(0, 1)), Map.of("min.insync.replicas", "3"));
            awaitIsr(admin, pair, Set.of(0, 1), TIMEOUT);
            try (KafkaProducer<byte[], byte[]> acksAll = cluster.producer(noRetries("all"))) {
                assertEquals(0, send(acksAll, single, "one-replica").offset());
                assertEquals(0, send(acksAll, pair, "two-replicas").offset());
            }
        }
    }
}
