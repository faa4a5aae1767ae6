package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

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
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class GroupOffsetSyncTest {
    private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);
    private static final TopicPartition ORDERS_1 = new TopicPartition("orders", 1);
    private static final TopicPartition PAYMENTS_0 = new TopicPartition("payments", 0);
    private static final Duration TIMEOUT = GroupSyncClusters.TIMEOUT;

    @Test
    void syncsSelectedGroupsClampedToTheDestinationHighWatermark() throws Exception {
        try (GroupSyncClusters c = GroupSyncClusters.start()) {
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
            c.mirrors().pauseMirrorTopics("dr", List.of("orders"), List.of());
            c.awaitPartitionState("orders", "PAUSED");
            c.produce("orders", 0, 50);
            c.commitOnSource("app-billing", Map.of(ORDERS_0, 140L, ORDERS_1, 100L));
            c.awaitDestinationOffsets("app-billing", Map.of(ORDERS_0, 100L, ORDERS_1, 100L));
            OffsetAndMetadata clamped = c.destinationCommitted("app-billing").get(ORDERS_0);
            assertEquals(Optional.empty(), clamped.leaderEpoch(), "a clamped offset carries no epoch");
            Waits.waitFor("describe counts the clamped offset", () -> c.describeGroups().get("app-billing"),
                    g -> g.offsetsClamped() == 1, TIMEOUT);

            c.mirrors().resumeMirrorTopics("dr", List.of("orders"), List.of());
            c.awaitDestinationOffsets("app-billing", Map.of(ORDERS_0, 140L, ORDERS_1, 100L));
        }
    }

    @Test
    void aGroupWithMembersOnTheDestinationKeepsItsOwnOffsets() throws Exception {
        try (GroupSyncClusters c = GroupSyncClusters.start()) {
            c.createAndMirror(Map.of(), "orders");
            try (KafkaConsumer<byte[], byte[]> member = c.destination().consumer(Map.of("group.id", "app-live"))) {
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
        try (GroupSyncClusters c = GroupSyncClusters.start()) {
            c.createAndMirror(Map.of(), "orders", "payments");
            c.commitOnSource("app-x", Map.of(ORDERS_0, 20L, PAYMENTS_0, 20L));
            c.awaitDestinationOffsets("app-x", Map.of(ORDERS_0, 20L, PAYMENTS_0, 20L));

            assertEquals(Map.of(), c.mirrors().stopMirrorTopics("dr", List.of("orders"), List.of()));
            c.awaitPartitionState("orders", "STOPPED");
            c.commitOnSource("app-x", Map.of(ORDERS_0, 90L, PAYMENTS_0, 90L));
            c.awaitDestinationOffsets("app-x", Map.of(ORDERS_0, 20L, PAYMENTS_0, 90L));
            assertEquals(1, c.describeGroups().get("app-x").offsetsSynced(), "only payments is still synced");
        }
    }
}
