package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.message.PauseMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.ResumeMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.StartMirrorTopicsResponseData;
import io.twinlog.clients.mirror.message.StopMirrorTopicsResponseData;
import io.twinlog.common.Failures;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.mirror.runtime.MirrorTopicStarter.TopicResult;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * The answers of the four topic APIs (StartMirrorTopics, StopMirrorTopics, PauseMirrorTopics, ResumeMirrorTopics)
 * and the per-topic results that need more than a code: a desired state written for some topics only, a failover
 * still in progress. Pure: from the results the handler gathered and a {@link MirrorMetadataView}.
 */
final class MirrorTopicResponses {
    private MirrorTopicResponses() {
    }

    /**
     * The answer of a topic API: a result per topic, in order, and the first topic's error (if any) at the top. Each
     * of the four APIs has its own generated response and result classes, all of one shape.
     */
    static ApiMessage answer(MirrorApi api, Map<String, TopicResult> results) {
        TopicResult first = results.values().stream().filter(r -> r.code() != Errors.NONE.code()).findFirst()
                .orElse(TopicResult.OK);
        return switch (api) {
            case START_MIRROR_TOPICS -> new StartMirrorTopicsResponseData().setErrorCode(first.code())
                    .setErrorMessage(first.message()).setTopics(each(results, (t, r) ->
                            new StartMirrorTopicsResponseData.MirrorTopicResult().setName(t).setErrorCode(r.code())
                                    .setErrorMessage(r.message())));
            case STOP_MIRROR_TOPICS -> new StopMirrorTopicsResponseData().setErrorCode(first.code())
                    .setErrorMessage(first.message()).setTopics(each(results, (t, r) ->
                            new StopMirrorTopicsResponseData.MirrorTopicResult().setName(t).setErrorCode(r.code())
                                    .setErrorMessage(r.message())));
            case PAUSE_MIRROR_TOPICS -> new PauseMirrorTopicsResponseData().setErrorCode(first.code())
                    .setErrorMessage(first.message()).setTopics(each(results, (t, r) ->
                            new PauseMirrorTopicsResponseData.MirrorTopicResult().setName(t).setErrorCode(r.code())
                                    .setErrorMessage(r.message())));
            case RESUME_MIRROR_TOPICS -> new ResumeMirrorTopicsResponseData().setErrorCode(first.code())
                    .setErrorMessage(first.message()).setTopics(each(results, (t, r) ->
                            new ResumeMirrorTopicsResponseData.MirrorTopicResult().setName(t).setErrorCode(r.code())
                                    .setErrorMessage(r.message())));
            default -> throw new IllegalArgumentException(api.name + " is not a topic API");
        };
    }

    private static <R> List<R> each(Map<String, TopicResult> results, BiFunction<String, TopicResult, R> result) {
        List<R> out = new ArrayList<>();
        results.forEach((t, r) -> out.add(result.apply(t, r)));
        return out;
    }

    /** The topics whose result is OK so far, in order. */
    static List<String> succeeded(Map<String, TopicResult> results) {
        List<String> out = new ArrayList<>();
        results.forEach((t, r) -> {
            if (r.code() == Errors.NONE.code()) {
                out.add(t);
            }
        });
        return out;
    }

    /**
     * The result of a topic whose desired state was not written while others' were (the writes go in a few
     * ZooKeeper transactions, some of which committed): the answer must say which.
     */
    static TopicResult notWritten(String topic, DesiredMirrorState desired, Exception failure) {
        return new TopicResult(Errors.forException(failure).code(), "Could not record topic '" + topic + "' as "
                + desired + " (" + Failures.rootMessage(failure) + "); the other topics were set; run the command "
                + "again for this one");
    }

    /**
     * The results of a failover whose wait ended: each of {@code stopping} that {@code last} (the image that ended
     * the wait, or the latest after the wait timed out) does not show STOPPED is still in progress, with the reason
     * of a partition whose failover went FAILED if one did.
     */
    static Map<String, TopicResult> failoverResults(List<String> stopping, Map<String, TopicResult> results,
                                                    MirrorMetadataView last) {
        Map<String, TopicResult> out = new LinkedHashMap<>(results);
        for (String t : stopping) {
            if (last.allStopped(t)) {
                continue;
            }
            String why = last.failedFailover(t).map(reason -> ": " + reason).orElse(" (a partition leader may be down)");
            out.put(t, new TopicResult(Errors.REQUEST_TIMED_OUT.code(), "Failover of '" + t
                    + "' is still in progress" + why + "; it is retried, describe the mirror to follow it"));
        }
        return out;
    }
}
