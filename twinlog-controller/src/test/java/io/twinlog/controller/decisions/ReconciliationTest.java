package io.twinlog.controller.decisions;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.store.StateWrite;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static io.twinlog.controller.decisions.TestImages.state;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One reconciliation round: which states and assignments the controller writes, one rule per test. */
@Timeout(5)
class ReconciliationTest {
    private static final TopicPartition A0 = new TopicPartition("a", 0);
    private static final TopicPartition B0 = new TopicPartition("b", 0);

    private static Reconciliation decide(MetadataImage image, Map<Integer, Long> knownEpochs) {
        return Reconciliation.decide(image, ClusterView.of(image.brokers(), knownEpochs), topic -> false);
    }

    @Test
    void nothingChangesInASteadyCluster() {
        MetadataImage image = TestImages.builder().broker(0, 100).broker(1, 101)
                .partition(A0, List.of(0, 1), state(0, 3, List.of(0, 1), 9), 9).build();
        Reconciliation r = decide(image, Map.of(0, 100L, 1, 101L));
        assertEquals(List.of(), r.stateChanges());
        assertEquals(List.of(), r.reassignmentSteps());
    }

    @Test
    void aNewPartitionIsCreatedWithItsFirstLiveReplicaAsLeader() {
        MetadataImage image = TestImages.builder().broker(1, 101).broker(2, 102)
                .partition(A0, List.of(0, 1, 2), null, -1).build();
        StateChange c = decide(image, Map.of()).stateChanges().get(0);
        assertEquals(StateChange.Kind.INITIAL, c.kind());
        assertEquals(new StateWrite(A0, state(1, 0, List.of(1, 2), 0), StateWrite.CREATE), c.write());
    }

    @Test
    void aRestartedLeaderIsReplacedAndLeavesTheIsr() {
        MetadataImage image = TestImages.builder().broker(0, 100).broker(1, 555)
                .partition(A0, List.of(1, 0), state(1, 4, List.of(1, 0), 10), 10).build();
        StateChange c = decide(image, Map.of(0, 100L, 1, 101L)).stateChanges().get(0);
        assertEquals(state(0, 5, List.of(0), 11), c.next());
        assertEquals(10, c.expectedVersion());
        assertEquals("brokers [1] restarted", c.reason());
    }

    /**
     * Campaign defect 3: broker 1 is back with an empty disk, seen by a new controller (no known epochs, so no
     * restart), while 2 (the leader) and 0 are down: it is not elected from the ISR [2, 1, 0].
     */
    @Test
    void aBrokerBackWithoutItsLogIsNotElectedFromTheIsrByAControllerThatMissedItsRestart() {
        MetadataImage image = TestImages.builder().broker(1, 555).lost(1, A0)
                .partition(A0, List.of(2, 1, 0), state(2, 4, List.of(2, 1, 0), 10), 10).build();
        StateChange c = decide(image, Map.of()).stateChanges().get(0);
        assertEquals(state(-1, 4, List.of(2), 11), c.next(), "offline, 2 kept to lead cleanly when back");
        assertTrue(c.reason().contains("brokers [1] started without their log of it while in its ISR"), c.reason());

        MetadataImage back = TestImages.builder().broker(1, 555).broker(2, 600).lost(1, A0)
                .partition(A0, List.of(2, 1, 0), state(-1, 4, List.of(2), 11), 11).build();
        assertEquals(state(2, 5, List.of(2), 12), decide(back, Map.of()).stateChanges().get(0).next());
    }

    @Test
    void aChangeBecauseOfTheBrokersNamesTheReplicasGoneOrLeaving() {
        MetadataImage image = TestImages.builder().broker(0, 100)
                .partition(A0, List.of(1, 0), state(1, 8, List.of(1, 0), 9), 9).build();
        StateChange c = decide(image, Map.of()).stateChanges().get(0);
        assertEquals(state(0, 9, List.of(0), 10), c.next());
        assertEquals("replicas [1] unavailable", c.reason());
        assertEquals("replicas [2] unavailable, replicas [0] in controlled shutdown",
                Reconciliation.brokersReason(List.of(0, 1, 2), Set.of(0, 1), Set.of(0)));
        assertEquals("replicas [0, 1] all available",
                Reconciliation.brokersReason(List.of(0, 1), Set.of(0, 1), Set.of()));
    }

