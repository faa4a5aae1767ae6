package io.twinlog.controller.metadata;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.util.Collections;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * An immutable snapshot of cluster metadata as read from ZooKeeper: live brokers, topics with their partitions,
 * and topic config overrides. Request handlers read the current image without locks; a new image replaces the
 * old one atomically when ZooKeeper changes.
 */
public final class MetadataImage {
    public static final MetadataImage EMPTY = new MetadataImage("", Map.of(), Map.of(), Map.of(), -1, MirrorImage.EMPTY);

    private final String clusterId;
    private final Map<Integer, BrokerRegistration> brokers;
    private final Map<String, TopicImage> topicsByName;
    private final Map<Uuid, TopicImage> topicsById;
    private final Map<Uuid, String> topicNames;
    private final Map<String, Map<String, String>> topicConfigs;
    private final int controllerId;
    private final MirrorImage mirrors;
    private final Map<String, Uuid> deletionMarks;
    private final FeatureLevels features;

    public MetadataImage(String clusterId, Map<Integer, BrokerRegistration> brokers, Map<String, TopicImage> topics,
                         Map<String, Map<String, String>> topicConfigs, int controllerId, MirrorImage mirrors) {
        this(clusterId, brokers, topics, topicConfigs, controllerId, mirrors, Map.of());
    }

    /**
     * @param deletionMarks the topic deletions in {@code /admin/delete_topics}, begun or completed: topic name to the
     *                      ID of the topic deleted
     */
    public MetadataImage(String clusterId, Map<Integer, BrokerRegistration> brokers, Map<String, TopicImage> topics,
                         Map<String, Map<String, String>> topicConfigs, int controllerId, MirrorImage mirrors,
                         Map<String, Uuid> deletionMarks) {
        this(clusterId, brokers, topics, topicConfigs, controllerId, mirrors, deletionMarks, FeatureLevels.DEFAULT);
    }

    /** @param features the finalized feature levels ({@code /feature}) */
    public MetadataImage(String clusterId, Map<Integer, BrokerRegistration> brokers, Map<String, TopicImage> topics,
                         Map<String, Map<String, String>> topicConfigs, int controllerId, MirrorImage mirrors,
                         Map<String, Uuid> deletionMarks, FeatureLevels features) {
        this.features = features;
        this.mirrors = mirrors;
        this.deletionMarks = Map.copyOf(deletionMarks);
        this.clusterId = clusterId;
        this.brokers = Collections.unmodifiableMap(new TreeMap<>(brokers));
        this.topicsByName = Collections.unmodifiableMap(new TreeMap<>(topics));
        Map<Uuid, TopicImage> byId = new HashMap<>();
        topics.values().forEach(t -> byId.put(t.topicId(), t));
        this.topicsById = Collections.unmodifiableMap(byId);
        Map<Uuid, String> names = new HashMap<>();
        topics.values().forEach(t -> names.put(t.topicId(), t.name()));
        this.topicNames = Collections.unmodifiableMap(names);
        this.topicConfigs = Collections.unmodifiableMap(new HashMap<>(topicConfigs));
        this.controllerId = controllerId;
    }

    /** The cluster's finalized feature levels, the same on every broker once it has seen the same node. */
    public FeatureLevels features() {
        return features;
    }

    public MirrorImage mirrors() {
        return mirrors;
    }

    public String clusterId() {
        return clusterId;
    }

    public Map<Integer, BrokerRegistration> brokers() {
        return brokers;
    }

    public Map<String, TopicImage> topics() {
        return topicsByName;
    }

    public Optional<TopicImage> topic(String name) {
        return Optional.ofNullable(topicsByName.get(name));
    }

    /**
     * Topic ID to name, for every topic: what a Fetch request's topic IDs are resolved with, built once per image
     * rather than once per request.
     */
    public Map<Uuid, String> topicNames() {
        return topicNames;
    }

    public Optional<TopicImage> topic(Uuid topicId) {
        return Optional.ofNullable(topicsById.get(topicId));
    }

    public Optional<PartitionImage> partition(TopicPartition tp) {
        TopicImage t = topicsByName.get(tp.topic());
        return t == null ? Optional.empty() : Optional.ofNullable(t.partitions().get(tp.partition()));
    }

    /**
     * The replicas of a partition that cannot serve it, for Metadata and DescribeTopicPartitions: those on brokers
     * that are not live, and those in a failed log dir of a live broker (its registration lists them).
     */
    public List<Integer> offlineReplicas(TopicImage topic, PartitionImage partition) {
        TopicIdPartition id = new TopicIdPartition(topic.topicId(), partition.partition(), topic.name());
        List<Integer> out = new ArrayList<>();
        for (Integer r : partition.replicas()) {
            BrokerRegistration b = brokers.get(r);
            if (b == null || b.isReplicaOffline(id)) {
                out.add(r);
            }
        }
        return out;
    }

    /**
     * Whether an operator deleted this topic (this very topic ID): its deletion is marked in
     * {@code /admin/delete_topics}, where a completed deletion's mark stays for a while. A topic that is gone from
     * the image without one was not deleted by anyone's request (ZooKeeper emptied or replaced under the broker), and
     * its logs are kept.
     */
    public boolean deletionMarked(String topic, Uuid topicId) {
        return topicId.equals(deletionMarks.get(topic));
    }

    public Map<String, String> topicConfig(String topic) {
        return topicConfigs.getOrDefault(topic, Map.of());
    }

    /** Controller broker id, or -1 when none is known; before the controller exists, the lowest live broker id. */
    public int controllerId() {
        return controllerId;
    }

    public SortedMap<Integer, PartitionImage> partitions(String topic) {
        TopicImage t = topicsByName.get(topic);
        return t == null ? Collections.emptySortedMap() : t.partitions();
    }
}
