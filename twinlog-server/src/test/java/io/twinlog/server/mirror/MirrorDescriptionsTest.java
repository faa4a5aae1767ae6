package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirror;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorConfig;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorGroup;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorPartition;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorTopic;
import io.twinlog.clients.mirror.message.ListClusterMirrorsResponseData.ListedMirror;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.mirror.TruncationPoints.Point;
import io.twinlog.mirror.store.GroupSyncRecord;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorProgress;
import io.twinlog.mirror.store.MirrorTruncation;
import io.twinlog.mirror.store.PointInTimeOutcome;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** {@link MirrorDescriptions}: the list and describe entries built from what the handler read. */
@Timeout(60)
class MirrorDescriptionsTest {
    private static final Uuid ID = new Uuid(3, 4);
    private static final TopicPartition ORDERS0 = new TopicPartition("orders", 0);
    private static final TopicPartition ORDERS1 = new TopicPartition("orders", 1);
    private static final long NOW = 1_796_637_600_000L;

    private static MirrorDefinition mirror() {
        Map<String, String> configs = new TreeMap<>(Map.of(MirrorDefinition.BOOTSTRAP_SERVERS, "source:9092",
                MirrorDefinition.TOPIC_INCLUDE, "orders.*,pay", MirrorDefinition.TOPIC_EXCLUDE, ".*-internal",
                "sasl.jaas.config", "secret stuff"));
        return new MirrorDefinition("m", configs, Optional.of("source-id"), MirrorDefinition.State.ACTIVE,
                Optional.of("why not"));
    }

    private static Map<String, DesiredMirrorState> topics() {
        Map<String, DesiredMirrorState> topics = new LinkedHashMap<>();
        topics.put("orders", DesiredMirrorState.MIRRORING);
        topics.put("gone", DesiredMirrorState.STOPPED);
        return topics;
    }

    @Test
    void aListedMirrorNamesItsTopicsOnlyWhenAsked() {
        ListedMirror listed = MirrorDescriptions.listed(mirror(), topics(), true);
        assertEquals("m", listed.mirrorName());
        assertEquals("source:9092", listed.sourceBootstrap());
        assertEquals("source-id", listed.sourceClusterId());
        assertEquals("ACTIVE", listed.state());
        assertEquals(2, listed.topicCount());
        assertEquals(List.of("orders", "gone"), listed.topicNames());
        assertEquals(List.of(), MirrorDescriptions.listed(mirror(), topics(), false).topicNames());
    }

    @Test
    void aRefusedEntryCarriesTheErrorAndEmptyRequiredStrings() {
        DescribedMirror refused = MirrorDescriptions.refused("m", MirrorApiError.of(
                MirrorErrors.UNKNOWN_CLUSTER_MIRROR, "No cluster mirror named 'm'"));
        assertEquals(new DescribedMirror().setMirrorName("m").setErrorCode(MirrorErrors.UNKNOWN_CLUSTER_MIRROR.code)
                .setErrorMessage("No cluster mirror named 'm'").setState("").setStateReason(null)
                .setSourceBootstrap("").setSourceClusterId(null), refused);
    }

    @Test
    void aDescribedMirrorHidesSensitiveValuesAndListsItsPatterns() {
        DescribedMirror described = MirrorDescriptions.described(mirror(), Map.of(), TestMirrorImage.builder().view(),
                Map.of(), List.of(), NOW);
        assertEquals(0, described.errorCode());
        assertNull(described.errorMessage());
        assertEquals("why not", described.stateReason());
        assertEquals(4, described.configs().size());
        assertEquals(new DescribedMirrorConfig().setName("sasl.jaas.config").setValue(null).setSensitive(true),
                config(described, "sasl.jaas.config"));
        assertEquals(new DescribedMirrorConfig().setName(MirrorDefinition.BOOTSTRAP_SERVERS).setValue("source:9092")
                .setSensitive(false), config(described, MirrorDefinition.BOOTSTRAP_SERVERS));
        assertEquals(List.of("orders.*", "pay"), described.includePatterns());
        assertEquals(List.of(".*-internal"), described.excludePatterns());
    }

