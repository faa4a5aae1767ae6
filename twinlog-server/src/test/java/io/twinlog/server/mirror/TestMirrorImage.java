package io.twinlog.server.mirror;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A metadata image as the mirror API handlers read it, built by scenario: topics with their replicas and ISR,
 * which mirror feeds a topic, each partition's state record (stored as the image carries it, raw JSON), topic
 * configs and the truncations each broker applied.
 */
final class TestMirrorImage {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Map<String, TopicImage> topics = new HashMap<>();
    private final Map<String, MirrorImage.MirrorTopic> mirrorTopics = new HashMap<>();
    private final Map<TopicPartition, MirrorImage.MirrorPartition> records = new HashMap<>();
    private final Map<String, Map<String, String>> configs = new HashMap<>();
    private final Map<Integer, Map<TopicPartition, Long>> applied = new HashMap<>();

    static TestMirrorImage builder() {
        return new TestMirrorImage();
    }

    /** A topic of {@code partitions} partitions, each on {@code replicas} with {@code isr} in sync. */
    TestMirrorImage topic(String name, Uuid id, int partitions, List<Integer> replicas, List<Integer> isr) {
        SortedMap<Integer, PartitionImage> images = new TreeMap<>();
        for (int p = 0; p < partitions; p++) {
            images.put(p, new PartitionImage(p, replicas, new PartitionState(isr.get(0), 1, isr, 1), 1));
        }
        topics.put(name, new TopicImage(name, id, images, Map.of(), 0));
        return this;
    }

    TestMirrorImage mirroredBy(String topic, String mirror) {
        mirrorTopics.put(topic, new MirrorImage.MirrorTopic(mirror, DesiredMirrorState.MIRRORING));
        return this;
    }

    TestMirrorImage record(TopicPartition tp, MirrorPartitionRecord record) {
        Map<String, Object> json = JSON.convertValue(record.toJson(), new TypeReference<Map<String, Object>>() { });
        records.put(tp, new MirrorImage.MirrorPartition(record.state(), record.minLeaderEpoch(), json, 1));
        return this;
    }

    TestMirrorImage topicConfig(String topic, String key, String value) {
        configs.computeIfAbsent(topic, t -> new HashMap<>()).put(key, value);
        return this;
    }

    TestMirrorImage applied(int broker, TopicPartition tp, long truncationId) {
        applied.computeIfAbsent(broker, b -> new HashMap<>()).put(tp, truncationId);
        return this;
    }

    MetadataImage image() {
        return new MetadataImage("destination", Map.of(), topics, configs, 0,
                new MirrorImage(mirrorTopics, records, applied));
    }

    MirrorMetadataView view() {
        return MirrorMetadataView.of(image());
    }
}
