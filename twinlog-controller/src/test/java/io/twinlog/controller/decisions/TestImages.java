package io.twinlog.controller.decisions;

import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicAssignment.Reassignment;
import io.twinlog.controller.metadata.TopicImage;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** Builds metadata images for decision tests: {@code TestImages.builder().broker(0, 100).partition(...)...}. */
final class TestImages {
    private final Map<Integer, BrokerRegistration> brokers = new TreeMap<>();
    private final Map<String, TreeMap<Integer, PartitionImage>> partitions = new TreeMap<>();
    private final Map<String, Map<Integer, Reassignment>> reassigning = new HashMap<>();
    private final Map<TopicPartition, MirrorImage.MirrorPartition> mirrors = new HashMap<>();

    static TestImages builder() {
        return new TestImages();
    }

    static PartitionState state(int leader, int leaderEpoch, List<Integer> isr, int partitionEpoch) {
        return new PartitionState(leader, leaderEpoch, isr, partitionEpoch);
    }

    TestImages broker(int id, long brokerEpoch) {
        brokers.put(id, new BrokerRegistration(id, List.of(), Optional.empty(), brokerEpoch, false));
        return this;
    }

    TestImages shuttingDown(int id) {
        brokers.put(id, brokers.get(id).withShuttingDown(true));
        return this;
    }

    /** Broker {@code id} (registered) lost its log of {@code tp} while in its ISR, in leader epoch 4. */
    TestImages lost(int id, TopicPartition tp) {
        brokers.put(id, brokers.get(id).withLost(Map.of(
                new TopicIdPartition(topicId(tp.topic()), tp.partition(), tp.topic()), 4)));
        return this;
    }

    static Uuid topicId(String topic) {
        return new Uuid(topic.hashCode(), 1);
    }

    /** A partition with its replicas and state (null: none written yet) at ZooKeeper version {@code version}. */
    TestImages partition(TopicPartition tp, List<Integer> replicas, PartitionState state, int version) {
        partitions.computeIfAbsent(tp.topic(), t -> new TreeMap<>()).put(tp.partition(),
                new PartitionImage(tp.partition(), replicas, state, version));
        return this;
    }

    TestImages reassigning(TopicPartition tp, List<Integer> target, List<Integer> original) {
        reassigning.computeIfAbsent(tp.topic(), t -> new HashMap<>()).put(tp.partition(),
                new Reassignment(target, original));
        return this;
    }

    TestImages mirrorPartition(TopicPartition tp, int minLeaderEpoch) {
        mirrors.put(tp, new MirrorImage.MirrorPartition(
                MirrorPartitionState.EPOCH_FENCING, minLeaderEpoch, Map.of(), 3));
        return this;
    }

    MetadataImage build() {
        Map<String, TopicImage> topics = new HashMap<>();
        partitions.forEach((name, parts) -> topics.put(name, new TopicImage(name,
                topicId(name), parts, reassigning.getOrDefault(name, Map.of()), 7)));
        return new MetadataImage("test", brokers, topics, Map.of(), 0, new MirrorImage(Map.of(), mirrors));
    }
}
