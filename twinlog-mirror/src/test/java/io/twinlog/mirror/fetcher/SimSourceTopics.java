package io.twinlog.mirror.fetcher;

import io.twinlog.mirror.partition.SourceProblem;
import org.apache.kafka.common.Uuid;

import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The mirror fetcher's {@link SourceTopicStatus} (source topic deleted, created again, unreachable) for the seeded
 * mirror manager simulation, fed with simulated metadata rounds instead of the fetcher's Metadata requests.
 */
public final class SimSourceTopics {
    private final SourceTopicStatus status;

    public SimSourceTopics(String bootstrap, long stateTimeoutMs, long nowMs) {
        this.status = new SourceTopicStatus(bootstrap, stateTimeoutMs, nowMs);
    }

    /** As {@code MirrorFetcher#sourceProblem}: the topic is watched, then its problem read. */
    public Optional<SourceProblem> problem(String topic, Uuid localTopicId, long nowMs) {
        status.watch(topic, localTopicId, nowMs);
        return status.problem(topic, nowMs);
    }

    /** Whether the fetcher may fetch {@code topic} of the source's topic ID {@code sourceTopicId} into its log. */
    public boolean isMirroredTopic(String topic, Uuid sourceTopicId) {
        return status.isMirroredTopic(topic, sourceTopicId);
    }

    /** A metadata round the source answered: its topic IDs and the topics it does not know. */
    public void answered(Map<String, Uuid> topicIds, Set<String> unknownTopics, long nowMs) {
        status.onMetadata(new SourceMetadata(Map.of(), topicIds, Map.of(), unknownTopics, "source", nowMs), nowMs,
                30_000);
    }

    /** A metadata round no source broker answered; {@code refused}: the credentials were refused. */
    public void unanswered(String error, boolean refused) {
        status.onNoAnswer(error, refused);
    }
}
