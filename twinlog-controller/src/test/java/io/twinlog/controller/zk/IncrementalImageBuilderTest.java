package io.twinlog.controller.zk;

import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.controller.metadata.FeatureLevels;
import io.twinlog.controller.metadata.MetadataDelta;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicAssignment;
import io.twinlog.controller.metadata.TopicImage;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The incremental image build: only changed nodes decoded, unchanged topics reused, removals and bad nodes. */
@Timeout(10)
class IncrementalImageBuilderTest {
    private static final Uuid ID_A = new Uuid(1, 1);
    private static final Uuid ID_B = new Uuid(2, 2);

    private final IncrementalImageBuilder builder = new IncrementalImageBuilder("cluster");

    private static Optional<ChildData> node(String path, Object json, int version) {
        Stat stat = new Stat();
        stat.setVersion(version);
        return Optional.of(new ChildData(path, stat, Json.encode(json)));
    }

    private void assignment(String topic, Uuid id, int partitions) {
        Map<Integer, List<Integer>> replicas = new TreeMap<>();
        for (int p = 0; p < partitions; p++) {
            replicas.put(p, List.of(0, 1, 2));
        }
        builder.onNode("/brokers/topics/" + topic, node("/brokers/topics/" + topic,
                TopicAssignment.of(id, replicas).toJson(), 0));
    }

    private void state(String topic, int partition, int leader, int leaderEpoch, int version) {
        String path = "/brokers/topics/" + topic + "/partitions/" + partition + "/state";
        builder.onNode(path, node(path, new PartitionState(leader, leaderEpoch, List.of(0, 1, 2), 0).toJson(),
                version));
    }

    private MetadataImage twoTopics() {
        assignment("a", ID_A, 2);
        assignment("b", ID_B, 1);
        state("a", 0, 0, 0, 0);
        state("a", 1, 1, 0, 0);
        state("b", 0, 2, 0, 0);
        return builder.build(MetadataImage.EMPTY);
    }

    @Test
    void buildsTopicsWithTheirPartitionStatesAndVersions() {
        MetadataImage image = twoTopics();
        assertEquals(Set.of("a", "b"), image.topics().keySet());
        assertEquals(1, image.partition(new TopicPartition("a", 1)).orElseThrow().leader());
        assertEquals(ID_B, image.topic("b").orElseThrow().topicId());
        assertEquals(5, builder.nodesDecoded());
    }

    @Test
    void nothingChangedGivesThePreviousImageItself() {
        MetadataImage image = twoTopics();
        assertSame(image, builder.build(image));
    }

    @Test
    void oneStateChangeDecodesOneNodeAndReusesTheOtherTopic() {
        MetadataImage first = twoTopics();
        long decoded = builder.nodesDecoded();
        state("a", 1, 2, 1, 1);
        MetadataImage second = builder.build(first);
        assertEquals(decoded + 1, builder.nodesDecoded());
        assertSame(first.topic("b").orElseThrow(), second.topic("b").orElseThrow());
        assertNotSame(first.topic("a").orElseThrow(), second.topic("a").orElseThrow());
        assertEquals(2, second.partition(new TopicPartition("a", 1)).orElseThrow().leader());
        assertEquals(1, second.partition(new TopicPartition("a", 1)).orElseThrow().stateVersion());
        assertSame(first.mirrors(), second.mirrors());
    }

    @Test
    void aDeletedTopicLeavesTheImage() {
        MetadataImage first = twoTopics();
        builder.onNode("/brokers/topics/b/partitions/0/state", Optional.empty());
        builder.onNode("/brokers/topics/b", Optional.empty());
        MetadataImage second = builder.build(first);
        assertEquals(Set.of("a"), second.topics().keySet());
        assertTrue(second.topic(ID_B).isEmpty());
    }

    /** Decision 72: what tells a broker that a topic gone from the image was deleted, not lost with ZooKeeper. */
    @Test
    void deletionMarksAreInTheImageWithTheirTopicIds() {
        Uuid id = new Uuid(5, 5);
        MetadataImage before = builder.build(MetadataImage.EMPTY);
        builder.onNode("/admin/delete_topics/b", node("/admin/delete_topics/b", Map.of("version", 1,
                "topicId", id.toString()), 0));
        MetadataImage marked = builder.build(before);
        assertTrue(marked.deletionMarked("b", id));
        assertFalse(marked.deletionMarked("b", new Uuid(6, 6)), "another topic of that name");
        assertFalse(marked.deletionMarked("a", id));
        builder.onNode("/admin/delete_topics/b", Optional.empty());
        assertFalse(builder.build(marked).deletionMarked("b", id), "an expired mark goes");
    }