    private static DescribedMirrorConfig config(DescribedMirror described, String name) {
        return described.configs().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void eachTopicListsThePartitionsThisClusterHas() {
        MirrorMetadataView view = TestMirrorImage.builder().topic("orders", ID, 2, List.of(0, 1), List.of(0, 1))
                .view();
        DescribedMirror described = MirrorDescriptions.described(mirror(), topics(), view, Map.of(), List.of(), NOW);
        DescribedMirrorTopic orders = described.topics().get(0);
        assertEquals("orders", orders.topicName());
        assertEquals(ID, orders.topicId());
        assertEquals("MIRRORING", orders.desiredState());
        assertEquals(List.of(0, 1), orders.partitions().stream().map(DescribedMirrorPartition::partitionIndex)
                .toList());
        DescribedMirrorTopic gone = described.topics().get(1);
        assertEquals(Uuid.ZERO_UUID, gone.topicId());
        assertEquals("STOPPED", gone.desiredState());
        assertEquals(List.of(), gone.partitions());
    }

    @Test
    void aPartitionTakesItsRecordedProgressElseItsRecordsAndShowsItsTruncation() {
        MirrorPartitionRecord record = MirrorPartitionRecord.initial(0).transitionTo(MirrorPartitionState.MIRRORING, 1)
                .withLastMirrored(4, 99L).withProgress(new MirrorProgress(120L, 100L)).withError("slow")
                .withTruncation(new MirrorTruncation(List.of(new Point(2, 50L)), false, -1L, 7L, 40L));
        TestMirrorImage image = TestMirrorImage.builder().topic("orders", ID, 2, List.of(0, 1, 2), List.of(0, 2))
                .record(ORDERS0, record).record(ORDERS1, record).applied(0, ORDERS0, 2L);
        MirrorMetadataView view = image.view();
        Map<TopicPartition, MirrorProgress> recorded = Map.of(ORDERS1, new MirrorProgress(200L, 150L, NOW - 9_000L,
                NOW - 4_000L));
        List<DescribedMirrorPartition> partitions = MirrorDescriptions.described(mirror(), topics(), view, recorded,
                List.of(), NOW).topics().get(0).partitions();

        assertEquals(new DescribedMirrorPartition().setPartitionIndex(0).setState("MIRRORING")
                .setSourceLogEndOffset(120L).setDestinationLogEndOffset(100L).setLag(20L).setRetryAttempt((short) 1)
                .setLastError("slow").setLastMirroredEpoch(4).setLastMirroredOffset(99L)
                .setOutOfSyncReplicas(List.of(1)).setTruncationOffset(50L).setTruncationPendingReplicas(List.of(2))
                .setTruncatedOffsets(7L).setConsistentFromOffset(40L), partitions.get(0));
        DescribedMirrorPartition second = partitions.get(1);
        assertEquals(200L, second.sourceLogEndOffset());
        assertEquals(150L, second.destinationLogEndOffset());
        assertEquals(50L, second.lag());
        assertEquals(List.of(0, 2), second.truncationPendingReplicas(), "nobody applied partition 1's point");
        assertEquals(NOW - 9_000L, second.newestMirroredTimestamp());
        assertEquals(NOW - 4_000L, second.mirroredUpToMs());
        assertEquals(4_000L, second.rpoMs(), "the RPO from the mirrored-up-to time, on the answering broker's clock");
        assertEquals(-1L, partitions.get(0).rpoMs(), "a record without times: unknown, not 0");
    }

    @Test
    void aPartitionCutAtAPointInTimeShowsTheNewestBatchItKeptNotTheCutOne() {
        long at = NOW - 60_000L;
        PointInTimeOutcome cut = PointInTimeOutcome.started(at, PointInTimeOutcome.Reach.REACHED)
                .cut(9L, 29L, 20L, at - 3_000L);
        MirrorPartitionRecord stopped = MirrorPartitionRecord.initial(0).transitionTo(MirrorPartitionState.STOPPED, 2)
                .withPointInTime(cut);
        MirrorProgress beforeTheCut = new MirrorProgress(29L, 29L, at + 2_000L, NOW - 1_000L);
        MirrorDescriptions.ShownTimes shown = MirrorDescriptions.ShownTimes.of(stopped, beforeTheCut);
        assertEquals(at - 3_000L, shown.newest(), "the batch at the cut's end is the newest left");
        assertEquals(at, shown.upTo(), "nothing after the time asked for is held any more");

        MirrorPartitionRecord mirroring = stopped.transitionTo(MirrorPartitionState.MIRRORING, 3);
        assertEquals(new MirrorDescriptions.ShownTimes(at + 2_000L, NOW - 1_000L),
                MirrorDescriptions.ShownTimes.of(mirroring, beforeTheCut), "mirroring again: the recorded times");
        MirrorPartitionRecord plain = MirrorPartitionRecord.initial(0).transitionTo(MirrorPartitionState.STOPPED, 2);
        assertEquals(new MirrorDescriptions.ShownTimes(at + 2_000L, NOW - 1_000L),
                MirrorDescriptions.ShownTimes.of(plain, beforeTheCut), "a plain failover cuts nothing");
    }

    @Test
    void aPartitionWithoutARecordIsUnknownWithNothingMirrored() {
        MirrorMetadataView view = TestMirrorImage.builder().topic("orders", ID, 1, List.of(0), List.of(0)).view();
        DescribedMirrorPartition p = MirrorDescriptions.partition(ORDERS0, view.partitions("orders").iterator().next(),
                view, Map.of(), NOW);
        assertEquals("UNKNOWN", p.state());
        assertEquals(-1, p.lastMirroredEpoch());
        assertEquals(-1L, p.truncationOffset());
        assertEquals(List.of(), p.truncationPendingReplicas());
    }

    @Test
    void theGroupsItSyncsAreListedWithTheirLastSync() {
        DescribedMirror described = MirrorDescriptions.described(mirror(), Map.of(), TestMirrorImage.builder().view(),
                Map.of(), List.of(new GroupSyncRecord("g1", GroupSyncRecord.Type.CONSUMER, 1000L, 3, 1),
                        new GroupSyncRecord("s1", GroupSyncRecord.Type.SHARE, 2000L, 2, 0)), NOW);
        assertEquals(List.of(new DescribedMirrorGroup().setGroupId("g1").setLastSyncTimeMs(1000L).setOffsetsSynced(3)
                        .setOffsetsClamped(1).setGroupType("CONSUMER"),
                new DescribedMirrorGroup().setGroupId("s1").setLastSyncTimeMs(2000L).setOffsetsSynced(2)
                        .setOffsetsClamped(0).setGroupType("SHARE")), described.groups());
    }
}
