package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.message.StopMirrorTopicsResponseData;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.runtime.MirrorTopicStarter.TopicResult;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.PointInTimeOutcome;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The answer to a failover to a point in time (issue 30 point 2): each partition's outcome, and a partition STOPPED
 * without one (its leader ignored the time: a rolling upgrade) as the topic's error, not a success.
 */
@Timeout(60)
class PointInTimeAnswersTest {
    private static final long AT = 1_796_638_440_000L;

    @Test
    void aPartitionStoppedWithoutTheTimeIsAnError() {
        MirrorPartitionRecord cut = MirrorPartitionRecord.initial(0).transitionTo(MirrorPartitionState.STOPPED, 1)
                .withLastMirrored(0, 6).withPointInTime(PointInTimeOutcome.started(AT, PointInTimeOutcome.Reach
                        .REACHED).cut(6, 10, -1, AT - 1));
        MirrorPartitionRecord plain = MirrorPartitionRecord.initial(0).transitionTo(MirrorPartitionState.STOPPED, 1)
                .withLastMirrored(0, 10);
        TestMirrorImage image = TestMirrorImage.builder().topic("orders", Uuid.randomUuid(), 2, List.of(0),
                List.of(0)).mirroredBy("orders", "m").record(new TopicPartition("orders", 0), cut);

        StopMirrorTopicsResponseData allCut = answer();
        PointInTimeAnswers.fill(allCut, image.image());
        assertEquals(Errors.NONE.code(), allCut.errorCode(), "partition 1 has no record yet: still failing over");
        assertEquals(1, allCut.topics().get(0).partitions().size());

        StopMirrorTopicsResponseData oneIgnored = answer();
        PointInTimeAnswers.fill(oneIgnored, image.record(new TopicPartition("orders", 1), plain).image());
        StopMirrorTopicsResponseData.MirrorTopicResult topic = oneIgnored.topics().get(0);
        assertEquals(Errors.UNSUPPORTED_VERSION.code(), topic.errorCode());
        assertTrue(topic.errorMessage().startsWith("Partitions [1] of orders are STOPPED without a failover to the "
                + "point in time"), topic.errorMessage());
        assertEquals(topic.errorCode(), oneIgnored.errorCode(), "the request's error is the first topic's");
        assertEquals(6, topic.partitions().get(0).keptOffset(), "partition 0's outcome is still there");
    }

    private static StopMirrorTopicsResponseData answer() {
        return (StopMirrorTopicsResponseData) MirrorTopicResponses.answer(MirrorApi.STOP_MIRROR_TOPICS,
                Map.of("orders", TopicResult.OK));
    }
}
