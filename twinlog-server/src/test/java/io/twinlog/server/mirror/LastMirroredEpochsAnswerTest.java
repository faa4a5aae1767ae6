package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.message.LastMirroredEpochsRequestData;
import io.twinlog.clients.mirror.message.LastMirroredEpochsRequestData.LastMirroredEpochsTopic;
import io.twinlog.clients.mirror.message.LastMirroredEpochsResponseData.LastMirroredEpochsPartitionResult;
import io.twinlog.clients.mirror.message.LastMirroredEpochsResponseData.LastMirroredEpochsTopicResult;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link LastMirroredEpochsAnswer}: the failback lookup answers what a failed-over partition last mirrored, only
 * from the requester's mirrors, and a doubt (not yet failed over) as an error, never as -1/-1.
 */
@Timeout(60)
class LastMirroredEpochsAnswerTest {
    private static final Uuid ID = new Uuid(9, 9);
    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final Map<String, String> SOURCES = Map.of("m", "requester", "chained", "elsewhere");
    private static final Predicate<String> EVERY_MIRROR = mirror -> true;

    private static MirrorPartitionRecord stoppedAt(int epoch, long offset) {
        return MirrorPartitionRecord.initial(0).transitionTo(MirrorPartitionState.STOPPED, 1)
                .withLastMirrored(epoch, offset);
    }

    private static TestMirrorImage topicOf(String mirror, MirrorPartitionRecord record) {
        return TestMirrorImage.builder().topic("t", ID, 1, List.of(0), List.of(0)).mirroredBy("t", mirror)
                .record(T0, record);
    }

    private static LastMirroredEpochsPartitionResult ask(String requester, TestMirrorImage image,
                                                         Predicate<String> mayDescribe) {
        return ask(requester, "t", ID, image, mayDescribe);
    }

    private static LastMirroredEpochsPartitionResult ask(String requester, String name, Uuid id,
                                                         TestMirrorImage image, Predicate<String> mayDescribe) {
        LastMirroredEpochsRequestData request = new LastMirroredEpochsRequestData().setRequesterClusterId(requester)
                .setTopics(List.of(new LastMirroredEpochsTopic().setTopicName(name).setTopicId(id)
                        .setPartitions(List.of(0))));
        LastMirroredEpochsTopicResult topic = LastMirroredEpochsAnswer.of(request, SOURCES, image.view(), mayDescribe)
                .topics().get(0);
        assertEquals(name, topic.topicName());
        assertEquals(id, topic.topicId());
        return topic.partitions().get(0);
    }

    private static LastMirroredEpochsPartitionResult result(short error, int epoch, long offset) {
        return new LastMirroredEpochsPartitionResult().setPartitionIndex(0).setErrorCode(error)
                .setLastMirroredEpoch(epoch).setLastMirroredOffset(offset);
    }

    @Test
    void aPartitionFailedOverFromTheRequesterAnswersItsLastMirroredPoint() {
        assertEquals(result(Errors.NONE.code(), 3, 77L), ask("requester", topicOf("m", stoppedAt(3, 77L)),
                EVERY_MIRROR));
    }

    @Test
    void aRequesterThatDoesNotSayWhoItIsIsAnsweredFromAnyMirror() {
        assertEquals(result(Errors.NONE.code(), 3, 77L), ask(null, topicOf("chained", stoppedAt(3, 77L)),
                EVERY_MIRROR));
    }

    @Test
    void anotherClustersMirrorAnswersNothingMirrored() {
        assertEquals(result(Errors.NONE.code(), -1, -1L), ask("requester", topicOf("chained", stoppedAt(3, 77L)),
                EVERY_MIRROR));
    }

    @Test
    void aTopicNoMirrorFeedsOrAPartitionWithoutARecordAnswersNothingMirrored() {
        assertEquals(result(Errors.NONE.code(), -1, -1L), ask("requester",
                TestMirrorImage.builder().topic("t", ID, 1, List.of(0), List.of(0)), EVERY_MIRROR));
        assertEquals(result(Errors.NONE.code(), -1, -1L), ask("requester",
                TestMirrorImage.builder().topic("t", ID, 1, List.of(0), List.of(0)).mirroredBy("t", "m"),
                EVERY_MIRROR));
    }

    @Test
    void aTopicUnknownHereOrOfAnotherIdIsADoubtNotNothingMirrored() {
        // the requester asks by a name this cluster does not have (its mirror topic node lost the source name in an
        // upgrade), or by one another topic has here: "no record" would cut its failback to 0
        assertEquals(result(Errors.UNKNOWN_TOPIC_ID.code(), -1, -1L), ask("requester", "orders", ID,
                topicOf("m", stoppedAt(3, 77L)), EVERY_MIRROR));
        assertEquals(result(Errors.UNKNOWN_TOPIC_ID.code(), -1, -1L), ask("requester", "t", new Uuid(1, 2),
                topicOf("m", stoppedAt(3, 77L)), EVERY_MIRROR));
        assertEquals(result(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), -1, -1L), ask("requester", "orders",
                Uuid.ZERO_UUID, topicOf("m", stoppedAt(3, 77L)), EVERY_MIRROR), "a request without an ID too");
        assertEquals(result(Errors.NONE.code(), 3, 77L), ask("requester", "t", Uuid.ZERO_UUID,
                topicOf("m", stoppedAt(3, 77L)), EVERY_MIRROR), "without an ID, the name alone is checked");
    }

    @Test
    void withoutDescribeOnTheRecordingMirrorThePartitionIsNotAuthorized() {
        assertEquals(result(MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code, -1, -1L), ask("requester",
                topicOf("m", stoppedAt(3, 77L)), mirror -> false));
        assertEquals(result(Errors.NONE.code(), -1, -1L), ask("requester", topicOf("chained", stoppedAt(3, 77L)),
                mirror -> false), "an unrelated mirror's topic is answered alike for everyone");
    }

    @Test
    void aPartitionNotYetFailedOverIsADoubtNotNothingMirrored() {
        MirrorPartitionRecord mirroring = MirrorPartitionRecord.initial(0)
                .transitionTo(MirrorPartitionState.MIRRORING, 1).withLastMirrored(3, 77L);
        assertEquals(result(MirrorErrors.INVALID_MIRROR_STATE.code, -1, -1L), ask("requester",
                topicOf("m", mirroring), EVERY_MIRROR));
        MirrorPartitionRecord stopping = mirroring.transitionTo(MirrorPartitionState.STOPPING, 1);
        assertEquals(result(MirrorErrors.MIRROR_TOPIC_BEING_STOPPED.code, -1, -1L), ask("requester",
                topicOf("m", stopping), EVERY_MIRROR));
    }

    @Test
    void aFailedRecordAnswersAsTheStateItFailedFrom() {
        MirrorPartitionRecord stopped = stoppedAt(3, 77L);
        assertEquals(Optional.empty(), LastMirroredEpochsAnswer.notFailedOver(stopped.failed("x", true, 2)));
        MirrorPartitionRecord stopping = MirrorPartitionRecord.initial(0)
                .transitionTo(MirrorPartitionState.STOPPING, 1);
        assertEquals(Optional.of(MirrorErrors.MIRROR_TOPIC_BEING_STOPPED),
                LastMirroredEpochsAnswer.notFailedOver(stopping.failed("x", true, 2)));
        assertEquals(Optional.of(MirrorErrors.INVALID_MIRROR_STATE),
                LastMirroredEpochsAnswer.notFailedOver(MirrorPartitionRecord.initial(0)));
    }
}
