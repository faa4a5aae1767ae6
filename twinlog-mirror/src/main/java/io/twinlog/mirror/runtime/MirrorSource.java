package io.twinlog.mirror.runtime;

import io.twinlog.mirror.fetcher.MirrorFetchListener;
import io.twinlog.mirror.fetcher.MirrorFetchQuota;
import io.twinlog.mirror.fetcher.MirrorFetcher;
import io.twinlog.mirror.partition.SourceProblem;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * A mirror's fetcher as its worker drives it: the partitions it copies from the source, what it has seen of the
 * source, and its end. In a broker it is a {@link MirrorFetcher} ({@link #fetchers}); an interface so that the
 * manager and its workers are tested without a source cluster ({@code MirrorManagerTest}).
 */
interface MirrorSource {
    /**
     * Starts (or keeps) copying the same partition of source topic {@code sourceTopic} into {@code tp}'s
     * {@code partition} (the topic's own name, or its name on the source for a renamed mirror topic).
     */
    void addPartition(TopicPartition tp, String sourceTopic, MirrorLocalPartition partition);

    /** Stops copying {@code tp}; nothing more is appended to it once this returns. */
    void removePartition(TopicPartition tp);

    /** The partitions it copies. */
    int partitionCount();

    /**
     * What keeps source topic {@code topic} (mirrored into the local topic {@code localTopicId}) from being mirrored,
     * if anything.
     */
    Optional<SourceProblem> sourceProblem(String topic, Uuid localTopicId);

    /** The source cluster ID the mirror recorded: metadata of any other cluster is not adopted (decision 68). */
    void expectClusterId(Optional<String> clusterId);

    /** The cluster ID the source answered with, once it has answered. */
    Optional<String> sourceClusterId();

    /** Why the source address answers for another cluster than the recorded one, while it does. */
    Optional<String> wrongClusterReason();

    /** The mirror's bandwidth cap on this broker ({@link MirrorFetchQuota#UNLIMITED}: none). */
    void updateReplicationQuota(long bytesPerSecond);

    /** When the source broker fetched for {@code tp} last answered (hi-res clock), if it has. */
    OptionalLong lastAnsweredMs(TopicPartition tp);

    /** Stops copying at once, without waiting for the threads: nothing is appended after this returns. */
    void detach();

    /** Waits for the threads and closes the connections; may take a request timeout (a blackholed source). */
    void shutdown();

    /** Starts a mirror's source, reporting to {@code listener}. */
    @FunctionalInterface
    interface Factory {
        MirrorSource start(MirrorDefinition def, MirrorFetchListener listener);
    }

    /** Each mirror's source is a {@link MirrorFetcher} of its own, capped and recorded in {@code metrics}. */
    static Factory fetchers(long stateTimeoutMs, MirrorMetrics metrics, MirrorFetchQuota.Windows quotaWindows,
                            Time time) {
        return (def, listener) -> {
            MirrorFetcher fetcher = new MirrorFetcher(def.name(), def.sourceClientConfigs(), stateTimeoutMs, listener,
                    metrics.fetchMetrics(def.name()), new MirrorFetchQuota(quotaWindows, time), time);
            fetcher.expectClusterId(def.sourceClusterId()); // before its first metadata round: it adopts no other's
            fetcher.updateReplicationQuota(def.replicationThrottledRate()); // capped from its first fetch
            fetcher.start();
            return new MirrorSource() {
                @Override
                public void addPartition(TopicPartition tp, String sourceTopic, MirrorLocalPartition partition) {
                    fetcher.addPartition(tp, sourceTopic, partition);
                }

                @Override
                public void removePartition(TopicPartition tp) {
                    fetcher.removePartition(tp);
                }

                @Override
                public int partitionCount() {
                    return fetcher.partitions().size();
                }

                @Override
                public Optional<SourceProblem> sourceProblem(String topic, Uuid localTopicId) {
                    return fetcher.sourceProblem(topic, localTopicId);
                }

                @Override
                public void expectClusterId(Optional<String> clusterId) {
                    fetcher.expectClusterId(clusterId);
                }

                @Override
                public Optional<String> sourceClusterId() {
                    return fetcher.sourceClusterId();
                }

                @Override
                public Optional<String> wrongClusterReason() {
                    return fetcher.wrongClusterReason();
                }

                @Override
                public void updateReplicationQuota(long bytesPerSecond) {
                    fetcher.updateReplicationQuota(bytesPerSecond);
                }

                @Override
                public OptionalLong lastAnsweredMs(TopicPartition tp) {
                    return fetcher.lastAnsweredMs(tp);
                }

                @Override
                public void detach() {
                    fetcher.detach();
                }

                @Override
                public void shutdown() {
                    fetcher.shutdown();
                }
            };
        };
    }
}
