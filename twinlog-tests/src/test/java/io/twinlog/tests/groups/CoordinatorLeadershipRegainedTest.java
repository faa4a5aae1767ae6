package io.twinlog.tests.groups;

import io.twinlog.replication.Partition;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A broker whose group coordinator lost and regained leadership of a {@code __consumer_offsets} partition before it
 * took the metadata in between must reload the partition, not go on with the groups it held before: another
 * leader wrote to the partition meanwhile. Kafka's coordinator runtime reloads only after a resignation (an
 * election in a newer epoch of a loaded partition just takes the epoch), so the broker must tell it each change
 * in order (decision 111).
 *
 * <p>Broker 0 coordinates both partitions. Its coordinator's metadata thread is held the way Kafka's coordinator
 * holds it: a deleted topic's offsets are tombstoned and the thread waits for the tombstones to commit (up to
 * {@code offsets.commit.timeout.ms}), which broker 2, blackholed, holds back on {@code __consumer_offsets-1}.
 * Meanwhile {@code __consumer_offsets-0} moves to broker 1, takes a commit there, and comes back to broker 0 (under
 * a second); then the network heals. Before the fix broker 0 answered the offset it held before (10) for as long as
 * the test waited.
 */
@Timeout(240)
class CoordinatorLeadershipRegainedTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(45);
    private static final String OFFSETS_TOPIC = "__consumer_offsets";
    private static final TopicPartition OFFSETS_0 = new TopicPartition(OFFSETS_TOPIC, 0);
    private static final TopicPartition OFFSETS_1 = new TopicPartition(OFFSETS_TOPIC, 1);
    private static final TopicPartition ORDERS = new TopicPartition("orders", 0);
    private static final TopicPartition DOOMED = new TopicPartition("doomed", 0);

    @Test
    void brokerThatLostAndRegainedLeadershipAnswersWithTheOtherLeadersCommit() throws Exception {
        String moved = groupOn(0, "moved");
        String blocking = groupOn(1, "blocking");
        try (TestCluster cluster = TestCluster.builder().brokers(3).withFaultProxies()
                .brokerProperty("offsets.topic.num.partitions", "2")
                .brokerProperty("offsets.topic.replication.factor", "2")
                // the window: broker 0 keeps broker 2 in the ISR of __consumer_offsets-1 while it is blackholed,
                // and its coordinator waits that long for the tombstones there (Kafka's default: 5 s)
                .brokerProperty("replica.lag.time.max.ms", "90000")
                .brokerProperty("offsets.commit.timeout.ms", "60000")
                .build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(ORDERS.topic(), Map.of(0, List.of(0, 1))),
                    new NewTopic(DOOMED.topic(), Map.of(0, List.of(0, 1))))).all().get();
            commit(admin, moved, ORDERS, 10); // creates __consumer_offsets
            lead(cluster, admin, OFFSETS_0, List.of(0, 1));
            lead(cluster, admin, OFFSETS_1, List.of(0, 2));
            commit(admin, moved, ORDERS, 10);
            commit(admin, blocking, DOOMED, 5);

            cluster.blackholeNetwork(0, 2);
            admin.deleteTopics(List.of(DOOMED.topic())).all().get();
            Waits.waitUntil("broker 0's coordinator waiting for its tombstones on " + OFFSETS_1 + " to commit",
                    () -> uncommitted(cluster, 0, OFFSETS_1));

            lead(cluster, admin, OFFSETS_0, List.of(1, 0));
            commit(admin, moved, ORDERS, 20);
            Waits.waitUntil("broker 0 replicating broker 1's commit", () -> logEndOffset(cluster, 0, OFFSETS_0)
                    == logEndOffset(cluster, 1, OFFSETS_0));
            lead(cluster, admin, OFFSETS_0, List.of(0, 1));
            assertTrue(uncommitted(cluster, 0, OFFSETS_1), "broker 0's coordinator thread was held throughout");

            cluster.cutNetwork(0, 2); // drops the held connections, so broker 2 fetches again at once after the heal
            cluster.healNetwork(0, 2);
            Map<TopicPartition, OffsetAndMetadata> answered = Waits.waitFor("broker 0, leading " + OFFSETS_0
                    + " again, to answer the commit broker 1 took", () -> offsets(admin, moved),
                    o -> o.containsKey(ORDERS) && o.get(ORDERS).offset() == 20, TIMEOUT);
            assertEquals(20, answered.get(ORDERS).offset());
            assertEquals(0, coordinatorOf(admin, moved), "broker 0 answered");
        }
    }

    /** A group id whose offsets live on {@code partition} of a two-partition {@code __consumer_offsets}. */
    private static String groupOn(int partition, String prefix) {
        for (int i = 0; ; i++) {
            String group = prefix + "-" + i;
            if (Utils.abs(group.hashCode()) % 2 == partition) {
                return group;
            }
        }
    }

    private static void commit(Admin admin, String group, TopicPartition tp, long offset) throws Exception {
        admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(offset))).all().get();
    }

    private static Map<TopicPartition, OffsetAndMetadata> offsets(Admin admin, String group) throws Exception {
        return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    }

    private static int coordinatorOf(Admin admin, String group) throws Exception {
        return admin.describeConsumerGroups(List.of(group)).all().get().get(group).coordinator().id();
    }

    /** Reassigns {@code tp} to {@code replicas} (the first preferred) and elects the first as its leader. */
    private static void lead(TestCluster cluster, Admin admin, TopicPartition tp, List<Integer> replicas)
            throws Exception {
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(replicas))))
                .all().get();
        Waits.waitFor("the replicas of " + tp + " to be " + replicas + ", all in sync", () -> describe(admin, tp),
                i -> ids(i.replicas()).equals(replicas) && Set.copyOf(ids(i.isr())).equals(Set.copyOf(replicas)),
                TIMEOUT);
        int leader = replicas.get(0);
        // refused while the reassignment's last writes land ("the partition changed during the election")
        Waits.waitUntil("a preferred election of " + tp, () -> {
            Optional<Throwable> elected = admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get()
                    .get(tp);
            return elected.isEmpty() || elected.get() instanceof ElectionNotNeededException;
        }, TIMEOUT);
        Waits.waitUntil("broker " + leader + " leading " + tp + ", followed by " + replicas, () -> {
            Optional<Partition> led = cluster.broker(leader).replicaManager().partition(tp);
            if (led.isEmpty() || !led.get().isLeader() || describe(admin, tp).leader().id() != leader) {
                return false;
            }
            return replicas.stream().allMatch(id -> cluster.broker(id).replicaManager().partition(tp)
                    .map(p -> p.leaderEpoch() == led.get().leaderEpoch()).orElse(false));
        }, TIMEOUT);
    }

    private static TopicPartitionInfo describe(Admin admin, TopicPartition tp) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(tp.topic())).allTopicNames().get().get(tp.topic());
        return d.partitions().get(tp.partition());
    }

    private static List<Integer> ids(List<Node> nodes) {
        return nodes.stream().map(Node::id).collect(Collectors.toList());
    }

    private static boolean uncommitted(TestCluster cluster, int broker, TopicPartition tp) {
        UnifiedLog log = cluster.broker(broker).replicaManager().partition(tp).orElseThrow().log();
        return log.logEndOffset() > log.highWatermark();
    }

    private static long logEndOffset(TestCluster cluster, int broker, TopicPartition tp) {
        return cluster.broker(broker).replicaManager().partition(tp).orElseThrow().log().logEndOffset();
    }
}
