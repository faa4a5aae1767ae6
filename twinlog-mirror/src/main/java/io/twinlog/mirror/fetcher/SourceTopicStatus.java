package io.twinlog.mirror.fetcher;

import io.twinlog.mirror.partition.SourceProblem;
import org.apache.kafka.common.Uuid;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Whether each mirrored topic can be mirrored from the source, as the mirror fetcher's metadata answers tell it: the
 * source topic still exists under the topic ID the destination topic was created with (the source's own, given at
 * {@code --start}), and the source answers at all. The state machine asks at every pass ({@link SourceProblem}),
 * so the outcome is decided by the source's condition, not by which fetch failed first.
 *
 * <ul>
 *   <li><b>Deleted</b>: the source answers UNKNOWN_TOPIC_OR_PARTITION for the topic in answers spanning at least
 *       half of {@code mirror.state.timeout.ms} (a broker that has just started may not know every topic yet): then
 *       {@link SourceProblem.Kind#GONE}. While unconfirmed, the fetcher looks again every half second.</li>
 *   <li><b>Created again</b>: the source's topic ID differs from the destination topic's: GONE at once, naming both
 *       IDs (a topic ID is never reused; nothing of the new topic is ever fetched into the old log). A source that
 *       does not send topic IDs (Metadata before v10) is not compared.</li>
 *   <li><b>Unreachable</b>: the last metadata round (every known source broker, then the bootstrap list) failed:
 *       {@link SourceProblem.Kind#UNANSWERED} at once, {@link SourceProblem.Kind#UNREACHABLE} once no answer came
 *       for {@code mirror.state.timeout.ms}. Its reason names the first error of the outage, so it stays the same
 *       while the outage lasts.</li>
 *   <li><b>Another cluster</b>: the last metadata round was answered only by another cluster than the recorded
 *       source cluster: {@link SourceProblem.Kind#WRONG_CLUSTER} for every topic, until the source cluster answers
 *       (an answer clears it) or a round goes unanswered (then the outage rules apply).</li>
 * </ul>
 *
 * <p>Threading: {@link #watch} and {@link #problem} are called by the mirror manager's thread; the answers are
 * applied by the fetcher's thread ({@link #onMetadata}, {@link #onNoAnswer}); what they share is volatile or
 * concurrent.
 */
final class SourceTopicStatus {
    /** A topic no partition of which is fetched and that the manager stopped asking about is no longer looked up. */
    static final long WATCH_EXPIRY_MS = 30_000;
    /** How soon the fetcher looks again while a topic's deletion is not confirmed yet. */
    static final long CONFIRM_RETRY_MS = 500;
    /** How often it looks while a mirrored topic is gone from the source (to name a topic created again). */
    static final long GONE_RETRY_MS = 5_000;

    private record Watch(Uuid localTopicId, long askedAtMs) {
    }

    private final String bootstrap;
    private final long stateTimeoutMs;
    private final ConcurrentHashMap<String, Watch> watched = new ConcurrentHashMap<>();
    /** When the source first answered that each topic is unknown, in this run of answers; fetcher thread only. */
    private final Map<String, Long> unknownSinceMs = new HashMap<>();
    private volatile Map<String, SourceProblem> topicProblems = Map.of();
    private volatile long lastAnswerMs;
    /** The first error of the current outage; null while the source answers. */
    private volatile String outageError;
    /** Why the last round was answered only by another cluster; null otherwise. */
    private volatile String wrongCluster;
    /** The last unanswered round was a refusal of our credentials: waiting out the bound would only hide it. */
    private volatile boolean refused;

    /** @param nowMs counted as the last answer: a source never reached is unreachable a timeout after the start */
    SourceTopicStatus(String bootstrap, long stateTimeoutMs, long nowMs) {
        this.bootstrap = bootstrap;
        this.stateTimeoutMs = stateTimeoutMs;
        this.lastAnswerMs = nowMs;
    }

    /**
     * The destination topic {@code topic}, created with the source's topic ID {@code localTopicId}, is to be
     * mirrored: looked up at every metadata refresh. True if it was not watched yet.
     */
    boolean watch(String topic, Uuid localTopicId, long nowMs) {
        Watch previous = watched.put(topic, new Watch(localTopicId, nowMs));
        return previous == null || !previous.localTopicId().equals(localTopicId);
    }

    /** Why {@code topic} cannot be mirrored from the source now, if it cannot. */
    Optional<SourceProblem> problem(String topic, long nowMs) {
        String foreign = wrongCluster;
        if (foreign != null) {
            return Optional.of(SourceProblem.wrongCluster(foreign));
        }
        String error = outageError;
        if (error != null) {
            long silentMs = nowMs - lastAnswerMs;
            String reason = "The source cluster is unreachable: no source broker (bootstrap " + bootstrap + ") has "
                    + "answered a metadata request for " + (silentMs >= stateTimeoutMs ? "longer than " : "")
                    + "mirror.state.timeout.ms (" + stateTimeoutMs + " ms); first error: " + error;
            return Optional.of(silentMs >= stateTimeoutMs || refused ? SourceProblem.unreachable(reason)
                    : SourceProblem.unanswered(reason));
        }
        return Optional.ofNullable(topicProblems.get(topic));
    }

    /**
     * The topics to look up: the watched ones, less those nobody asked about lately unless {@code fetched} (the
     * topics of partitions being fetched) holds them.
     */
    Set<String> topics(Set<String> fetched, long nowMs) {
        watched.entrySet().removeIf(e -> !fetched.contains(e.getKey())
                && nowMs - e.getValue().askedAtMs() > WATCH_EXPIRY_MS);
        Set<String> out = new HashSet<>(fetched);
        out.addAll(watched.keySet());
        return out;
    }

    /**
     * Whether the source's {@code sourceTopicId} is the topic the destination topic mirrors: false for a topic not
     * watched (its destination topic ID unknown) and for another ID; true when the source sends none.
     */
    boolean isMirroredTopic(String topic, Uuid sourceTopicId) {
        Watch w = watched.get(topic);
        return w != null && (sourceTopicId == null || Uuid.ZERO_UUID.equals(sourceTopicId)
                || sourceTopicId.equals(w.localTopicId()));
    }

    /**
     * A metadata answer for the watched topics.
     *
     * @param maxAgeMs how long the fetcher keeps an answer when nothing is wrong
     * @return how soon to look again: {@value #CONFIRM_RETRY_MS} ms for a deletion not confirmed yet,
     *         {@value #GONE_RETRY_MS} ms while a topic is gone, else {@code maxAgeMs}
     */
    long onMetadata(SourceMetadata m, long nowMs, long maxAgeMs) {
        lastAnswerMs = nowMs;
        outageError = null;
        refused = false;
        wrongCluster = null;
        Map<String, SourceProblem> problems = new HashMap<>();
        boolean unconfirmed = false;
        unknownSinceMs.keySet().retainAll(m.unknownTopics());
        for (Map.Entry<String, Watch> e : watched.entrySet()) {
            String topic = e.getKey();
            Uuid localId = e.getValue().localTopicId();
            Uuid sourceId = m.topicIds().get(topic);
            if (m.unknownTopics().contains(topic)) {
                long since = unknownSinceMs.computeIfAbsent(topic, t -> nowMs);
                if (nowMs - since >= stateTimeoutMs / 2) {
                    problems.put(topic, SourceProblem.gone("The source topic " + topic + " was deleted (topic ID "
                            + localId + "); this topic keeps what was mirrored. Fail it over (--stop) to keep it "
                            + "and write to it, or delete it here to mirror a new source topic of that name"));
                } else {
                    unconfirmed = true;
                }
            } else if (sourceId != null && !isMirroredTopic(topic, sourceId)) {
                problems.put(topic, SourceProblem.gone("The source topic " + topic + " was deleted and created "
                        + "again: it now has topic ID " + sourceId + ", this topic mirrors topic ID " + localId
                        + "; nothing of the new topic is appended here. Fail this topic over (--stop) to keep it, "
                        + "or delete it here and start mirroring again (--start) to mirror the new topic"));
            }
        }
        topicProblems = Map.copyOf(problems);
        return unconfirmed ? CONFIRM_RETRY_MS : problems.isEmpty() ? maxAgeMs : GONE_RETRY_MS;
    }

    /**
     * A metadata round in which no source broker answered; true for the first of an outage. {@code refused}: a
     * broker refused the mirror's credentials (authentication failed), which fails the partitions at once.
     */
    boolean onNoAnswer(String error, boolean refused) {
        this.refused = refused;
        wrongCluster = null;
        if (outageError == null) {
            outageError = error;
            return true;
        }
        return false;
    }

    /**
     * A metadata round answered only by another cluster ({@code reason} says which, stable while it lasts). Not an
     * answer of the source: the time since its last answer runs on.
     */
    void onWrongCluster(String reason) {
        wrongCluster = reason;
    }

    /** The reason of the last round if another cluster answered it. */
    Optional<String> wrongClusterReason() {
        return Optional.ofNullable(wrongCluster);
    }

    /** Whether the last metadata round went unanswered. */
    boolean isOutage() {
        return outageError != null;
    }
}
