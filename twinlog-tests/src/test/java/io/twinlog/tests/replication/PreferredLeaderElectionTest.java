package io.twinlog.tests.replication;

import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.PreferredLeaderNotAvailableException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static io.twinlog.tests.replication.Replication.awaitIsr;
import static io.twinlog.tests.replication.Replication.awaitLeaderIn;
import static io.twinlog.tests.replication.Replication.awaitSingleLeader;
import static io.twinlog.tests.replication.Replication.createTopic;
import static io.twinlog.tests.replication.Replication.describe;
import static io.twinlog.tests.replication.Replication.leaderId;
import static io.twinlog.tests.replication.Replication.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ElectLeaders PREFERRED through the Admin client: after a leader bounce the first replica is not leader again by
 * itself; a preferred election gives it back its leadership in a new epoch; ELECTION_NOT_NEEDED where it already
 * leads, PREFERRED_LEADER_NOT_AVAILABLE where it cannot.
 */
@Timeout(300)
class PreferredLeaderElectionTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void preferredElectionMovesLeadershipBackToTheFirstReplica() throws Exception {
        TopicPartition p0 = new TopicPartition("preferred", 0);
        TopicPartition p1 = new TopicPartition("preferred", 1);
        TopicPartition p2 = new TopicPartition("preferred", 2);
        try (TestCluster cluster = TestCluster.builder().brokers(3)
                .brokerProperty("replica.lag.time.max.ms", "3000").build().start();
             Admin admin = cluster.admin()) {
            createTopic(admin, "preferred", Map.of(0, List.of(0, 1, 2), 1, List.of(1, 2, 0), 2, List.of(2, 0, 1)),
                    Map.of());
            for (TopicPartition tp : List.of(p0, p1, p2)) {
                awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
            }
            Map<TopicPartition, Optional<Throwable>> notNeeded =
                    admin.electLeaders(ElectionType.PREFERRED, Set.of(p0, p1, p2)).partitions().get();
            for (TopicPartition tp : List.of(p0, p1, p2)) {
                assertInstanceOf(ElectionNotNeededException.class, notNeeded.get(tp).orElseThrow(), tp.toString());
            }
            assertEquals(Map.of(), admin.electLeaders(ElectionType.PREFERRED, null).partitions().get(),
                    "asked for all partitions, only those that needed an election are answered");

            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
                for (int i = 0; i < 50; i++) {
                    send(producer, p0, "first-leader-" + i);
                }
                // bounce the leader of partition 0: leadership moves to the next in-sync replica and stays there
                cluster.stopBroker(0);
                assertEquals(1, awaitLeaderIn(admin, p0, Set.of(1, 2), TIMEOUT));
                for (int i = 0; i < 50; i++) {
                    send(producer, p0, "second-leader-" + i);
                }
                cluster.startBroker(0);
                awaitIsr(admin, p0, Set.of(0, 1, 2), TIMEOUT);
                assertEquals(1, leaderId(describe(admin, p0)), "no automatic preferred election");
                int epochBefore = cluster.broker(1).replicaManager().partition(p0).orElseThrow().leaderEpoch();

                Map<TopicPartition, Optional<Throwable>> elected =
                        admin.electLeaders(ElectionType.PREFERRED, Set.of(p0)).partitions().get();
                assertEquals(Optional.empty(), elected.get(p0));
                // answered once the election is visible on the controller's broker; the broker a describe asks may
                // apply it a moment later (metadata reaches each broker on its own, as in Kafka)
                assertEquals(0, awaitLeaderIn(admin, p0, Set.of(0), TIMEOUT));
                assertEquals(0, awaitSingleLeader(cluster, admin, p0, TIMEOUT));
                assertEquals(epochBefore + 1, cluster.broker(0).replicaManager().partition(p0).orElseThrow().leaderEpoch());
                assertInstanceOf(ElectionNotNeededException.class, admin.electLeaders(ElectionType.PREFERRED,
                        Set.of(p0)).partitions().get().get(p0).orElseThrow());
                for (int i = 0; i < 50; i++) {
                    send(producer, p0, "first-leader-again-" + i);
                }
            }
            List<ReplicaLogs.Batch> log = ReplicaLogs.awaitIdentical(cluster, p0, List.of(0, 1, 2));
            assertEquals(150, log.stream().mapToInt(b -> b.values().size()).sum());

            // a preferred replica that is down cannot take over
            cluster.killBroker(1);
            awaitLeaderIn(admin, p1, Set.of(2), TIMEOUT);
            Optional<Throwable> unavailable = admin.electLeaders(ElectionType.PREFERRED, Set.of(p1)).partitions().get()
                    .get(p1);
            assertInstanceOf(PreferredLeaderNotAvailableException.class, unavailable.orElseThrow());
            assertTrue(unavailable.get().getMessage().contains("1"), unavailable.get().getMessage());

            Optional<Throwable> unknown = admin.electLeaders(ElectionType.PREFERRED,
                    Set.of(new TopicPartition("preferred", 9))).partitions().get().get(new TopicPartition("preferred", 9));
            assertInstanceOf(UnknownTopicOrPartitionException.class, unknown.orElseThrow());
        }
    }
}
