package io.twinlog.controller;

import io.twinlog.controller.decisions.StateChange;
import io.twinlog.controller.metadata.PartitionState;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Which written changes are elections, for Kafka's election metrics; one rule per test. */
@Timeout(60)
class WrittenChangesTest {
    private static final TopicPartition TP = new TopicPartition("t", 0);

    private static StateChange leadership(int fromLeader, List<Integer> fromIsr, int toLeader, List<Integer> toIsr) {
        return StateChange.leadership(TP, new PartitionState(fromLeader, 3, fromIsr, 5),
                new PartitionState(toLeader, 4, toIsr, 6), 5, "test");
    }

    @Test
    void aNewLeaderFromTheIsrIsACleanElection() {
        assertEquals(new WrittenChanges.Elections(true, 0),
                WrittenChanges.elections(List.of(leadership(0, List.of(0, 1), 1, List.of(1)))));
    }

    @Test
    void aNewLeaderOutsideTheIsrIsAnUncleanElection() {
        assertEquals(new WrittenChanges.Elections(true, 2), WrittenChanges.elections(List.of(
                leadership(0, List.of(0), 1, List.of(1)), leadership(0, List.of(0), 2, List.of(2)),
                leadership(0, List.of(0, 1), 1, List.of(1)))));
    }

    @Test
    void anIsrChangeOrALostLeaderIsNoElection() {
        assertEquals(new WrittenChanges.Elections(false, 0), WrittenChanges.elections(List.of(
                leadership(0, List.of(0, 1), 0, List.of(0)),
                leadership(0, List.of(0), PartitionState.NO_LEADER, List.of(0)))));
    }

    @Test
    void aFirstLeadershipIsNoElection() {
        assertEquals(new WrittenChanges.Elections(false, 0), WrittenChanges.elections(List.of(
                StateChange.initial(TP, new PartitionState(0, 0, List.of(0), 0)))));
    }
}
