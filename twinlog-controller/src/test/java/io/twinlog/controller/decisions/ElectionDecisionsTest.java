package io.twinlog.controller.decisions;

import io.twinlog.controller.election.PartitionChanges.ElectionResult;
import io.twinlog.controller.metadata.MetadataImage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.twinlog.controller.decisions.TestImages.state;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** An ElectLeaders request over several partitions: each answered on its own, only real changes written. */
@Timeout(5)
class ElectionDecisionsTest {
    private static final TopicPartition A0 = new TopicPartition("a", 0);
    private static final TopicPartition A1 = new TopicPartition("a", 1);
    private static final TopicPartition GONE = new TopicPartition("gone", 0);

    private static final MetadataImage IMAGE = TestImages.builder().broker(0, 100).broker(1, 101)
            .partition(A0, List.of(0, 1), state(1, 4, List.of(0, 1), 8), 8)
            .partition(A1, List.of(1, 0), state(1, 2, List.of(1, 0), 3), 3).build();

    @Test
    void aPreferredElectionMovesOnlyThePartitionsNotLedByTheirPreferredReplica() {
        ControllerResult<Map<TopicPartition, ElectionResult>> r = ElectionDecisions.decide(IMAGE, false,
                Set.of(A0, A1, GONE));
        assertEquals(Errors.NONE, r.response().get(A0).error());
        assertEquals(Errors.ELECTION_NOT_NEEDED, r.response().get(A1).error());
        assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, r.response().get(GONE).error());
        assertEquals(1, r.changes().size());
        StateChange c = r.changes().get(0);
        assertEquals(state(0, 5, List.of(0, 1), 9), c.next());
        assertEquals(8, c.expectedVersion());
        assertEquals("PREFERRED election requested", c.reason());
    }

    @Test
    void anUncleanElectionPicksALiveOutOfSyncReplicaOnlyWhenNoLeaderIsAlive() {
        MetadataImage image = TestImages.builder().broker(1, 101)
                .partition(A0, List.of(0, 1), state(-1, 4, List.of(0), 8), 8).build();
        ControllerResult<Map<TopicPartition, ElectionResult>> r = ElectionDecisions.decide(image, true, Set.of(A0));
        assertEquals(Errors.NONE, r.response().get(A0).error());
        assertEquals(state(1, 5, List.of(1), 9), r.changes().get(0).next());
        assertTrue(r.changes().get(0).unclean());
    }
}
