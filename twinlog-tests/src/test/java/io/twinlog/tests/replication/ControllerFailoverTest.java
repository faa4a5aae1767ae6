package io.twinlog.tests.replication;

import io.twinlog.replication.Partition;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static io.twinlog.tests.replication.Replication.assertAckedRecordsReadable;
import static io.twinlog.tests.replication.Replication.awaitIsr;
import static io.twinlog.tests.replication.Replication.awaitLeaderIn;
import static io.twinlog.tests.replication.Replication.awaitSingleLeader;
import static io.twinlog.tests.replication.Replication.createTopic;
import static io.twinlog.tests.replication.Replication.localLeaders;
import static io.twinlog.tests.replication.Replication.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Controller failover: a crashed controller is replaced and its successor carries out elections and topic
 * creation; a returning old controller does not take over again while the new one lives. A controller cut off
 * ZooKeeper loses its session and is replaced; when it reconnects, its stale view is fenced (no split brain:
 * exactly one broker leads each partition, in the epoch ZooKeeper holds) and no acks=all record it took while
 * deposed is reported as written.
 */
@Timeout(300)
class ControllerFailoverTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final long LAG_TIME_MAX_MS = 3_000;
    private static final String TOPIC = "spread";
    /** One partition led by each broker. */
    private static final Map<Integer, List<Integer>> SPREAD = Map.of(0, List.of(0, 1, 2), 1, List.of(1, 2, 0),
            2, List.of(2, 0, 1));

    @Test
    void newControllerTakesOverElectionsAndTopicCreation() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3)
                .brokerProperty("replica.lag.time.max.ms", Long.toString(LAG_TIME_MAX_MS)).build().start();
             Admin admin = cluster.admin()) {
            createTopic(admin, TOPIC, SPREAD, Map.of());
            for (int p = 0; p < 3; p++) {
                awaitIsr(admin, new TopicPartition(TOPIC, p), Set.of(0, 1, 2), TIMEOUT);
            }
            Map<TopicPartition, NavigableMap<Long, String>> written = new TreeMap<>(
                    (a, b) -> a.toString().compareTo(b.toString()));
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
                writeTo(producer, new TopicPartition(TOPIC, 0), "before", written);
                writeTo(producer, new TopicPartition(TOPIC, 1), "before", written);
                writeTo(producer, new TopicPartition(TOPIC, 2), "before", written);
            }

            int oldController = controller(admin);
            long killedAt = System.nanoTime();
            cluster.killBroker(oldController);
            int newController = Waits.waitFor("a new controller", () -> controller(admin),
                    id -> id >= 0 && id != oldController, TIMEOUT);
            System.out.printf("controller %d crashed; broker %d is controller after %d ms%n", oldController,
                    newController, (System.nanoTime() - killedAt) / 1_000_000);
            Set<Integer> live = new TreeSet<>(cluster.runningBrokerIds());
            for (int p = 0; p < 3; p++) {
                awaitLeaderIn(admin, new TopicPartition(TOPIC, p), live, TIMEOUT);
            }

            // topic creation goes through the new controller's initial elections
            admin.createTopics(List.of(new NewTopic("created-after-failover", 2, (short) 2))).all().get();
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
                for (int p = 0; p < 2; p++) {
                    TopicPartition tp = new TopicPartition("created-after-failover", p);
                    awaitLeaderIn(admin, tp, live, TIMEOUT);
                    writeTo(producer, tp, "created", written);
                }
            }

            // an election decided by the new controller alone: the third broker's partition loses its leader
            int third = 3 - oldController - newController;
            TopicPartition thirdsPartition = new TopicPartition(TOPIC, third);
            int leader = awaitLeaderIn(admin, thirdsPartition, live, TIMEOUT);
            assertEquals(third, leader, "preferred leaders were kept");
            cluster.killBroker(third);
            awaitLeaderIn(admin, thirdsPartition, Set.of(newController), TIMEOUT);
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
                writeTo(producer, thirdsPartition, "after-election", written);
            }

            cluster.startBroker(oldController);
            cluster.startBroker(third);
            for (int p = 0; p < 3; p++) {
                awaitIsr(admin, new TopicPartition(TOPIC, p), Set.of(0, 1, 2), TIMEOUT);
            }
            // the old controller is back, but /controller is taken: it must stay an ordinary broker
            long until = System.currentTimeMillis() + 2_000;
            while (System.currentTimeMillis() < until) {
                assertEquals(newController, controller(admin));
                for (Integer id : cluster.runningBrokerIds()) {
                    assertEquals(newController, cluster.broker(id).metadata().image().controllerId(),
                            "controller as broker " + id + " sees it");
                }
            }
            for (Map.Entry<TopicPartition, NavigableMap<Long, String>> e : written.entrySet()) {
                assertAckedRecordsReadable(cluster, e.getKey(), e.getValue());
                if (e.getKey().topic().equals(TOPIC)) {
                    ReplicaLogs.awaitIdentical(cluster, e.getKey(), List.of(0, 1, 2));
                }
            }
        }
    }

    @Test
    void controllerCutOffZooKeeperIsReplacedAndFencedWithoutSplitBrain() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).withFaultProxies()
                .brokerProperty("replica.lag.time.max.ms", Long.toString(LAG_TIME_MAX_MS)).build().start();
             Admin admin = cluster.admin()) {
            int oldController = controller(admin);
            // the partition under load is led by the controller: it becomes a zombie leader when cut off
            TopicPartition zombie = new TopicPartition(TOPIC, oldController);
            createTopic(admin, TOPIC, SPREAD, Map.of("min.insync.replicas", "2"));
            for (int p = 0; p < 3; p++) {
                awaitIsr(admin, new TopicPartition(TOPIC, p), Set.of(0, 1, 2), TIMEOUT);
            }
            List<Integer> others = new ArrayList<>(List.of(0, 1, 2));
            others.remove(Integer.valueOf(oldController));
            try (ProducerLoop producer = new ProducerLoop(cluster, zombie, "z", Map.of(
                    ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                    ProducerConfig.LINGER_MS_CONFIG, 5)).start()) {
                producer.awaitMoreAcked(200, TIMEOUT);

                long cutAt = System.nanoTime();
                cluster.cutZooKeeper(oldController);
                // the others see the session expire, elect a controller and move the cut-off broker's leadership
                int newController = Waits.waitFor("a new controller as brokers " + others + " see it",
                        () -> cluster.broker(others.get(0)).metadata().image().controllerId(),
                        id -> id >= 0 && id != oldController, TIMEOUT);
                Waits.waitUntil("a new leader of " + zombie + " among " + others, () -> others.stream().anyMatch(id ->
                        cluster.broker(id).replicaManager().partition(zombie).map(Partition::isLeader).orElse(false)));
                System.out.printf("controller %d cut off ZooKeeper; broker %d is controller after %d ms%n",
                        oldController, newController, (System.nanoTime() - cutAt) / 1_000_000);
                // the deposed broker cannot know yet: it still believes it leads, and keeps taking records that
                // will never reach its high watermark
                Partition stale = cluster.broker(oldController).replicaManager().partition(zombie).orElseThrow();
                assertTrue(stale.isLeader(), "the cut-off broker has not heard of its deposition");
                Waits.waitUntil("records on the deposed leader past its high watermark",
                        () -> stale.log().logEndOffset() > stale.log().highWatermark() + 1);
                // Keep the fault on past replica.lag.time.max.ms: the zombie leader then proposes an ISR of itself
                // alone to the controller it still believes it is, whose ZooKeeper write must be fenced on
                // reconnect (were it not, the zombie's high watermark and acks would move on without replicas).
                holdFault(Duration.ofMillis(LAG_TIME_MAX_MS * 3 / 2 + 500));

                cluster.healZooKeeper(oldController);
                Waits.waitUntil("broker " + oldController + " to follow the new leader of " + zombie,
                        () -> !stale.isLeader() && stale.leaderId() != -1);
                // another producer moves the new leader on: the old leader, now a follower, sees its high watermark
                // pass the offsets of the records it took while deposed (which it has truncated meanwhile)
                try (ProducerLoop witness = new ProducerLoop(cluster, zombie, "w", Map.of(
                        ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true)).start()) {
                    witness.awaitMoreAcked(200, TIMEOUT);
                    producer.awaitMoreAcked(200, TIMEOUT);
                    witness.stop();
                    producer.stop();
                    System.out.printf("%d records acknowledged of %d sent; errors %s%n", producer.acked().size(),
                            producer.sent(), producer.errors());
                    NavigableMap<Long, String> all = new TreeMap<>(producer.acked());
                    witness.acked().forEach((offset, value) -> assertEquals(null, all.put(offset, value),
                            "two producers acknowledged at the same offset " + offset));
                    assertAckedRecordsReadable(cluster, zombie, all);
                }

                for (Integer id : cluster.runningBrokerIds()) {
                    int seen = Waits.waitFor("broker " + id + " to see controller " + newController,
                            () -> cluster.broker(id).metadata().image().controllerId(), c -> c == newController,
                            TIMEOUT);
                    assertEquals(newController, seen);
                }
                for (int p = 0; p < 3; p++) {
                    TopicPartition tp = new TopicPartition(TOPIC, p);
                    int leader = awaitSingleLeader(cluster, admin, tp, TIMEOUT);
                    assertEquals(Set.of(leader), localLeaders(cluster, tp));
                    awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
                    ReplicaLogs.awaitIdentical(cluster, tp, List.of(0, 1, 2));
                }
            }
        }
    }

    /** How long a fault lasts is part of the scenario; this is not a wait for state. */
    private static void holdFault(Duration duration) throws InterruptedException {
        Thread.sleep(duration.toMillis());
    }

    private static int controller(Admin admin) throws Exception {
        Node c = admin.describeCluster().controller().get();
        return c == null || c.isEmpty() ? -1 : c.id();
    }

    private static void writeTo(KafkaProducer<byte[], byte[]> producer, TopicPartition tp, String prefix,
                                Map<TopicPartition, NavigableMap<Long, String>> written) throws Exception {
        for (int i = 0; i < 50; i++) {
            String value = prefix + "-" + tp + "-" + i;
            written.computeIfAbsent(tp, k -> new TreeMap<>()).put(send(producer, tp, value).offset(), value);
        }
    }
}
