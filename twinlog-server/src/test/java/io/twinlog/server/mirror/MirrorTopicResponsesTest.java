package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.message.PauseMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.ResumeMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.StartMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.StopMirrorTopicsResponseData;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.runtime.MirrorTopicStarter.TopicResult;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** {@link MirrorTopicResponses}: the four topic APIs' answers and the results a failover ends with. */
@Timeout(60)
class MirrorTopicResponsesTest {
    private static final TopicResult NOT_IN_MIRROR = new TopicResult(MirrorErrors.TOPIC_NOT_IN_CLUSTER_MIRROR.code,
            "b is not in it");
    private static final TopicResult DENIED = new TopicResult(Errors.TOPIC_AUTHORIZATION_FAILED.code(), "c denied");

    private static Map<String, TopicResult> results() {
        Map<String, TopicResult> results = new LinkedHashMap<>();
        results.put("a", TopicResult.OK);
        results.put("b", NOT_IN_MIRROR);
        results.put("c", DENIED);
        return results;
    }

    @Test
    void eachTopicApiAnswersEveryTopicInOrderWithTheFirstErrorOnTop() {
        assertEquals(new StartMirrorTopicsResponseData().setErrorCode(NOT_IN_MIRROR.code())
                .setErrorMessage("b is not in it").setTopics(List.of(
                        new StartMirrorTopicsResponseData.MirrorTopicResult().setName("a").setErrorCode((short) 0)
                                .setErrorMessage(null),
                        new StartMirrorTopicsResponseData.MirrorTopicResult().setName("b")
                                .setErrorCode(NOT_IN_MIRROR.code()).setErrorMessage("b is not in it"),
                        new StartMirrorTopicsResponseData.MirrorTopicResult().setName("c")
                                .setErrorCode(DENIED.code()).setErrorMessage("c denied"))),
                MirrorTopicResponses.answer(MirrorApi.START_MIRROR_TOPICS, results()));
        StopMirrorTopicsResponseData stop = (StopMirrorTopicsResponseData) MirrorTopicResponses.answer(
                MirrorApi.STOP_MIRROR_TOPICS, results());
        assertEquals(List.of("a", "b", "c"), stop.topics().stream().map(t -> t.name()).toList());
        assertEquals(NOT_IN_MIRROR.code(), stop.errorCode());
        PauseMirrorTopicsResponseData pause = (PauseMirrorTopicsResponseData) MirrorTopicResponses.answer(
                MirrorApi.PAUSE_MIRROR_TOPICS, results());
        assertEquals(DENIED.code(), pause.topics().get(2).errorCode());
        ResumeMirrorTopicsResponseData resume = (ResumeMirrorTopicsResponseData) MirrorTopicResponses.answer(
                MirrorApi.RESUME_MIRROR_TOPICS, results());
        assertEquals("b is not in it", resume.errorMessage());
    }

    @Test
    void anAnswerWithoutErrorsHasNoneOnTop() {
        StopMirrorTopicsResponseData stop = (StopMirrorTopicsResponseData) MirrorTopicResponses.answer(
                MirrorApi.STOP_MIRROR_TOPICS, Map.of("a", TopicResult.OK));
        assertEquals(0, stop.errorCode());
        assertEquals(null, stop.errorMessage());
    }

    @Test
    void anApiOtherThanTheFourHasNoTopicAnswer() {
        assertThrows(IllegalArgumentException.class, () -> MirrorTopicResponses.answer(
                MirrorApi.LIST_CLUSTER_MIRRORS, results()));
    }

    @Test
    void theTopicsToWaitForAreThoseThatSucceeded() {
        Map<String, TopicResult> results = results();
        results.put("d", TopicResult.OK);
        assertEquals(List.of("a", "d"), MirrorTopicResponses.succeeded(results));
    }

    @Test
    void aTopicNotWrittenSaysWhyAndThatTheOthersWereSet() {
        TopicResult result = MirrorTopicResponses.notWritten("t", DesiredMirrorState.PAUSED,
                new NotControllerException("lost the session"));
        assertEquals(Errors.NOT_CONTROLLER.code(), result.code());
        assertEquals("Could not record topic 't' as PAUSED (lost the session); the other topics were set; run the "
                + "command again for this one", result.message());
    }

    @Test
    void aFailoverNotFinishedIsStillInProgressWithTheFailedPartitionsReason() {
        Uuid id = new Uuid(1, 2);
        MirrorPartitionRecord stopped = MirrorPartitionRecord.initial(0).transitionTo(MirrorPartitionState.STOPPED, 1);
        MirrorPartitionRecord failed = MirrorPartitionRecord.initial(0).transitionTo(MirrorPartitionState.STOPPING, 1)
                .failed("no replica in sync", true, 2);
        TestMirrorImage image = TestMirrorImage.builder()
                .topic("done", id, 1, List.of(0), List.of(0)).record(new TopicPartition("done", 0), stopped)
                .topic("failed", new Uuid(1, 3), 1, List.of(0), List.of(0))
                .record(new TopicPartition("failed", 0), failed)
                .topic("slow", new Uuid(1, 4), 1, List.of(0), List.of(0));
        Map<String, TopicResult> results = new LinkedHashMap<>();
        List.of("done", "failed", "slow").forEach(t -> results.put(t, TopicResult.OK));
        results.put("denied", DENIED);

        Map<String, TopicResult> after = MirrorTopicResponses.failoverResults(List.of("done", "failed", "slow"),
                results, image.view());
        assertEquals(List.of("done", "failed", "slow", "denied"), List.copyOf(after.keySet()));
        assertEquals(TopicResult.OK, after.get("done"));
        assertEquals(new TopicResult(Errors.REQUEST_TIMED_OUT.code(), "Failover of 'failed' is still in progress: "
                + "partition 0: no replica in sync; it is retried, describe the mirror to follow it"),
                after.get("failed"));
        assertEquals(new TopicResult(Errors.REQUEST_TIMED_OUT.code(), "Failover of 'slow' is still in progress "
                + "(a partition leader may be down); it is retried, describe the mirror to follow it"),
                after.get("slow"));
        assertEquals(DENIED, after.get("denied"));
    }
}
