package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.FeatureNode;
import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.Logger;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Share groups' start offsets (KIP-932) synced by a mirror: only for mirrored topics, clamped to what the destination
 * holds, following the source, left alone while the group has a member on the destination or its ID is a consumer
 * group there, no longer synced once the topic failed over; and a destination without share groups
 * ({@code share.version} 0) skips them with one INFO while consumer groups are synced as before.
 *
 * <p>Source start offsets are set with AlterShareGroupOffsets (share consumers across a failover:
 * {@link ShareConsumerFailoverTest}). As in {@link GroupOffsetSyncTest}, "not written" is proven by a
 * <em>marker</em> group synced in a later pass.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ShareGroupOffsetSyncTest {
    private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);
    private static final TopicPartition ORDERS_1 = new TopicPartition("orders", 1);
    private static final TopicPartition PAYMENTS_0 = new TopicPartition("payments", 0);
    private static final TopicPartition OTHER_0 = new TopicPartition("other", 0);
    private static final Duration TIMEOUT = GroupSyncClusters.TIMEOUT;

    @Test
    void startOffsetsFollowTheSourceUntilFailover() throws Exception {
        try (Clusters c = Clusters.start(true)) {
            c.createOnSource("other");
            c.createAndMirror(Map.of(), "orders", "payments");
            c.shareOffsetsOnSource("tasks", Map.of(ORDERS_0, 60L, ORDERS_1, 100L, OTHER_0, 10L));

            // only the mirrored topic's start offsets; the group did not exist here: AlterShareGroupOffsets made it
            c.awaitDestinationShareOffsets("tasks", Map.of(ORDERS_0, 60L, ORDERS_1, 100L));
            assertEquals(GroupState.EMPTY, c.destinationAdmin().describeShareGroups(List.of("tasks")).describedGroups()
                    .get("tasks").get().groupState());
            MirrorAdmin.GroupSyncDescription synced = Waits.waitFor("the sync of tasks in describe",
                    () -> c.describeGroups().get("tasks"), d -> d != null && d.offsetsSynced() == 2, TIMEOUT);
            assertEquals("SHARE", synced.groupType());
            assertEquals(0, synced.offsetsClamped());

            c.shareOffsetsOnSource("tasks", Map.of(ORDERS_0, 80L));
            c.awaitDestinationShareOffsets("tasks", Map.of(ORDERS_0, 80L, ORDERS_1, 100L));

            // the destination stops at 100 (paused) while the source group moves to 140 of 150
            c.mirrors().pauseMirrorTopics("dr", List.of("orders"), List.of());
            c.awaitPartitionState("orders", "PAUSED");
            c.produce("orders", 0, 50);
            c.shareOffsetsOnSource("tasks", Map.of(ORDERS_0, 140L));
            c.awaitDestinationShareOffsets("tasks", Map.of(ORDERS_0, 100L, ORDERS_1, 100L));
            Waits.waitFor("describe counts the clamped start offset", () -> c.describeGroups().get("tasks"),
                    g -> g.offsetsClamped() == 1, TIMEOUT);
            c.mirrors().resumeMirrorTopics("dr", List.of("orders"), List.of());
            c.awaitDestinationShareOffsets("tasks", Map.of(ORDERS_0, 140L, ORDERS_1, 100L));

            // a member on the destination owns the group's start offsets; so does a consumer group of the same ID
            String member = Uuid.randomUuid().toString();
            c.joinOnDestination("tasks", member);
            c.destinationAdmin().alterConsumerGroupOffsets("taken", Map.of(ORDERS_0, new OffsetAndMetadata(7)))
                    .all().get();
            c.shareOffsetsOnSource("taken", Map.of(ORDERS_0, 30L));
            c.shareOffsetsOnSource("tasks", Map.of(ORDERS_0, 20L));
            c.shareOffsetsOnSource("marker-1", Map.of(PAYMENTS_0, 1L)); // synced in a pass that saw both
            c.awaitDestinationShareOffsets("marker-1", Map.of(PAYMENTS_0, 1L));
            MirrorAdmin.GroupSyncDescription marker = Waits.waitFor("the sync of marker-1 in describe",
                    () -> c.describeGroups().get("marker-1"), d -> d != null, TIMEOUT);
            assertEquals(Map.of(ORDERS_0, 140L, ORDERS_1, 100L), c.destinationShareOffsets("tasks"),
                    "a share group with a member on the destination is not overwritten");
            assertTrue(c.describeGroups().get("tasks").lastSyncTimeMs() < marker.lastSyncTimeMs(),
                    "its LAST-SYNC stays at the last pass that synced it, before the member joined");
            assertEquals(7L, c.destinationAdmin().listConsumerGroupOffsets("taken").partitionsToOffsetAndMetadata()
                    .get().get(ORDERS_0).offset(), "a consumer group of the same ID keeps its offsets");
            assertFalse(c.describeGroups().containsKey("taken"));
            assertEquals(Errors.NONE.code(), c.heartbeatOnDestination("tasks", member, -1).errorCode());
            c.awaitDestinationShareOffsets("tasks", Map.of(ORDERS_0, 20L, ORDERS_1, 100L)); // it left: synced again

            // failover: the source moves on, the destination group keeps the synced start offsets, and a member
            // joining there is assigned the partitions with them (not re-initialized)
            assertEquals(Map.of(), c.mirrors().stopMirrorTopics("dr", List.of("orders"), List.of()));
            c.awaitPartitionState("orders", "STOPPED");
            c.shareOffsetsOnSource("tasks", Map.of(ORDERS_0, 5L, ORDERS_1, 5L));
            c.shareOffsetsOnSource("marker-2", Map.of(PAYMENTS_0, 2L));
            c.awaitDestinationShareOffsets("marker-2", Map.of(PAYMENTS_0, 2L));
            assertEquals(Map.of(ORDERS_0, 20L, ORDERS_1, 100L), c.destinationShareOffsets("tasks"));
            c.joinOnDestination("tasks", Uuid.randomUuid().toString());
            assertEquals(Map.of(ORDERS_0, 20L, ORDERS_1, 100L), c.destinationShareOffsets("tasks"));
        }
    }

    @Test
    void aDestinationWithoutShareGroupsSkipsThemWithOneInfo() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        try (LogLines ignored = LogLines.of("io.twinlog.mirror.runtime.MirrorGroupOffsetSync", lines);
             Clusters c = Clusters.start(false)) {
            c.createAndMirror(Map.of(), "orders");
            c.shareOffsetsOnSource("tasks", Map.of(ORDERS_0, 30L));
            for (long offset = 40; offset < 43; offset++) { // three syncs, so at least three passes
                c.commitOnSource("app", Map.of(ORDERS_0, offset));
                c.awaitDestinationOffsets("app", Map.of(ORDERS_0, offset));
            }
            Map<String, MirrorAdmin.GroupSyncDescription> groups = c.describeGroups();
            assertEquals(List.of("app"), List.copyOf(groups.keySet()));
            assertEquals("CONSUMER", groups.get("app").groupType());
            List<String> skipped = lines.stream().filter(l -> l.contains("share groups are not synced")).toList();
            assertEquals(1, skipped.size(), "one INFO, not one per pass: " + lines);
            assertTrue(skipped.get(0).contains("this cluster does not serve share groups"), skipped.get(0));
        }
    }

    /** The formatted lines one logger writes while open. */
    private static final class LogLines extends AbstractAppender implements AutoCloseable {
        private final Logger logger;
        private final List<String> lines;

        private LogLines(Logger logger, List<String> lines) {
            super("lines-" + Uuid.randomUuid(), null, null, true, Property.EMPTY_ARRAY);
            this.logger = logger;
            this.lines = lines;
        }

        static LogLines of(String loggerName, List<String> lines) {
            LogLines appender = new LogLines((Logger) LogManager.getLogger(loggerName), lines);
            appender.start();
            appender.logger.addAppender(appender);
            return appender;
        }

        @Override
        public void append(LogEvent event) {
            lines.add(event.getLevel() + " " + event.getMessage().getFormattedMessage());
        }

        @Override
        public void close() {
            logger.removeAppender(this);
            stop();
        }
    }

    /** {@link GroupSyncClusters} with share groups on at the source, and at the destination if asked. */
    private static final class Clusters extends GroupSyncClusters {
        /** Opened after share.version was set: a connection keeps the APIs its broker advertised when it opened. */
        private Clusters(TestCluster source, TestCluster destination) {
            super(source, destination);
        }

        static Clusters start(boolean shareGroupsOnDestination) throws Exception {
            return GroupSyncClusters.start(shareGroupCluster(), shareGroupCluster(), (source, destination) -> {
                enableShareGroups(source);
                // share groups are on by default (decision 106): a destination without them is switched off
                FeatureNode.finalize(destination, Map.of("transaction.version", 2,
                        "share.version", shareGroupsOnDestination ? 1 : 0), TIMEOUT);
                return new Clusters(source, destination);
            });
        }

        /** share.version 1 (transaction.version at its default, 2). */
        private static void enableShareGroups(TestCluster cluster) throws Exception {
            FeatureNode.finalize(cluster, Map.of("transaction.version", 2, "share.version", 1), TIMEOUT);
        }

        /** Sets a share group's start offsets on the source (the group has no members: AlterShareGroupOffsets). */
        void shareOffsetsOnSource(String group, Map<TopicPartition, Long> startOffsets) throws Exception {
            sourceAdmin().alterShareGroupOffsets(group, startOffsets).all().get();
        }

        /** The group's start offsets on the destination (none for a group it does not know). */
        Map<TopicPartition, Long> destinationShareOffsets(String group) throws Exception {
            return shareStartOffsets(destinationAdmin(), group);
        }

        void awaitDestinationShareOffsets(String group, Map<TopicPartition, Long> expected) {
            Waits.waitFor("share group " + group + " at " + expected + " on the destination",
                    () -> destinationShareOffsets(group), expected::equals, TIMEOUT);
        }

        /**
         * A member joins the share group on the destination (subscribed to orders) and is assigned partitions, in the
         * answer to its join or to a later heartbeat (an assignment is sent once, when it changes).
         */
        void joinOnDestination(String group, String memberId) {
            AtomicInteger epoch = new AtomicInteger(0);
            Waits.waitFor("member " + memberId + " joined " + group + " and assigned orders", () -> {
                ShareGroupHeartbeatResponseData r = heartbeatOnDestination(group, memberId, epoch.get());
                if (r.errorCode() == Errors.NONE.code()) {
                    epoch.set(r.memberEpoch());
                }
                return r;
            }, r -> r.errorCode() == Errors.NONE.code() && r.assignment() != null
                    && !r.assignment().topicPartitions().isEmpty(), TIMEOUT);
        }

        ShareGroupHeartbeatResponseData heartbeatOnDestination(String group, String memberId, int epoch)
                throws Exception {
            try (RawKafkaConnection connection = RawKafkaConnection.to(destination().bootstrapServers())) {
                ShareGroupHeartbeatResponse response = connection.send(new ShareGroupHeartbeatRequest.Builder(
                        new ShareGroupHeartbeatRequestData().setGroupId(group).setMemberId(memberId)
                                .setMemberEpoch(epoch).setSubscribedTopicNames(epoch == 0 ? List.of("orders") : null))
                        .build());
                return response.data();
            }
        }
    }
}
