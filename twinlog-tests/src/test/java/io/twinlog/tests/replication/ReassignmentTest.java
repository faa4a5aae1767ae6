package io.twinlog.tests.replication;

import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.NoReassignmentInProgressException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;

import static io.twinlog.tests.replication.Replication.assertAckedRecordsReadable;
import static io.twinlog.tests.replication.Replication.awaitIsr;
import static io.twinlog.tests.replication.Replication.awaitLeaderIn;
import static io.twinlog.tests.replication.Replication.createTopic;
import static io.twinlog.tests.replication.Replication.describe;
import static io.twinlog.tests.replication.Replication.ids;
import static io.twinlog.tests.replication.Replication.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replica reassignment through the Admin client (AlterPartitionReassignments / ListPartitionReassignments): moving
 * a partition while it takes writes, moving replicas off a dead broker, and Kafka's errors for invalid requests.
 */
@Timeout(300)
class ReassignmentTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void movesReplicasWhileProducingAndRemovesTheOldReplica() throws Exception {
        TopicPartition tp = new TopicPartition("moving", 0);
        try (TestCluster cluster = cluster(); Admin admin = cluster.admin()) {
            createTopic(admin, tp.topic(), Map.of(0, List.of(0, 1)), Map.of("min.insync.replicas", "2"));
            awaitIsr(admin, tp, Set.of(0, 1), TIMEOUT);
            try (ProducerLoop producer = new ProducerLoop(cluster, tp, "m", Map.of(
                    ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                    ProducerConfig.LINGER_MS_CONFIG, 5)).start()) {
                producer.awaitMoreAcked(2_000, TIMEOUT);
                admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(1, 2)))))
                        .all().get();
                // usually still in progress here (broker 2 must copy the log first), but not necessarily
                Map<TopicPartition, PartitionReassignment> ongoing = admin.listPartitionReassignments().reassignments().get();
                System.out.println("reassignments right after the request: " + ongoing);
                if (ongoing.containsKey(tp)) {
                    assertEquals(List.of(2), ongoing.get(tp).addingReplicas());
                    assertEquals(List.of(0), ongoing.get(tp).removingReplicas());
                    assertEquals(Set.of(0, 1, 2), Set.copyOf(ongoing.get(tp).replicas()));
                }
                Waits.waitFor("the reassignment of " + tp + " to finish", () -> describe(admin, tp),
                        i -> ids(i.replicas()).equals(Set.of(1, 2)) && ids(i.isr()).equals(Set.of(1, 2)), TIMEOUT);
                assertEquals(List.of(1, 2), describe(admin, tp).replicas().stream().map(n -> n.id()).toList());
                Waits.waitUntil("no reassignment listed", () -> admin.listPartitionReassignments().reassignments().get()
                        .isEmpty());
                producer.awaitMoreAcked(1_000, TIMEOUT);
                producer.stop();
                assertEquals(List.of(), producer.errors());
                assertAckedRecordsReadable(cluster, tp, producer.acked());
            }
            ReplicaLogs.awaitIdentical(cluster, tp, List.of(1, 2));
            Waits.waitUntil("broker 0 to drop its replica of " + tp, () ->
                    cluster.broker(0).replicaManager().partition(tp).isEmpty()
                            && cluster.broker(0).logStore().log(tp).isEmpty()
                            && !new File(cluster.logDir(0), tp.toString()).exists());
            System.out.println("broker 0 log dir after the move: " + Arrays.toString(cluster.logDir(0).list()));
        }
    }

    @Test
    void movesReplicasOffADeadBroker() throws Exception {
        TopicPartition first = new TopicPartition("rescue", 0);
        TopicPartition second = new TopicPartition("rescue", 1);
        try (TestCluster cluster = cluster(); Admin admin = cluster.admin()) {
            createTopic(admin, "rescue", Map.of(0, List.of(2, 0), 1, List.of(0, 2)), Map.of());
            awaitIsr(admin, first, Set.of(0, 2), TIMEOUT);
            awaitIsr(admin, second, Set.of(0, 2), TIMEOUT);
            Map<TopicPartition, NavigableMap<Long, String>> written = new HashMap<>();
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
                for (TopicPartition tp : List.of(first, second)) {
                    for (int i = 0; i < 100; i++) {
                        written.computeIfAbsent(tp, k -> new TreeMap<>())
                                .put(send(producer, tp, tp + "-" + i).offset(), tp + "-" + i);
                    }
                }
            }
            cluster.killBroker(2);
            awaitLeaderIn(admin, first, Set.of(0), TIMEOUT);
            awaitIsr(admin, first, Set.of(0), TIMEOUT);
            admin.alterPartitionReassignments(Map.of(
                    first, Optional.of(new NewPartitionReassignment(List.of(0, 1))),
                    second, Optional.of(new NewPartitionReassignment(List.of(0, 1))))).all().get();
            for (TopicPartition tp : List.of(first, second)) {
                Waits.waitFor("the move of " + tp + " off dead broker 2", () -> describe(admin, tp),
                        i -> ids(i.replicas()).equals(Set.of(0, 1)) && ids(i.isr()).equals(Set.of(0, 1)), TIMEOUT);
                ReplicaLogs.awaitIdentical(cluster, tp, List.of(0, 1));
                assertAckedRecordsReadable(cluster, tp, written.get(tp));
            }
            Waits.waitUntil("no reassignment listed", () -> admin.listPartitionReassignments().reassignments().get()
                    .isEmpty());
            // the dead broker returns to find its replicas gone: it deletes them as stray logs
            cluster.startBroker(2);
            Waits.waitUntil("broker 2 to delete its stray replicas", () ->
                    cluster.broker(2).logStore().log(first).isEmpty() && cluster.broker(2).logStore().log(second).isEmpty());
            TopicPartitionInfo info = describe(admin, first);
            assertEquals(Set.of(0, 1), ids(info.isr()));
        }
    }

    @Test
    void invalidRequestsGetKafkasErrors() throws Exception {
        TopicPartition tp = new TopicPartition("strict", 0);
        try (TestCluster cluster = cluster(); Admin admin = cluster.admin()) {
            createTopic(admin, tp.topic(), Map.of(0, List.of(0, 1)), Map.of());
            awaitIsr(admin, tp, Set.of(0, 1), TIMEOUT);
            assertReassignmentFails(admin, tp, Optional.of(new NewPartitionReassignment(List.of(0, 7))),
                    InvalidReplicaAssignmentException.class);
            assertReassignmentFails(admin, tp, Optional.of(new NewPartitionReassignment(List.of(1, 1))),
                    InvalidReplicaAssignmentException.class);
            assertReassignmentFails(admin, tp, Optional.empty(), NoReassignmentInProgressException.class);
            assertReassignmentFails(admin, new TopicPartition("no-such-topic", 0),
                    Optional.of(new NewPartitionReassignment(List.of(0, 1))), UnknownTopicOrPartitionException.class);
            assertReassignmentFails(admin, new TopicPartition(tp.topic(), 5),
                    Optional.of(new NewPartitionReassignment(List.of(0, 1))), UnknownTopicOrPartitionException.class);
            assertEquals(Map.of(), admin.listPartitionReassignments().reassignments().get());
            assertEquals(List.of(0, 1), describe(admin, tp).replicas().stream().map(n -> n.id()).toList());
        }
    }

    private static void assertReassignmentFails(Admin admin, TopicPartition tp, Optional<NewPartitionReassignment> target,
                                                Class<? extends Exception> expected) {
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> admin.alterPartitionReassignments(Map.of(tp, target)).all().get(), "reassigning to " + target);
        assertInstanceOf(expected, e.getCause(), e.toString());
        assertTrue(e.getCause().getMessage() != null && !e.getCause().getMessage().isEmpty(), e.toString());
    }

    private static TestCluster cluster() throws Exception {
        return TestCluster.builder().brokers(3).brokerProperty("replica.lag.time.max.ms", "3000").build().start();
    }
}
