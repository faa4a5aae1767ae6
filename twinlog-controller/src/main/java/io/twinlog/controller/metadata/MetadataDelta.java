package io.twinlog.controller.metadata;

import org.apache.kafka.common.TopicPartition;

import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What changed from one {@link MetadataImage} to the next, so that listeners act on that and leave the rest alone
 * (a ZooKeeper change to one partition's state must not re-apply, and lock, the other thousands). Pure: computed
 * from the two images only. The image builder reuses unchanged {@link TopicImage}s, so most comparisons are one
 * reference check.
 *
 * @param changedPartitions  partitions that are new, or whose assignment, leadership record or topic ID changed
 * @param removedPartitions  partitions of the previous image that the next one no longer has (topic deleted or
 *                           partition gone with a topic ID change)
 * @param changedConfigTopics topics whose config overrides differ (also when the topic itself is new or gone)
 * @param deletedTopics      topic names of the previous image missing from the next
 * @param changedMirrorPartitions mirror partitions whose record was added, changed or removed
 * @param changedMirrorTopics topics that became, stopped being, or changed as mirror topics
 * @param brokersChanged     live broker set or a registration changed
 * @param controllerChanged  the controller id changed
 */
public record MetadataDelta(Set<TopicPartition> changedPartitions, Set<TopicPartition> removedPartitions,
                            Set<String> changedConfigTopics, Set<String> deletedTopics,
                            Set<TopicPartition> changedMirrorPartitions, Set<String> changedMirrorTopics,
                            boolean brokersChanged, boolean controllerChanged) {

    public MetadataDelta {
        changedPartitions = Set.copyOf(changedPartitions);
        removedPartitions = Set.copyOf(removedPartitions);
        changedConfigTopics = Set.copyOf(changedConfigTopics);
        deletedTopics = Set.copyOf(deletedTopics);
        changedMirrorPartitions = Set.copyOf(changedMirrorPartitions);
        changedMirrorTopics = Set.copyOf(changedMirrorTopics);
    }

    public static MetadataDelta between(MetadataImage previous, MetadataImage next) {
        Set<TopicPartition> mirrorPartitions = new HashSet<>();
        Set<String> mirrorTopics = new HashSet<>();
        if (previous.mirrors() != next.mirrors()) {
            changedKeys(previous.mirrors().partitions(), next.mirrors().partitions(), mirrorPartitions);
            changedKeys(previous.mirrors().topics(), next.mirrors().topics(), mirrorTopics);
        }
        return between(previous, next, mirrorPartitions, mirrorTopics);
    }

    /**
     * As {@link #between(MetadataImage, MetadataImage)}, with the mirror changes given by whoever built {@code next}
     * (it knows which records it decoded; comparing every mirror record per image is what it saves).
     */
    public static MetadataDelta between(MetadataImage previous, MetadataImage next,
                                        Set<TopicPartition> changedMirrorPartitions, Set<String> changedMirrorTopics) {
        Set<TopicPartition> changed = new HashSet<>();
        Set<TopicPartition> removed = new HashSet<>();
        Set<String> deleted = new HashSet<>();
        for (TopicImage topic : next.topics().values()) {
            TopicImage before = previous.topics().get(topic.name());
            if (before == topic) {
                continue;
            }
            boolean sameTopic = before != null && before.topicId().equals(topic.topicId());
            topic.partitions().forEach((p, image) -> {
                if (!sameTopic || !image.equals(before.partitions().get(p))) {
                    changed.add(new TopicPartition(topic.name(), p));
                }
            });
            if (before != null) {
                before.partitions().keySet().forEach(p -> {
                    if (!sameTopic || !topic.partitions().containsKey(p)) {
                        removed.add(new TopicPartition(topic.name(), p));
                    }
                });
            }
        }
        for (TopicImage before : previous.topics().values()) {
            if (!next.topics().containsKey(before.name())) {
                deleted.add(before.name());
                before.partitions().keySet().forEach(p -> removed.add(new TopicPartition(before.name(), p)));
            }
        }
        removed.removeAll(changed);   // a topic re-created under the same name: its partitions are new, not gone

        Set<String> configTopics = new HashSet<>();
        Set<String> topicNames = new HashSet<>(previous.topics().keySet());
        topicNames.addAll(next.topics().keySet());
        for (String name : topicNames) {
            if (!previous.topicConfig(name).equals(next.topicConfig(name))) {
                configTopics.add(name);
            }
        }

        return new MetadataDelta(changed, removed, configTopics, deleted, changedMirrorPartitions, changedMirrorTopics,
                !previous.brokers().equals(next.brokers()), previous.controllerId() != next.controllerId());
    }

    private static <K, V> void changedKeys(Map<K, V> before, Map<K, V> after, Set<K> out) {
        after.forEach((k, v) -> {
            if (!Objects.equals(v, before.get(k))) {
                out.add(k);
            }
        });
        before.keySet().forEach(k -> {
            if (!after.containsKey(k)) {
                out.add(k);
            }
        });
    }

    public boolean isEmpty() {
        return changedPartitions.isEmpty() && removedPartitions.isEmpty() && changedConfigTopics.isEmpty()
                && deletedTopics.isEmpty() && changedMirrorPartitions.isEmpty() && changedMirrorTopics.isEmpty()
                && !brokersChanged && !controllerChanged;
    }
}