    @Test
    void theSameBrokerSeenAgainWithTheSameEpochIsNotARestart() {
        MetadataImage image = TestImages.builder().broker(0, 100).broker(1, 555)
                .partition(A0, List.of(1, 0), state(1, 4, List.of(1, 0), 10), 10).build();
        assertEquals(List.of(), decide(image, Map.of(0, 100L, 1, 555L)).stateChanges());
    }

    @Test
    void aMirrorPartitionBelowItsMinimumEpochIsBumpedWithTheSameLeader() {
        MetadataImage image = TestImages.builder().broker(0, 100).broker(1, 101)
                .partition(A0, List.of(0, 1), state(0, 3, List.of(0, 1), 9), 9).mirrorPartition(A0, 8).build();
        StateChange c = decide(image, Map.of()).stateChanges().get(0);
        assertEquals(StateChange.Kind.MIRROR_EPOCH_BUMP, c.kind());
        assertEquals(state(0, 8, List.of(0, 1), 10), c.next());
    }

    @Test
    void aMirrorPartitionAtItsMinimumEpochFollowsTheBrokersAsUsual() {
        MetadataImage image = TestImages.builder().broker(0, 100)
                .partition(A0, List.of(1, 0), state(1, 8, List.of(1, 0), 9), 9).mirrorPartition(A0, 8).build();
        StateChange c = decide(image, Map.of()).stateChanges().get(0);
        assertEquals(StateChange.Kind.LEADERSHIP, c.kind());
        assertEquals(state(0, 9, List.of(0), 10), c.next());
    }

    @Test
    void aReassignmentAdvancesWhenItsTargetIsInSync() {
        MetadataImage image = TestImages.builder().broker(0, 100).broker(1, 101).broker(2, 102)
                .partition(A0, List.of(1, 2, 0), state(0, 3, List.of(0, 1, 2), 9), 9)
                .reassigning(A0, List.of(1, 2), List.of(0, 1)).build();
        Reconciliation r = decide(image, Map.of());
        AssignmentChange step = r.reassignmentSteps().get(0);
        assertEquals(List.of(1, 2), step.next().replicas().get(0));
        assertTrue(step.next().reassigning().isEmpty());
        assertEquals(List.of(new StateWrite(A0, state(1, 4, List.of(1, 2), 10), 9)), step.states());
        assertEquals(7, step.expectedVersion(), "fenced by the assignment version read");
    }

    @Test
    void aTopicWhoseStatesChangeThisRoundWaitsForTheNextToAdvanceItsReassignment() {
        MetadataImage image = TestImages.builder().broker(0, 100).broker(1, 101)
                .partition(A0, List.of(1, 2, 0), state(2, 3, List.of(2, 0, 1), 9), 9)
                .reassigning(A0, List.of(1, 2), List.of(0, 1))
                .partition(B0, List.of(0), state(0, 1, List.of(0), 1), 1).build();
        Reconciliation r = decide(image, Map.of());
        assertEquals(List.of(A0), r.stateChanges().stream().map(StateChange::partition).toList(),
                "broker 2 is gone: leadership first");
        assertEquals(List.of(), r.reassignmentSteps(), "its state version is about to change");
    }

    @Test
    void anUncleanElectionIsMarkedAsSuch() {
        MetadataImage image = TestImages.builder().broker(1, 101)
                .partition(A0, List.of(0, 1), state(0, 3, List.of(0), 9), 9).build();
        Reconciliation r = Reconciliation.decide(image, ClusterView.of(image.brokers()), topic -> true);
        StateChange c = r.stateChanges().get(0);
        assertEquals(state(1, 4, List.of(1), 10), c.next());
        assertTrue(c.unclean());
        assertEquals(Optional.of(state(0, 3, List.of(0), 9)), c.previous());
    }
}
