package io.twinlog.server.mirror;

import io.twinlog.mirror.runtime.LocalTopics;
import io.twinlog.server.metadata.TopicAdmin;
import org.apache.kafka.common.Uuid;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
    public Map<String, Optional<Exception>> createMirrorTopics(List<NewMirrorTopic> topics)
            throws InterruptedException {
        short replicationFactor = (short) Math.min(defaultReplicationFactor, Math.max(1, liveBrokers.getAsInt()));
        Map<String, Optional<Exception>> outcome = new LinkedHashMap<>();
        List<TopicAdmin.TopicPlan> plans = new ArrayList<>();
        for (NewMirrorTopic topic : topics) {
            try {
                TopicAdmin.TopicPlan plan = topicAdmin.plan(topic.name(), topic.partitions(), (short) -1, null,
                        topic.configs(), defaultPartitions, replicationFactor);
                plans.add(topicAdmin.withTopicId(plan, topic.topicId()));
                outcome.put(topic.name(), Optional.empty());
            } catch (RuntimeException e) {
                // broad: Kafka's topic rules refuse with several unchecked types (invalid name, config, partition
                // count); each is this topic's outcome, answered to the client, and nothing is written for it
                outcome.put(topic.name(), Optional.of(e));
            }
        }
        outcome.putAll(topicAdmin.createAll(plans));
        return outcome;
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
