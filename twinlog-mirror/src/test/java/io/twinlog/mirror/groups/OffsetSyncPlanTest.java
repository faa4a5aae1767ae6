package io.twinlog.mirror.groups;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.mirror.groups.OffsetSyncPlan.CommittedOffset;
import io.twinlog.mirror.groups.OffsetSyncPlan.DestinationGroup;
import io.twinlog.mirror.groups.OffsetSyncPlan.DestinationPartition;
import io.twinlog.mirror.groups.OffsetSyncPlan.GroupPlan;
import io.twinlog.mirror.groups.OffsetSyncPlan.Outcome;
import io.twinlog.mirror.store.GroupSyncRecord;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class OffsetSyncPlanTest {
    private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);
    private static final TopicPartition ORDERS_1 = new TopicPartition("orders", 1);
    private static final TopicPartition PAYMENTS_0 = new TopicPartition("payments", 0);

    @Test
    void anOffsetTheDestinationHoldsIsCopiedWithItsEpochAndMetadata() {
        GroupPlan plan = context().sourceCommitted(ORDERS_0, 40, 3, "m").destinationHolds(ORDERS_0, 0, 100).plan();
        assertEquals(Outcome.SYNC, plan.outcome());
        assertEquals(Map.of(ORDERS_0, new CommittedOffset(40, Optional.of(3), "m")), plan.writes());
        assertEquals(1, plan.offsetsSynced());
        assertEquals(0, plan.offsetsClamped());
    }

    @Test
    void anOffsetPastTheDestinationHighWatermarkIsClampedToItWithoutAnEpoch() {
        GroupPlan plan = context().sourceCommitted(ORDERS_0, 150, 3, "m").destinationHolds(ORDERS_0, 0, 100).plan();
        assertEquals(Map.of(ORDERS_0, new CommittedOffset(100, Optional.empty(), "m")), plan.writes());
        assertEquals(1, plan.offsetsClamped());
    }

    @Test
    void anOffsetBelowTheDestinationLogStartIsRaisedToIt() {
        GroupPlan plan = context().sourceCommitted(ORDERS_0, 5, 1, "").destinationHolds(ORDERS_0, 20, 100).plan();
        assertEquals(Map.of(ORDERS_0, new CommittedOffset(20, Optional.empty(), "")), plan.writes());
        assertEquals(1, plan.offsetsClamped());
    }

    @Test
    void anEmptyDestinationPartitionGetsOffsetZero() {
        GroupPlan plan = context().sourceCommitted(ORDERS_0, 7, 0, "").destinationHolds(ORDERS_0, 0, 0).plan();
        assertEquals(0L, plan.writes().get(ORDERS_0).offset());
    }

    @Test
    void offsetsAlreadyEqualAreCountedButNotRewritten() {
        GroupPlan plan = context().sourceCommitted(ORDERS_0, 40, 3, "").sourceCommitted(ORDERS_1, 9, 3, "")
                .destinationHolds(ORDERS_0, 0, 100).destinationHolds(ORDERS_1, 0, 100)
                .destinationCommitted(ORDERS_0, 40).plan();
        assertEquals(Set.of(ORDERS_1), plan.writes().keySet());
        assertEquals(2, plan.offsetsSynced());
    }

    @Test
    void theDestinationFollowsASourceResetToAnEarlierOffset() {
        GroupPlan plan = context().sourceCommitted(ORDERS_0, 10, 3, "").destinationHolds(ORDERS_0, 0, 100)
                .destinationCommitted(ORDERS_0, 60).plan();
        assertEquals(10L, plan.writes().get(ORDERS_0).offset());
    }

    @ParameterizedTest
    @EnumSource(value = GroupState.class, names = {"STABLE", "PREPARING_REBALANCE", "COMPLETING_REBALANCE",
        "ASSIGNING", "RECONCILING", "UNKNOWN", "NOT_READY"})
    void aGroupNotKnownIdleOnTheDestinationIsLeftAlone(GroupState state) {
        GroupPlan plan = context().sourceCommitted(ORDERS_0, 40, 3, "").destinationHolds(ORDERS_0, 0, 100)
                .destinationGroup(state, 1).plan();
        assertEquals(Outcome.SKIPPED_ACTIVE, plan.outcome());
        assertTrue(plan.writes().isEmpty());
    }

    @Test
    void anEmptyStateWithMembersIsNotIdle() {
        assertFalse(new DestinationGroup(GroupState.EMPTY, 2, Map.of()).isIdle());
        assertTrue(new DestinationGroup(GroupState.EMPTY, 0, Map.of()).isIdle());
        assertTrue(DestinationGroup.absent().isIdle(), "a group unknown on the destination is synced");
    }

    @Test
    void onlyTopicsTheMirrorStillSyncsAreWritten() {
        GroupPlan plan = context().syncable("orders").sourceCommitted(ORDERS_0, 40, 3, "")
                .sourceCommitted(PAYMENTS_0, 8, 3, "").destinationHolds(ORDERS_0, 0, 100)
                .destinationHolds(PAYMENTS_0, 0, 100).plan();
        assertEquals(Set.of(ORDERS_0), plan.writes().keySet());
    }

    @Test
    void aGroupWithNoOffsetsForSyncedTopicsIsSkipped() {
        GroupPlan plan = context().syncable("orders").sourceCommitted(PAYMENTS_0, 8, 3, "")
                .destinationHolds(PAYMENTS_0, 0, 100).plan();
        assertEquals(Outcome.SKIPPED_NO_OFFSETS, plan.outcome());
    }

    @Test
    void aPartitionTheDestinationDidNotReportIsNotSyncedThisTime() {
        GroupPlan plan = context().sourceCommitted(ORDERS_0, 40, 3, "").sourceCommitted(ORDERS_1, 40, 3, "")
                .destinationHolds(ORDERS_0, 0, 100).plan();
        assertEquals(Set.of(ORDERS_0), plan.writes().keySet());
        assertEquals(1, plan.offsetsSynced());
    }

    @Test
    void syncableTopicsAreThisMirrorsTopicsNotFailedOverNorFailedForGood() {
        Map<String, MirrorImage.MirrorTopic> topics = Map.of(
                "orders", new MirrorImage.MirrorTopic("dr", DesiredMirrorState.MIRRORING),
                "paused", new MirrorImage.MirrorTopic("dr", DesiredMirrorState.PAUSED),
                "stopped", new MirrorImage.MirrorTopic("dr", DesiredMirrorState.STOPPED),
                "stopping", new MirrorImage.MirrorTopic("dr", DesiredMirrorState.MIRRORING),
                "deleted-on-source", new MirrorImage.MirrorTopic("dr", DesiredMirrorState.MIRRORING),
                "elsewhere", new MirrorImage.MirrorTopic("other", DesiredMirrorState.MIRRORING));
        Map<TopicPartition, MirrorImage.MirrorPartition> partitions = Map.of(
                new TopicPartition("orders", 0), partition(MirrorPartitionState.MIRRORING),
                new TopicPartition("orders", 1), failed(true),
                new TopicPartition("stopping", 0), partition(MirrorPartitionState.MIRRORING),
                new TopicPartition("stopping", 1), partition(MirrorPartitionState.STOPPING),
                new TopicPartition("deleted-on-source", 0), failed(false));
        assertEquals(Set.of("orders", "paused"),
                OffsetSyncPlan.syncableTopics("dr", new MirrorImage(topics, partitions)));
    }

    @Test
    void aPrefixedMirrorsSourceOffsetsGoOntoItsTopicsNamesHere() {
        Map<String, MirrorImage.MirrorTopic> topics = Map.of(
                "west.orders", new MirrorImage.MirrorTopic("dr", DesiredMirrorState.MIRRORING, Optional.empty(),
                        Optional.of("orders")),
                "payments", new MirrorImage.MirrorTopic("dr", DesiredMirrorState.MIRRORING),
                "west.other", new MirrorImage.MirrorTopic("other", DesiredMirrorState.MIRRORING, Optional.empty(),
                        Optional.of("other")));
        Map<String, String> destinationOf = OffsetSyncPlan.destinationTopics("dr", new MirrorImage(topics, Map.of()));
        assertEquals(Map.of("orders", "west.orders", "payments", "payments"), destinationOf);
        Map<TopicPartition, CommittedOffset> source = Map.of(ORDERS_0, new CommittedOffset(40, Optional.of(3), ""),
                PAYMENTS_0, new CommittedOffset(8, Optional.of(3), ""),
                new TopicPartition("west.orders", 0), new CommittedOffset(99, Optional.empty(), ""));
        assertEquals(Map.of(new TopicPartition("west.orders", 0), new CommittedOffset(40, Optional.of(3), ""),
                        PAYMENTS_0, new CommittedOffset(8, Optional.of(3), "")),
                OffsetSyncPlan.onDestinationTopics(source, destinationOf),
                "orders' offsets go onto west.orders; the source's own topic named west.orders is another topic");
    }

    @Test
    void shareStartOffsetsAreCommittedOffsetsWithoutEpochAndUnresolvedOnesDropOut() {
        Map<TopicPartition, Long> spso = new HashMap<>();
        spso.put(ORDERS_0, 12L);
        spso.put(ORDERS_1, -1L); // initialized, not resolved by a share fetch yet
        spso.put(PAYMENTS_0, null); // left out of the answer with an error
        assertEquals(Map.of(ORDERS_0, new CommittedOffset(12, Optional.empty(), "")),
                OffsetSyncPlan.startOffsets(spso));
    }

    @Test
    void aShareGroupStartOffsetIsClampedAndOnlyChangedOnesAreWritten() {
        // every AlterShareGroupOffsets re-initializes the share partition with a new state epoch: equal ones stay
        GroupPlan plan = context().sourceStartOffset(ORDERS_0, 150).sourceStartOffset(ORDERS_1, 30)
                .sourceStartOffset(PAYMENTS_0, -1).destinationHolds(ORDERS_0, 0, 100).destinationHolds(ORDERS_1, 0, 100)
                .destinationHolds(PAYMENTS_0, 0, 100).destinationCommitted(ORDERS_1, 30).plan();
        assertEquals(Outcome.SYNC, plan.outcome());
        assertEquals(Map.of(ORDERS_0, new CommittedOffset(100, Optional.empty(), "")), plan.writes());
        assertEquals(2, plan.offsetsSynced(), "the unresolved start offset is not synced");
        assertEquals(1, plan.offsetsClamped());
    }

    @Test
    void aShareGroupWithAMemberOnTheDestinationIsLeftAlone() {
        GroupPlan plan = context().sourceStartOffset(ORDERS_0, 40).destinationHolds(ORDERS_0, 0, 100)
                .destinationGroup(GroupState.STABLE, 1).plan();
        assertEquals(Outcome.SKIPPED_ACTIVE, plan.outcome());
        GroupPlan emptied = context().sourceStartOffset(ORDERS_0, 40).destinationHolds(ORDERS_0, 0, 100)
                .destinationGroup(GroupState.EMPTY, 0).plan();
        assertEquals(Map.of(ORDERS_0, new CommittedOffset(40, Optional.empty(), "")), emptied.writes());
    }

    @Test
    void listingsAreConsumerOrShareGroupsOrNeither() {
        assertEquals(Optional.of(GroupSyncRecord.Type.CONSUMER), typeOf(GroupType.CONSUMER, "consumer"));
        assertEquals(Optional.of(GroupSyncRecord.Type.CONSUMER), typeOf(GroupType.CLASSIC, "consumer"));
        assertEquals(Optional.of(GroupSyncRecord.Type.CONSUMER), typeOf(GroupType.CLASSIC, ""),
                "a group that only commits offsets");
        assertEquals(Optional.of(GroupSyncRecord.Type.SHARE), typeOf(GroupType.SHARE, "share"));
        assertEquals(Optional.empty(), typeOf(GroupType.CLASSIC, "connect"));
        assertEquals(Optional.empty(), typeOf(GroupType.STREAMS, "streams"));
        assertEquals(Optional.of(GroupSyncRecord.Type.CONSUMER), GroupSelection.typeOf(new GroupListing("g",
                Optional.empty(), "consumer", Optional.empty())), "ListGroups before v5 has no type");
        assertEquals(Optional.empty(), GroupSelection.typeOf(new GroupListing("g", Optional.empty(), "connect",
                Optional.empty())));
    }

    private static Optional<GroupSyncRecord.Type> typeOf(GroupType type, String protocol) {
        return GroupSelection.typeOf(new GroupListing("g", Optional.of(type), protocol, Optional.empty()));
    }

    @Test
    void groupSelectionMatchesWholeIdsAndHonoursExcludes() {
        GroupSelection selection = GroupSelection.of(List.of("app-.*", "billing"), List.of(".*-test"));
        assertTrue(selection.matches("app-1"));
        assertTrue(selection.matches("billing"));
        assertFalse(selection.matches("billing-2"), "a pattern matches the whole ID");
        assertFalse(selection.matches("app-test"));
        assertTrue(GroupSelection.of(List.of(), List.of()).selectsNothing());
    }

    /** A FAILED partition's record as its leader writes it: retriable (attempt 2) or for good (-1). */
    private static MirrorImage.MirrorPartition failed(boolean retriable) {
        return new MirrorImage.MirrorPartition(MirrorPartitionState.FAILED, -1, Map.of("version", 1, "state",
                "FAILED", "retryAttempt", retriable ? 2 : -1), 0);
    }

    private static MirrorImage.MirrorPartition partition(MirrorPartitionState state) {
        return new MirrorImage.MirrorPartition(state, -1, Map.of(), 0);
    }

    private static PlanContext context() {
        return new PlanContext();
    }

    /** One group's inputs, built by scenario verbs; every topic is syncable unless {@link #syncable} says which. */
    private static final class PlanContext {
        private final Map<TopicPartition, CommittedOffset> source = new HashMap<>();
        private final Map<TopicPartition, DestinationPartition> held = new HashMap<>();
        private final Map<TopicPartition, CommittedOffset> destinationCommitted = new HashMap<>();
        private Set<String> syncable;
        private GroupState state = GroupState.EMPTY;
        private int members;

        PlanContext syncable(String... topics) {
            syncable = Set.of(topics);
            return this;
        }

        PlanContext sourceCommitted(TopicPartition tp, long offset, int epoch, String metadata) {
            source.put(tp, new CommittedOffset(offset, Optional.of(epoch), metadata));
            return this;
        }

        /** A share group's start offset on the source (-1: not resolved yet). */
        PlanContext sourceStartOffset(TopicPartition tp, long startOffset) {
            Map<TopicPartition, Long> one = new HashMap<>();
            one.put(tp, startOffset);
            source.remove(tp);
            source.putAll(OffsetSyncPlan.startOffsets(one));
            return this;
        }

        PlanContext destinationHolds(TopicPartition tp, long logStartOffset, long highWatermark) {
            held.put(tp, new DestinationPartition(logStartOffset, highWatermark));
            return this;
        }

        PlanContext destinationCommitted(TopicPartition tp, long offset) {
            destinationCommitted.put(tp, new CommittedOffset(offset, Optional.empty(), ""));
            return this;
        }

        PlanContext destinationGroup(GroupState groupState, int memberCount) {
            state = groupState;
            members = memberCount;
            return this;
        }

        GroupPlan plan() {
            Set<String> topics = syncable;
            if (topics == null) {
                topics = new HashSet<>();
                for (TopicPartition tp : source.keySet()) {
                    topics.add(tp.topic());
                }
            }
            return OffsetSyncPlan.planGroup("g", source, topics,
                    new DestinationGroup(state, members, destinationCommitted), held);
        }
    }
}
