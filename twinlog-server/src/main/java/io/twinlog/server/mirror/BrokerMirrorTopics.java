package io.twinlog.server.mirror;

import io.twinlog.mirror.runtime.LocalTopics;
import io.twinlog.server.metadata.TopicAdmin;
import org.apache.kafka.common.Uuid;

import java.util.Map;
import java.util.function.IntSupplier;

/**
 * The mirror runtime's topic administration on this cluster's {@link TopicAdmin}: a mirror topic gets the source's
 * ID and partition count, and this cluster's default replication factor (capped by the live brokers).
 */
public final class BrokerMirrorTopics implements LocalTopics {
    private final TopicAdmin topicAdmin;
    private final int defaultPartitions;
    private final short defaultReplicationFactor;
    private final IntSupplier liveBrokers;

    public BrokerMirrorTopics(TopicAdmin topicAdmin, int defaultPartitions, short defaultReplicationFactor,
                              IntSupplier liveBrokers) {
        this.topicAdmin = topicAdmin;
        this.defaultPartitions = defaultPartitions;
        this.defaultReplicationFactor = defaultReplicationFactor;
        this.liveBrokers = liveBrokers;
    }

    @Override
    public void createMirrorTopic(String topic, Uuid topicId, int partitions, Map<String, String> configs)
            throws Exception {
        short replicationFactor = (short) Math.min(defaultReplicationFactor, Math.max(1, liveBrokers.getAsInt()));
        TopicAdmin.TopicPlan plan = topicAdmin.plan(topic, partitions, (short) -1, null, configs, defaultPartitions,
                replicationFactor);
        topicAdmin.create(topicAdmin.withTopicId(plan, topicId));
    }

    @Override
    public void addPartitions(String topic, int partitionCount) throws Exception {
        topicAdmin.addPartitions(topic, topicAdmin.planPartitions(topic, partitionCount, null));
    }

    @Override
    public void setConfigs(String topic, Map<String, String> overrides) throws Exception {
        topicAdmin.setConfigs(topic, overrides);
    }
}
