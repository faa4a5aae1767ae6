package io.twinlog.mirror.runtime;

import org.apache.kafka.common.Uuid;

import java.util.Map;

/**
 * The destination cluster's topic administration as the mirror runtime uses it (implemented by the server on its
 * topic admin): creating a mirror topic with the source's ID, following partition increases and config changes.
 * Each call writes cluster metadata and may block on ZooKeeper: only the runtime's own threads call it.
 */
public interface LocalTopics {
    /** Creates {@code topic} with the source's topic ID and partition count; replicas placed by this cluster. */
    void createMirrorTopic(String topic, Uuid topicId, int partitions, Map<String, String> configs) throws Exception;

    /** Grows {@code topic} to {@code partitionCount} partitions (new replicas placed by this cluster). */
    void addPartitions(String topic, int partitionCount) throws Exception;

    /** Replaces the topic's config overrides. */
    void setConfigs(String topic, Map<String, String> overrides) throws Exception;
}
