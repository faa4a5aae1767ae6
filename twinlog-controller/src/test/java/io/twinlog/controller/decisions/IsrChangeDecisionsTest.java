package io.twinlog.controller.decisions;

import io.twinlog.controller.metadata.MetadataImage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

import static io.twinlog.controller.decisions.TestImages.state;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** A batch of AlterPartition changes: fenced by the sender's broker epoch, then decided per partition. */
@Timeout(5)
class IsrChangeDecisionsTest {
    private static final TopicPartition A0 = new TopicPartition("a", 0);
    private static final TopicPartition A1 = new TopicPartition("a", 1);
    private static final TopicPartition GONE = new TopicPartition("gone", 0);

    private static final MetadataImage IMAGE = TestImages.builder().broker(0, 100).broker(1, 101).broker(2, 102)
            .partition(A0, List.of(0, 1, 2), state(0, 3, List.of(0, 1, 2), 9), 9)
            .partition(A1, List.of(0, 1), state(0, 5, List.of(0, 1), 6), 6).build();

    @Test
    void eachPartitionOfABatchIsDecidedOnItsOwn() {
        ControllerResult<Map<TopicPartition, IsrChangeResult>> r = IsrChangeDecisions.decide(IMAGE, 0, 100, List.of(
                new IsrChange(A0, 3, 9, List.of(0, 2)),
                new IsrChange(A1, 4, 6, List.of(0)),
                new IsrChange(GONE, 0, 0, List.of(0))));
        assertEquals(Errors.NONE, r.response().get(A0).error());
        assertEquals(Errors.FENCED_LEADER_EPOCH, r.response().get(A1).error());
        assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, r.response().get(GONE).error());
        assertEquals(1, r.changes().size(), "only the accepted change is written");
        assertEquals(state(0, 3, List.of(0, 2), 10), r.changes().get(0).next());
        assertEquals(9, r.changes().get(0).expectedVersion());
    }

    @Test
    void aBatchFromAnEarlierIncarnationOfTheSenderIsRefusedWhole() {
        ControllerResult<Map<TopicPartition, IsrChangeResult>> r = IsrChangeDecisions.decide(IMAGE, 0, 99, List.of(
                new IsrChange(A0, 3, 9, List.of(0, 2)), new IsrChange(A1, 5, 6, List.of(0))));
        assertEquals(Errors.STALE_BROKER_EPOCH, r.response().get(A0).error());
        assertEquals(Errors.STALE_BROKER_EPOCH, r.response().get(A1).error());
        assertEquals(List.of(), r.changes());
    }

    @Test
    void aBrokerInControlledShutdownCannotJoinAnIsr() {
        MetadataImage image = TestImages.builder().broker(0, 100).broker(1, 101).shuttingDown(1)
                .partition(A1, List.of(0, 1), state(0, 5, List.of(0), 6), 6).build();
        ControllerResult<Map<TopicPartition, IsrChangeResult>> r = IsrChangeDecisions.decide(image, 0, -1,
                List.of(new IsrChange(A1, 5, 6, List.of(0, 1))));
        assertEquals(Errors.INELIGIBLE_REPLICA, r.response().get(A1).error());
    }

    @Test
    void anUnchangedIsrIsAnsweredWithoutAWrite() {
        ControllerResult<Map<TopicPartition, IsrChangeResult>> r = IsrChangeDecisions.decide(IMAGE, 0, 100,
                List.of(new IsrChange(A1, 5, 6, List.of(1, 0))));
        assertEquals(Errors.NONE, r.response().get(A1).error());
        assertEquals(List.of(), r.changes());
    }

    @Test
    void anIsrThatKeepsALostReplicaIsRefusedUntilItsBrokerSawItselfOut() {
        MetadataImage image = TestImages.builder().broker(0, 100).broker(1, 101).broker(2, 102).lost(1, A0)
                .partition(A0, List.of(0, 1, 2), state(0, 3, List.of(0, 1, 2), 9), 9).build();
        ControllerResult<Map<TopicPartition, IsrChangeResult>> r = IsrChangeDecisions.decide(image, 0, 100,
                List.of(new IsrChange(A0, 3, 9, List.of(0, 1))));
        assertEquals(Errors.INELIGIBLE_REPLICA, r.response().get(A0).error());
        assertEquals(List.of(), r.changes());
        assertEquals(Errors.NONE, IsrChangeDecisions.decide(image, 0, 100,
                List.of(new IsrChange(A0, 3, 9, List.of(0, 2)))).response().get(A0).error());
    }
}
