package io.twinlog.server.mirror;

import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.mirror.MirrorTopicConfigs;
import io.twinlog.common.mirror.TruncationPoints.Point;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorTruncation;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link MirrorMetadataView}: what the mirror API handlers read from one metadata image. */
@Timeout(60)
class MirrorMetadataViewTest {
    private static final Uuid ID = new Uuid(7, 7);
    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final TopicPartition T1 = new TopicPartition("t", 1);

    private static MirrorPartitionRecord in(MirrorPartitionState state) {
        return MirrorPartitionRecord.initial(0).transitionTo(state, 1);
    }

    private static TestMirrorImage twoPartitions() {
        return TestMirrorImage.builder().topic("t", ID, 2, List.of(0, 1, 2), List.of(0, 1)).mirroredBy("t", "m");
    }

    @Test
    void aTopicThisClusterLacksHasTheZeroIdAndNoPartitions() {
        MirrorMetadataView view = twoPartitions().view();
        assertEquals(ID, view.topicId("t"));
        assertEquals(Uuid.ZERO_UUID, view.topicId("absent"));
        assertEquals(List.of(), List.copyOf(view.partitions("absent")));
        assertEquals(List.of(T0, T1), view.partitionsOf(List.of("absent", "t")));
    }

    @Test
    void aMirrorTopicNamesItsMirror() {
        MirrorMetadataView view = twoPartitions().view();
        assertEquals(Optional.of("m"), view.mirrorOf("t"));
        assertEquals(Optional.empty(), view.mirrorOf("local"));
    }

    @Test
    void aPartitionWithoutARecordReadsAsTheInitialOne() {
        MirrorPartitionRecord mirroring = in(MirrorPartitionState.MIRRORING).withLastMirrored(3, 42L);
        MirrorMetadataView view = twoPartitions().record(T0, mirroring).view();
        assertEquals(Optional.of(mirroring), view.recorded(T0));
        assertEquals(mirroring, view.record(T0));
        assertEquals(Optional.empty(), view.recorded(T1));
        assertEquals(MirrorPartitionRecord.initial(-1), view.record(T1));
    }

    @Test
    void aPendingTruncationWaitsForTheIsrReplicasThatHaveNotAppliedIt() {
        MirrorTruncation pending = new MirrorTruncation(List.of(new Point(5, 100L)), false);
        TestMirrorImage image = twoPartitions().applied(0, T0, 5L).applied(1, T0, 4L);
        assertEquals(List.of(1), image.view().truncationPendingReplicas(T0, image.view().partitions("t").iterator()
                .next(), pending));
    }

    @Test
    void withUncleanElectionSupportATruncationWaitsForEveryAssignedReplica() {
        MirrorTruncation pending = new MirrorTruncation(List.of(new Point(5, 100L)), false);
        TestMirrorImage image = twoPartitions().applied(0, T0, 5L)
                .topicConfig("t", MirrorTopicConfigs.SUPPORT_UNCLEAN_LEADER_ELECTION, "true");
        MirrorMetadataView view = image.view();
        assertEquals(List.of(1, 2), view.truncationPendingReplicas(T0, view.partitions("t").iterator().next(),
                pending));
    }

    @Test
    void aCompleteTruncationOrNoneWaitsForNoReplica() {
        MirrorMetadataView view = twoPartitions().view();
        assertEquals(List.of(), view.truncationPendingReplicas(T0, view.partitions("t").iterator().next(),
                new MirrorTruncation(List.of(new Point(5, 100L)), true)));
        assertEquals(List.of(), view.truncationPendingReplicas(T0, view.partitions("t").iterator().next(),
                MirrorTruncation.NONE));
    }

    @Test
    void aTopicIsStoppedWhenEveryPartitionIsOrWhenThisClusterLacksIt() {
        MirrorPartitionRecord stopped = in(MirrorPartitionState.STOPPED);
        assertTrue(twoPartitions().view().allStopped("absent"));
        assertFalse(twoPartitions().record(T0, stopped).view().allStopped("t"), "partition 1 has no record");
        assertFalse(twoPartitions().record(T0, stopped).record(T1, in(MirrorPartitionState.STOPPING)).view()
                .allStopped("t"));
        assertTrue(twoPartitions().record(T0, stopped).record(T1, stopped).view().allStopped("t"));
    }

    @Test
    void aFailoverFailedWhenAPartitionWentFailedFromStopping() {
        MirrorPartitionRecord failedStopping = in(MirrorPartitionState.STOPPING).failed("no leader", true, 2);
        MirrorPartitionRecord failedMirroring = in(MirrorPartitionState.MIRRORING).failed("source gone", true, 2);
        assertEquals(Optional.empty(), twoPartitions().record(T0, failedMirroring).view().failedFailover("t"));
        assertEquals(Optional.of("partition 1: no leader"), twoPartitions().record(T0, failedMirroring)
                .record(T1, failedStopping).view().failedFailover("t"));
        assertEquals(Optional.empty(), twoPartitions().view().failedFailover("absent"));
    }
}