    @Test
    void mirrorStatesAndConfigsAndBrokersAreTracked() {
        MetadataImage first = twoTopics();
        builder.onNode("/mirror_states/a/0", node("/mirror_states/a/0", Map.of("state", "STOPPED",
                "minLeaderEpoch", 3), 7));
        builder.onNode("/config/topics/a", node("/config/topics/a", Map.of("config",
                Map.of("retention.ms", "5")), 0));
        builder.onNode("/controller", node("/controller", Map.of("brokerId", 2), 0));
        MetadataImage second = builder.build(first);
        assertEquals(MirrorPartitionState.STOPPED,
                second.mirrors().partitions().get(new TopicPartition("a", 0)).state());
        assertEquals(3, second.mirrors().partitions().get(new TopicPartition("a", 0)).minLeaderEpoch());
        assertEquals(Map.of("retention.ms", "5"), second.topicConfig("a"));
        assertEquals(2, second.controllerId());
        assertSame(first.topic("a").orElseThrow(), second.topic("a").orElseThrow());
    }

    @Test
    void theDeltaNamesTheMirrorRecordsThatChangedAsAFullComparisonWould() {
        MetadataImage first = twoTopics();
        builder.onNode("/mirrors/m/topics/a", node("/mirrors/m/topics/a", Map.of("desiredState", "MIRRORING"), 0));
        builder.onNode("/mirror_states/a/0", node("/mirror_states/a/0", Map.of("state", "MIRRORING"), 0));
        builder.onNode("/mirror_states/a/1", node("/mirror_states/a/1", Map.of("state", "MIRRORING"), 0));
        MetadataImage second = builder.build(first);
        assertEquals(MetadataDelta.between(first, second), builder.delta(first, second));

        // one record rewritten, one written again unchanged (a resync), one removed
        builder.onNode("/mirror_states/a/0", node("/mirror_states/a/0", Map.of("state", "STOPPING"), 1));
        builder.onNode("/mirror_states/a/1", node("/mirror_states/a/1", Map.of("state", "MIRRORING"), 0));
        builder.onNode("/mirrors/m/topics/a", Optional.empty());
        MetadataImage third = builder.build(second);
        MetadataDelta delta = builder.delta(second, third);
        assertEquals(Set.of(new TopicPartition("a", 0)), delta.changedMirrorPartitions());
        assertEquals(Set.of("a"), delta.changedMirrorTopics());
        assertEquals(MetadataDelta.between(second, third), delta);

        MetadataImage same = builder.build(third);
        assertTrue(builder.delta(third, same).isEmpty());
    }

    @Test
    void aNodeThatCannotBeDecodedKeepsItsLastGoodValue() {
        MetadataImage first = twoTopics();
        String path = "/brokers/topics/a/partitions/0/state";
        builder.onNode(path, Optional.of(new ChildData(path, new Stat(),
                "{not json".getBytes(StandardCharsets.UTF_8))));
        MetadataImage second = builder.build(first);
        TopicImage a = second.topic("a").orElseThrow();
        assertEquals(0, a.partitions().get(0).leader());
        assertEquals(1, a.partitions().get(1).leader());
    }

    @Test
    void featureNodeGivesBoundedLevelsWithAnEpochAboveTheDefaults() {
        MetadataImage image = twoTopics();
        assertEquals(FeatureLevels.DEFAULT, image.features());
        assertEquals(0, image.features().epoch());

        builder.onNode("/feature", node("/feature", Map.of("version", 1, "features",
                Map.of("transaction.version", 0, "some.future.feature", 7)), 0));
        MetadataImage zero = builder.build(image);
        assertEquals(Map.of("transaction.version", (short) 0, "share.version", (short) 1), zero.features().finalized(),
                "a feature the node leaves out keeps its default");
        assertEquals(1, zero.features().epoch(), "creating the node is newer than the defaults");
        assertSame(image.topics().get("a"), zero.topics().get("a"), "topics untouched");

        builder.onNode("/feature", node("/feature", Map.of("version", 1, "features",
                Map.of("transaction.version", 9)), 1));
        MetadataImage above = builder.build(zero);
        assertEquals(FeatureLevels.SUPPORTED.get("transaction.version").max(),
                above.features().level("transaction.version"), "bounded to what this build supports");
        assertEquals(2, above.features().epoch());

        builder.onNode("/feature", Optional.empty());
        assertEquals(FeatureLevels.DEFAULT, builder.build(above).features());
    }
}
