package io.twinlog.tests.groups;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

import static io.twinlog.tests.groups.ConsumerGroupTest.member;
import static io.twinlog.tests.groups.ConsumerGroupTest.pollInto;
import static io.twinlog.tests.groups.ConsumerGroupTest.produce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The group coordinator moves with leadership of its {@code __consumer_offsets} partition: killing the coordinator
 * broker mid-group moves the group to the new leader, which reloads it from the replicated log, and the members go
 * on consuming and committing without losing a record; committed offsets survive a rolling restart and a restart of
 * every broker.
 */
@Timeout(300)
class GroupCoordinatorFailoverTest {
    private static final String TOPIC = "orders";
    private static final int PARTITIONS = 6;

    @Test
    void coordinatorKilledMidGroupMovesWithItsCommittedOffsets() throws Exception {
        String group = "ledger";
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 3))).all().get();
            produce(cluster, 0, 300);
            List<String> seen = new ArrayList<>();
            try (KafkaConsumer<byte[], byte[]> a = member(cluster, group, "classic");
                 KafkaConsumer<byte[], byte[]> b = member(cluster, group, "classic")) {
                a.subscribe(List.of(TOPIC));
                b.subscribe(List.of(TOPIC));
                Waits.waitUntil("300 records consumed and committed", () -> {
                    pollInto(a, seen);
                    pollInto(b, seen);
                    a.commitSync();
                    b.commitSync();
                    return new HashSet<>(seen).size() == 300;
                });
                int coordinator = admin.describeConsumerGroups(List.of(group)).all().get().get(group)
                        .coordinator().id();
                cluster.killBroker(coordinator);
                produce(cluster, 300, 120);
                Waits.waitUntil("the members consume on and commit through the new coordinator", () -> {
                    pollInto(a, seen);
                    pollInto(b, seen);
                    try {
                        a.commitSync(Duration.ofSeconds(5));
                        b.commitSync(Duration.ofSeconds(5));
                    } catch (RuntimeException e) {
                        return false; // coordinator moving, or a rebalance: poll on
                    }
                    return new HashSet<>(seen).size() == 420 && committedTotal(admin, group) == 420;
                }, Duration.ofSeconds(60));
                int now = admin.describeConsumerGroups(List.of(group)).all().get().get(group).coordinator().id();
                assertNotEquals(coordinator, now, "the group moved to another broker");
                assertEquals(420, new HashSet<>(seen).size(), "no record lost");
            }
        }
    }

    @Test
    void committedOffsetsSurviveRestartsOfEveryBroker() throws Exception {
        String group = "archive";
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 3))).all().get();
            produce(cluster, 0, 120);
            List<String> seen = new ArrayList<>();
            try (KafkaConsumer<byte[], byte[]> c = member(cluster, group, "classic")) {
                c.subscribe(List.of(TOPIC));
                Waits.waitUntil("120 records consumed", () -> {
                    pollInto(c, seen);
                    return seen.size() >= 120;
                });
                c.commitSync();
            }
            Map<TopicPartition, OffsetAndMetadata> before = offsets(admin, group);
            assertEquals(120L, before.values().stream().mapToLong(OffsetAndMetadata::offset).sum());

            for (int id = 0; id < 3; id++) { // rolling restart
                cluster.stopBroker(id);
                cluster.startBroker(id);
                Waits.waitFor("the offsets readable after broker restarts", () -> offsets(admin, group),
                        before::equals, Duration.ofSeconds(60));
            }
            for (int id = 0; id < 3; id++) { // the whole cluster down, then up
                cluster.stopBroker(id);
            }
            for (int id = 0; id < 3; id++) {
                cluster.startBroker(id);
            }
            try (Admin fresh = cluster.admin()) {
                assertEquals(before, Waits.waitFor("the offsets after a full restart", () -> offsets(fresh, group),
                        before::equals, Duration.ofSeconds(60)));
            }
            produce(cluster, 120, 6);
            List<String> resumed = new ArrayList<>();
            try (KafkaConsumer<byte[], byte[]> c = member(cluster, group, "classic")) {
                c.subscribe(List.of(TOPIC));
                Waits.waitUntil("the 6 new records", () -> {
                    pollInto(c, resumed);
                    return resumed.size() >= 6;
                });
                pollInto(c, resumed);
            }
            assertEquals(6, resumed.size(), "resumed at the committed offsets: " + resumed);
            assertTrue(resumed.stream().allMatch(v -> Integer.parseInt(v.substring(2)) >= 120), resumed.toString());
        }
    }

    private static Map<TopicPartition, OffsetAndMetadata> offsets(Admin admin, String group) throws Exception {
        return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    }

    private static long committedTotal(Admin admin, String group) throws Exception {
        return offsets(admin, group).values().stream().mapToLong(OffsetAndMetadata::offset).sum();
    }
}
