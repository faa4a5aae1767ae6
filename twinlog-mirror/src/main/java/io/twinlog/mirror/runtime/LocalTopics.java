package io.twinlog.mirror.runtime;

import org.apache.kafka.common.Uuid;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The destination cluster's topic administration as the mirror runtime uses it (implemented by the server on its
 * topic admin): creating a mirror topic with the source's ID, following partition increases and config changes.
 * Each call writes cluster metadata and may block on ZooKeeper: only the runtime's own threads call it.
 */
public interface LocalTopics {
    /** A mirror topic to create: the source topic's name, ID and partition count, and the configs it copies. */
    record NewMirrorTopic(String name, Uuid topicId, int partitions, Map<String, String> configs) {
    }

    /** Creates {@code topic} with the source's topic ID and partition count; replicas placed by this cluster. */
    default void createMirrorTopic(String topic, Uuid topicId, int partitions, Map<String, String> configs)
            throws Exception {
        Optional<Exception> failure = createMirrorTopics(List.of(new NewMirrorTopic(topic, topicId, partitions,
                configs))).get(topic);
        if (failure.isPresent()) {
            throw failure.get();
        }
    }

    /**
     * Creates many mirror topics as {@link #createMirrorTopic} does, waiting once for all of them to show on this
     * broker rather than once per topic; each topic fails on its own.
     *
     * @return each topic's failure by name, empty for one created
     */
    Map<String, Optional<Exception>> createMirrorTopics(List<NewMirrorTopic> topics) throws InterruptedException;

    /** Grows {@code topic} to {@code partitionCount} partitions (new replicas placed by this cluster). */
    void addPartitions(String topic, int partitionCount) throws Exception;

    /** Replaces the topic's config overrides. */
    void setConfigs(String topic, Map<String, String> overrides) throws Exception;
}
