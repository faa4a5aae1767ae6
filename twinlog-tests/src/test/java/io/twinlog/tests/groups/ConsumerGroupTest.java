package io.twinlog.tests.groups;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Consumer groups with unmodified kafka-clients 4.4 consumers using {@code subscribe()}: partitions are shared
 * among members and rebalanced as members join and leave, committed offsets are where a new member resumes, and the
 * Admin client sees the group. Both the classic protocol (the clients' default) and the consumer protocol (KIP-848).
 */
@Timeout(300)
class ConsumerGroupTest {
    private static final String TOPIC = "orders";
    private static final int PARTITIONS = 6;

    @Test
    void classicGroupSharesRebalancesAndResumesFromCommittedOffsets() throws Exception {
        runGroupScenario("classic", "billing");
    }

    @Test
    void consumerProtocolGroupSharesRebalancesAndResumesFromCommittedOffsets() throws Exception {
        runGroupScenario("consumer", "billing-848");
    }

    @Test
    void offsetsOfADeletedTopicAreRemovedFromItsGroups() throws Exception {
        String group = "cleanup";
        try (TestCluster cluster = TestCluster.builder().brokers(1).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("doomed", 2, (short) 1), new NewTopic("kept", 1, (short) 1)))
                    .all().get();
            TopicPartition doomed = new TopicPartition("doomed", 1);
            TopicPartition kept = new TopicPartition("kept", 0);
            admin.alterConsumerGroupOffsets(group, Map.of(doomed, new OffsetAndMetadata(0), kept,
                    new OffsetAndMetadata(0))).all().get();
            assertEquals(Set.of(doomed, kept), admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get().keySet());
            admin.deleteTopics(List.of("doomed")).all().get();
            Waits.waitUntil("the coordinator dropped the deleted topic's offsets", () -> admin
                    .listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().keySet()
                    .equals(Set.of(kept)));
        }
    }

    private void runGroupScenario(String protocol, String group) throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 3))).all().get();
            produce(cluster, 0, 600);
            List<String> seen = new ArrayList<>();
            try (KafkaConsumer<byte[], byte[]> a = member(cluster, group, protocol);
                 KafkaConsumer<byte[], byte[]> b = member(cluster, group, protocol)) {
                a.subscribe(List.of(TOPIC));
                b.subscribe(List.of(TOPIC));
                Waits.waitUntil("both members own a share of the " + PARTITIONS + " partitions", () -> {
                    pollInto(a, seen);
                    pollInto(b, seen);
                    Set<TopicPartition> all = new HashSet<>(a.assignment());
                    all.addAll(b.assignment());
                    return !a.assignment().isEmpty() && !b.assignment().isEmpty()
                            && all.size() == PARTITIONS && a.assignment().size() + b.assignment().size() == PARTITIONS;
                });
                ConsumerGroupDescription active = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                assertEquals(2, active.members().size(), active.toString());
                assertEquals(GroupState.STABLE, active.groupState(), active.toString());
                Waits.waitUntil("all 600 records consumed by the two members", () -> {
                    pollInto(a, seen);
                    pollInto(b, seen);
                    return new HashSet<>(seen).size() == 600;
                });
                a.commitSync();
                b.commitSync();
                b.close(); // leaves the group: its partitions move to a
                Waits.waitUntil("the remaining member owns every partition", () -> {
                    pollInto(a, seen);
                    return a.assignment().size() == PARTITIONS;
                });
                int before = seen.size();
                produce(cluster, 600, 60);
                Waits.waitUntil("the 60 new records reach the remaining member", () -> {
                    pollInto(a, seen);
                    return new HashSet<>(seen).size() == 660;
                });
                assertEquals(660, new HashSet<>(seen).size());
                assertTrue(seen.size() - before >= 60);
                a.commitSync();
            }

            ConsumerGroupDescription description = Waits.waitFor("the group empty after its members left",
                    () -> admin.describeConsumerGroups(List.of(group)).all().get().get(group),
                    d -> d.groupState() == GroupState.EMPTY);
            assertTrue(description.members().isEmpty());
            assertTrue(admin.listGroups().all().get().stream().anyMatch(l -> l.groupId().equals(group)));
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get();
            assertEquals(PARTITIONS, committed.size());
            assertEquals(660L, committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum());

            // a new member resumes where the group committed: only new records
            produce(cluster, 660, 12);
            List<String> resumed = new ArrayList<>();
            try (KafkaConsumer<byte[], byte[]> c = member(cluster, group, protocol)) {
                c.subscribe(List.of(TOPIC));
                Waits.waitUntil("the 12 records produced after the last commit", () -> {
                    pollInto(c, resumed);
                    return resumed.size() >= 12;
                });
                pollInto(c, resumed);
            }
            List<String> expected = new ArrayList<>();
            for (int i = 660; i < 672; i++) {
                expected.add("v-" + i);
            }
            assertEquals(new HashSet<>(expected), new HashSet<>(resumed));
            assertEquals(12, resumed.size(), "nothing committed is read again");
        }
    }

    static KafkaConsumer<byte[], byte[]> member(TestCluster cluster, String group, String protocol) {
        return cluster.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol,
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 50));
    }

    static void pollInto(KafkaConsumer<byte[], byte[]> consumer, List<String> into) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(50))) {
            into.add(new String(r.value(), StandardCharsets.UTF_8));
        }
    }

    static void produce(TestCluster cluster, int from, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("linger.ms", 5))) {
            for (int i = from; i < from + count; i++) {
                p.send(new ProducerRecord<>(TOPIC, i % PARTITIONS, null, ("v-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
    }
}
