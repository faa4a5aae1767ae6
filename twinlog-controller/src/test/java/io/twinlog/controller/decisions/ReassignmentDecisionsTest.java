package io.twinlog.controller.decisions;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.TopicAssignment.Reassignment;
import io.twinlog.controller.store.StateWrite;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static io.twinlog.controller.decisions.TestImages.state;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Accepting, refusing and cancelling reassignment requests; moving accepted ones forward. */
@Timeout(5)
class ReassignmentDecisionsTest {
    private static final TopicPartition A0 = new TopicPartition("a", 0);
    private static final TopicPartition A1 = new TopicPartition("a", 1);
    private static final Set<Integer> LIVE = Set.of(0, 1, 2);

    private static final MetadataImage IMAGE = TestImages.builder().broker(0, 100).broker(1, 101).broker(2, 102)
            .partition(A0, List.of(0, 1), state(0, 3, List.of(0, 1), 9), 9)
            .partition(A1, List.of(1, 2), state(1, 2, List.of(1, 2), 4), 4).build();

    private static ReassignmentDecisions.RequestOutcome request(MetadataImage image,
                                                                Map<TopicPartition, Optional<List<Integer>>> r) {
        return ReassignmentDecisions.onRequest("a", image.topic("a"), r, LIVE);
    }

    @Test
    void aTargetIsValidWhenNonEmptyDistinctAndLive() {
        assertEquals(Optional.empty(), ReassignmentDecisions.validateTarget(List.of(2, 0), LIVE));
        assertEquals(Optional.of("The target replica list is empty"),
                ReassignmentDecisions.validateTarget(List.of(), LIVE));
        assertEquals(Optional.of("Duplicate brokers in the target replicas [1, 1]"),
                ReassignmentDecisions.validateTarget(List.of(1, 1), LIVE));
        assertEquals(Optional.of("Broker 7 of the target replicas [0, 7] is not a live broker"),
                ReassignmentDecisions.validateTarget(List.of(0, 7), LIVE));
        assertEquals(Optional.of("Broker null of the target replicas [0, null] is not a live broker"),
                ReassignmentDecisions.validateTarget(Arrays.asList(0, null), LIVE));
    }

    @Test
    void anAcceptedRequestWritesTheUnionOfReplicasAndTheReassignment() {
        ReassignmentDecisions.RequestOutcome o = request(IMAGE, Map.of(A0, Optional.of(List.of(1, 2))));
        assertEquals(List.of(A0), o.accepted());
        AssignmentChange w = o.write().orElseThrow();
        assertEquals(List.of(1, 2, 0), w.next().replicas().get(0));
        assertEquals(List.of(1, 2), w.next().replicas().get(1), "other partitions unchanged");
        assertEquals(new Reassignment(List.of(1, 2), List.of(0, 1)), w.next().reassigning().get(0));
        assertEquals(List.of(), w.states(), "leadership untouched until the new replicas are in sync");
        assertEquals(7, w.expectedVersion());
    }

    @Test
    void oneInvalidPartitionDoesNotStopTheOthers() {
        ReassignmentDecisions.RequestOutcome o = request(IMAGE, Map.of(A0, Optional.of(List.of(0, 9)),
                A1, Optional.of(List.of(0, 1))));
        assertEquals(Errors.INVALID_REPLICA_ASSIGNMENT, o.answers().get(A0).error());
        assertEquals(List.of(A1), o.accepted());
    }

    @Test
    void theCurrentReplicasAsTargetNeedNoWrite() {
        ReassignmentDecisions.RequestOutcome o = request(IMAGE, Map.of(A0, Optional.of(List.of(0, 1))));
        assertEquals(Errors.NONE, o.answers().get(A0).error());
        assertTrue(o.write().isEmpty());
    }

    @Test
    void unknownTopicsPartitionsAndCancellationsWithoutAReassignmentAreRefused() {
        assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, ReassignmentDecisions.onRequest("nope", Optional.empty(),
                Map.of(new TopicPartition("nope", 0), Optional.of(List.of(0))), LIVE).answers()
                .get(new TopicPartition("nope", 0)).error());
        TopicPartition a5 = new TopicPartition("a", 5);
        assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                request(IMAGE, Map.of(a5, Optional.of(List.of(0)))).answers().get(a5).error());
        assertEquals(Errors.NO_REASSIGNMENT_IN_PROGRESS,
                request(IMAGE, Map.of(A0, Optional.empty())).answers().get(A0).error());
    }

    @Test
    void aCancellationGoesBackToTheOriginalReplicas() {
        MetadataImage moving = TestImages.builder().broker(0, 100).broker(1, 101).broker(2, 102)
                .partition(A0, List.of(1, 2, 0), state(0, 3, List.of(0, 1), 9), 9)
                .reassigning(A0, List.of(1, 2), List.of(0, 1)).build();
        AssignmentChange w = request(moving, Map.of(A0, Optional.empty())).write().orElseThrow();
        assertEquals(List.of(0, 1), w.next().replicas().get(0));
        assertTrue(w.next().reassigning().isEmpty());
        assertEquals(List.of(new StateWrite(A0, state(0, 3, List.of(0, 1), 10), 9)), w.states());
    }

    @Test
    void aReassignmentWaitsWhileTheNewReplicasCatchUp() {
        MetadataImage moving = TestImages.builder().broker(0, 100).broker(1, 101).broker(2, 102)
                .partition(A0, List.of(1, 2, 0), state(0, 3, List.of(0, 1), 9), 9)
                .reassigning(A0, List.of(1, 2), List.of(0, 1)).build();
        assertEquals(Optional.empty(), ReassignmentDecisions.advance(moving.topic("a").orElseThrow(), LIVE));
    }

    @Test
    void aReassignmentOfAVanishedPartitionIsDropped() {
        MetadataImage moving = TestImages.builder().broker(0, 100)
                .partition(A0, List.of(0), null, -1).reassigning(A0, List.of(1), List.of(0)).build();
        AssignmentChange w = ReassignmentDecisions.advance(moving.topic("a").orElseThrow(), LIVE).orElseThrow();
        assertTrue(w.next().reassigning().isEmpty());
    }
}
