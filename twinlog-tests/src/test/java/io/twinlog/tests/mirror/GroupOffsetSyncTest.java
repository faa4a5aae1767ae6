package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Consumer group offset sync from a mirror's source: groups chosen by the mirror's patterns, offsets clamped to
 * what the destination holds, groups with members on the destination left alone, failed-over topics no longer
 * synced, and the last sync per group in describe.
 *
 * <p>Each check waits for a <em>marker</em>: an offset that can only appear on the destination after a sync pass
 * that also saw the state under test (a pass reads every group's offsets, then plans them in name order), so
 * "not written" is proven by a later write, not by waiting some time.
 */
class GroupOffsetSyncTest {
    private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);
    private static final TopicPartition ORDERS_1 = new TopicPartition("orders", 1);
    private static final TopicPartition PAYMENTS_0 = new TopicPartition("payments", 0);
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @Test
    void syncsSelectedGroupsClampedToTheDestinationHighWatermark() throws Exception {
        try (Clusters c = Clusters.start()) {
            c.createAndMirror(Map.of("mirror.groups.include", "app-.*", "mirror.groups.exclude", "app-excluded"),
                    "orders");
            c.commitOnSource("app-billing", Map.of(ORDERS_0, 60L, ORDERS_1, 100L));
            c.commitOnSource("app-excluded", Map.of(ORDERS_0, 30L));
            c.commitOnSource("other", Map.of(ORDERS_0, 40L));

            c.awaitDestinationOffsets("app-billing", Map.of(ORDERS_0, 60L, ORDERS_1, 100L));
            OffsetAndMetadata copied = c.destinationCommitted("app-billing").get(ORDERS_0);
            assertEquals(Optional.of(0), copied.leaderEpoch(), "an offset within the destination keeps its epoch");
            assertEquals("from-source", copied.metadata());
            assertTrue(c.destinationCommitted("app-excluded").isEmpty(), "excluded by mirror.groups.exclude");
            assertTrue(c.destinationCommitted("other").isEmpty(), "not matched by mirror.groups.include");
            // the sync record is written after the offsets it copied
            MirrorAdmin.GroupSyncDescription synced = Waits.waitFor("the sync of app-billing in describe",
                    () -> c.describeGroups().get("app-billing"), d -> d != null && d.offsetsSynced() == 2);
            assertEquals(2, synced.offsetsSynced());
            assertEquals(0, synced.offsetsClamped());
            assertTrue(synced.lastSyncTimeMs() > 0);
            assertEquals(List.of("app-billing"), List.copyOf(c.describeGroups().keySet()), "only synced groups");

            // The destination stops at 100 (paused) while the source group moves to 140 of 150.
            c.mirrors.pauseMirrorTopics("dr", List.of("orders"), List.of());
            c.awaitPartitionState("orders", "PAUSED");
            c.produce("orders", 0, 50);
            c.commitOnSource("app-billing", Map.of(ORDERS_0, 140L, ORDERS_1, 100L));
            c.awaitDestinationOffsets("app-billing", Map.of(ORDERS_0, 100L, ORDERS_1, 100L));
            OffsetAndMetadata clamped = c.destinationCommitted("app-billing").get(ORDERS_0);
            assertEquals(Optional.empty(), clamped.leaderEpoch(), "a clamped offset carries no epoch");
            Waits.waitFor("describe counts the clamped offset", () -> c.describeGroups().get("app-billing"),
                    g -> g.offsetsClamped() == 1, TIMEOUT);

            c.mirrors.resumeMirrorTopics("dr", List.of("orders"), List.of());
            c.awaitDestinationOffsets("app-billing", Map.of(ORDERS_0, 140L, ORDERS_1, 100L));
        }
    }

    @Test
    void aGroupWithMembersOnTheDestinationKeepsItsOwnOffsets() throws Exception {
        try (Clusters c = Clusters.start()) {
            c.createAndMirror(Map.of(), "orders");
            try (KafkaConsumer<byte[], byte[]> member = c.destination.consumer(Map.of("group.id", "app-live"))) {
                member.subscribe(List.of("orders"));
                Waits.waitUntil("the destination consumer joined and owns both partitions", () -> {
                    member.poll(Duration.ofMillis(100));
                    return member.assignment().size() == 2;
                }, TIMEOUT);
                member.commitSync(Map.of(ORDERS_0, new OffsetAndMetadata(10)));

                c.commitOnSource("app-live", Map.of(ORDERS_0, 80L));
                c.commitOnSource("app-marker", Map.of(ORDERS_0, 1L)); // synced in a pass that also saw app-live
                c.awaitDestinationOffsets("app-marker", Map.of(ORDERS_0, 1L));
                member.poll(Duration.ofMillis(10));
                assertEquals(10L, c.destinationCommitted("app-live").get(ORDERS_0).offset(),
                        "a group with members on the destination is not overwritten");
                assertFalse(c.describeGroups().containsKey("app-live"));
            }
            c.awaitDestinationOffsets("app-live", Map.of(ORDERS_0, 80L)); // its member left: synced again
        }
    }

    @Test
    void aFailedOverTopicIsNoLongerSynced() throws Exception {
        try (Clusters c = Clusters.start()) {
            c.createAndMirror(Map.of(), "orders", "payments");
            c.commitOnSource("app-x", Map.of(ORDERS_0, 20L, PAYMENTS_0, 20L));
            c.awaitDestinationOffsets("app-x", Map.of(ORDERS_0, 20L, PAYMENTS_0, 20L));

            assertEquals(Map.of(), c.mirrors.stopMirrorTopics("dr", List.of("orders"), List.of()));
            c.awaitPartitionState("orders", "STOPPED");
            c.commitOnSource("app-x", Map.of(ORDERS_0, 90L, PAYMENTS_0, 90L));
            c.awaitDestinationOffsets("app-x", Map.of(ORDERS_0, 20L, PAYMENTS_0, 90L));
            assertEquals(1, c.describeGroups().get("app-x").offsetsSynced(), "only payments is still synced");
        }
    }

    /** A source and a destination cluster, a mirror "dr" between them, and clients for both. */
    private static final class Clusters implements AutoCloseable {
        final TestCluster source;
        final TestCluster destination;
        final Admin sourceAdmin;
        final Admin destinationAdmin;
        final MirrorAdmin mirrors;

        private Clusters(TestCluster source, TestCluster destination) {
            this.source = source;
            this.destination = destination;
            this.sourceAdmin = source.admin();
            this.destinationAdmin = destination.admin();
            this.mirrors = MirrorAdmin.create(destination.bootstrapServers(), TIMEOUT);
        }

        static Clusters start() throws Exception {
            TestCluster source = TestCluster.builder().brokers(1).build().start();
            try {
                return new Clusters(source, TestCluster.builder().brokers(1).build().start());
            } catch (Exception | Error e) {
                source.close();
                throw e;
            }
        }

        /** Source topics of 2 partitions with 100 records each, mirrored by "dr" with a 300 ms group sync. */
        void createAndMirror(Map<String, String> groupConfigs, String... topics) throws Exception {
            for (String topic : topics) {
                sourceAdmin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
                produce(topic, 0, 100);
                produce(topic, 1, 100);
            }
            Map<String, String> configs = new HashMap<>(groupConfigs);
            configs.put("bootstrap.servers", source.bootstrapServers());
            configs.put("mirror.groups.sync.interval.ms", "300");
            mirrors.createClusterMirror("dr", configs);
            assertEquals(Map.of(), mirrors.startMirrorTopics("dr", List.of(topics), List.of(), List.of()));
            for (String topic : topics) {
                awaitPartitionState(topic, "MIRRORING");
                Waits.waitUntil(topic + " mirrored", () -> destination.broker(0).logStore()
                        .log(new TopicPartition(topic, 1)).map(l -> l.logEndOffset() == 100).orElse(false), TIMEOUT);
            }
        }

        void produce(String topic, int partition, int count) throws Exception {
            try (KafkaProducer<byte[], byte[]> p = source.producer(Map.of("linger.ms", 5))) {
                for (int i = 0; i < count; i++) {
                    p.send(new ProducerRecord<>(topic, partition, null, ("v" + i).getBytes(StandardCharsets.UTF_8)));
                }
                p.flush();
            }
        }

        /** Commits as a consumer of the source would (leader epoch 0: the source's only epoch). */
        void commitOnSource(String group, Map<TopicPartition, Long> offsets) throws Exception {
            Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
            offsets.forEach((tp, o) -> commit.put(tp, new OffsetAndMetadata(o, Optional.of(0), "from-source")));
            sourceAdmin.alterConsumerGroupOffsets(group, commit).all().get();
        }

        Map<TopicPartition, OffsetAndMetadata> destinationCommitted(String group) throws Exception {
            Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
            destinationAdmin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().forEach((tp, o) -> {
                if (o != null) {
                    out.put(tp, o);
                }
            });
            return out;
        }

        void awaitDestinationOffsets(String group, Map<TopicPartition, Long> expected) {
            Waits.waitFor("group " + group + " at " + expected + " on the destination", () -> {
                Map<TopicPartition, Long> offsets = new HashMap<>();
                destinationCommitted(group).forEach((tp, o) -> offsets.put(tp, o.offset()));
                return offsets;
            }, expected::equals, TIMEOUT);
        }

        Map<String, MirrorAdmin.GroupSyncDescription> describeGroups() throws Exception {
            return mirrors.describeClusterMirrors(List.of("dr")).get("dr").groups();
        }

        void awaitPartitionState(String topic, String state) {
            Waits.waitFor(topic + " " + state, () -> mirrors.describeClusterMirrors(List.of("dr")).get("dr").topics()
                    .get(topic).partitions(), ps -> !ps.isEmpty() && ps.stream().allMatch(p -> p.state().equals(state)),
                    TIMEOUT);
        }

        @Override
        public void close() {
            mirrors.close();
            sourceAdmin.close();
            destinationAdmin.close();
            destination.close();
            source.close();
        }
    }
}
