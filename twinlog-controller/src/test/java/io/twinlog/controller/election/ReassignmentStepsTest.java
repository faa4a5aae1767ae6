package io.twinlog.controller.election;

import io.twinlog.controller.election.ReassignmentSteps.Step;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicAssignment.Reassignment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replica reassignment, step by step: add the target replicas (replicas = target ∪ original), wait until they are
 * all in sync, then drop the leaving replicas and move leadership if the leader leaves. Nothing is removed before
 * its replacement is in sync.
 */
@Timeout(60)
class ReassignmentStepsTest {
    private static final Set<Integer> ALL_LIVE = Set.of(0, 1, 2, 3);

    private static PartitionState state(int leader, int leaderEpoch, List<Integer> isr, int partitionEpoch) {
        return new PartitionState(leader, leaderEpoch, isr, partitionEpoch);
    }

    @Test
    void replicasDuringTheMoveAreTheTargetThenTheLeavingOnes() {
        assertEquals(List.of(1, 2, 0), ReassignmentSteps.replicasDuringMove(new Reassignment(List.of(1, 2), List.of(0, 1))));
        assertEquals(List.of(0, 1, 2), ReassignmentSteps.replicasDuringMove(new Reassignment(List.of(0, 1), List.of(0, 1, 2))));
        assertEquals(List.of(3, 4, 0, 1), ReassignmentSteps.replicasDuringMove(new Reassignment(List.of(3, 4), List.of(0, 1))));
    }

    @Test
    void firstStepAddsTheTargetReplicasWithoutTouchingLeadership() {
        Reassignment r = new Reassignment(List.of(1, 2), List.of(0, 1));
        Step step = ReassignmentSteps.next(List.of(0, 1), state(0, 3, List.of(0, 1), 5), r, ALL_LIVE).orElseThrow();
        assertEquals(List.of(1, 2, 0), step.replicas(), "target first, then the leaving replicas");
        assertEquals(Optional.empty(), step.state());
        assertFalse(step.completed());
    }

    @Test
    void waitsWhileATargetReplicaIsNotInSync() {
        Reassignment r = new Reassignment(List.of(1, 2), List.of(0, 1));
        assertEquals(Optional.empty(),
                ReassignmentSteps.next(List.of(1, 2, 0), state(0, 3, List.of(0, 1), 6), r, ALL_LIVE));
    }

    @Test
    void leavingLeaderHandsOverToTheFirstInSyncTargetInANewEpoch() {
        Reassignment r = new Reassignment(List.of(1, 2), List.of(0, 1));
        Step step = ReassignmentSteps.next(List.of(1, 2, 0), state(0, 3, List.of(0, 1, 2), 7), r, ALL_LIVE)
                .orElseThrow();
        assertTrue(step.completed());
        assertEquals(List.of(1, 2), step.replicas());
        assertEquals(Optional.of(state(1, 4, List.of(1, 2), 8)), step.state());
    }

    @Test
    void stayingLeaderKeepsItsEpochAndOnlyTheIsrShrinks() {
        Reassignment r = new Reassignment(List.of(0, 2), List.of(0, 1));
        Step step = ReassignmentSteps.next(List.of(0, 2, 1), state(0, 3, List.of(0, 1, 2), 7), r, ALL_LIVE)
                .orElseThrow();
        assertTrue(step.completed());
        assertEquals(List.of(0, 2), step.replicas());
        assertEquals(Optional.of(state(0, 3, List.of(0, 2), 8)), step.state());
    }

    @Test
    void newLeaderMustBeAlive() {
        // broker 1 is still listed in the ISR but has just died: the next target member leads
        Reassignment r = new Reassignment(List.of(1, 2), List.of(0, 1));
        Step step = ReassignmentSteps.next(List.of(1, 2, 0), state(0, 3, List.of(0, 1, 2), 7), r, Set.of(0, 2))
                .orElseThrow();
        assertEquals(Optional.of(state(2, 4, List.of(1, 2), 8)), step.state());
    }

    @Test
    void movingOffADeadBrokerCompletesOnceTheNewReplicaIsInSync() {
        // broker 2 is dead and already out of the ISR; its replica moves to broker 1
        Reassignment r = new Reassignment(List.of(0, 1), List.of(0, 2));
        Set<Integer> live = Set.of(0, 1);
        Step add = ReassignmentSteps.next(List.of(0, 2), state(0, 3, List.of(0), 6), r, live).orElseThrow();
        assertEquals(List.of(0, 1, 2), add.replicas());
        assertEquals(Optional.empty(), ReassignmentSteps.next(add.replicas(), state(0, 3, List.of(0), 6), r, live));
        Step done = ReassignmentSteps.next(add.replicas(), state(0, 3, List.of(0, 1), 7), r, live).orElseThrow();
        assertTrue(done.completed());
        assertEquals(List.of(0, 1), done.replicas());
        assertEquals(Optional.of(state(0, 3, List.of(0, 1), 8)), done.state());
    }

    @Test
    void shrinkingTheReplicaSetNeedsNoCatchUp() {
        Reassignment r = new Reassignment(List.of(0, 1), List.of(0, 1, 2));
        Step step = ReassignmentSteps.next(List.of(0, 1, 2), state(0, 3, List.of(0, 1, 2), 7), r, ALL_LIVE)
                .orElseThrow();
        assertTrue(step.completed());
        assertEquals(List.of(0, 1), step.replicas());
        assertEquals(Optional.of(state(0, 3, List.of(0, 1), 8)), step.state());
    }

    @Test
    void cancelReturnsToTheOriginalReplicasAndDropsAddedOnesFromTheIsr() {
        Reassignment r = new Reassignment(List.of(1, 2), List.of(0, 1));
        Step step = ReassignmentSteps.cancel(state(0, 3, List.of(0, 1, 2), 7), r, ALL_LIVE);
        assertTrue(step.completed());
        assertEquals(List.of(0, 1), step.replicas());
        assertEquals(Optional.of(state(0, 3, List.of(0, 1), 8)), step.state());
    }

    @Test
    void cancelBeforeTheNewReplicasCaughtUpKeepsTheLeader() {
        Reassignment r = new Reassignment(List.of(2, 3), List.of(0, 1));
        Step step = ReassignmentSteps.cancel(state(1, 3, List.of(0, 1), 7), r, ALL_LIVE);
        assertEquals(List.of(0, 1), step.replicas());
        assertEquals(Optional.of(state(1, 3, List.of(0, 1), 8)), step.state());
    }

    @Test
    void cancelMovesLeadershipBackWhenTheLeaderWasAnAddedReplica() {
        Reassignment r = new Reassignment(List.of(1, 2), List.of(0, 1));
        // broker 2 leads (an operator's election during the move); it is not one of the original replicas
        Step step = ReassignmentSteps.cancel(state(2, 4, List.of(2, 0), 9), r, ALL_LIVE);
        assertEquals(List.of(0, 1), step.replicas());
        assertEquals(Optional.of(state(0, 5, List.of(0), 10)), step.state());
    }
}
