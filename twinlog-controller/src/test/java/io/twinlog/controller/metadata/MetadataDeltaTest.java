package io.twinlog.controller.metadata;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What {@link MetadataDelta#between} reports, one kind of change per test. */
@Timeout(10)
class MetadataDeltaTest {
    private static final Uuid ID_A = new Uuid(1, 1);
    private static final Uuid ID_B = new Uuid(2, 2);

    private static PartitionImage partition(int p, int leader, int leaderEpoch) {
        return new PartitionImage(p, List.of(0, 1, 2), new PartitionState(leader, leaderEpoch, List.of(0, 1, 2), 0), 0);
    }

    private static TopicImage topic(String name, Uuid id, PartitionImage... partitions) {
        SortedMap<Integer, PartitionImage> map = new TreeMap<>();
        for (PartitionImage p : partitions) {
            map.put(p.partition(), p);
        }
        return new TopicImage(name, id, map, Map.of(), 0);
    }

    private static MetadataImage image(List<TopicImage> topics, Map<String, Map<String, String>> configs,
                                       MirrorImage mirrors) {
        Map<String, TopicImage> byName = new HashMap<>();
        topics.forEach(t -> byName.put(t.name(), t));
        return new MetadataImage("c", Map.of(), byName, configs, 0, mirrors);
    }

    private static MetadataImage image(TopicImage... topics) {
        return image(List.of(topics), Map.of(), MirrorImage.EMPTY);
    }

    @Test
    void theSameImageIsAnEmptyDelta() {
        MetadataImage image = image(topic("a", ID_A, partition(0, 0, 0), partition(1, 1, 0)));
        assertTrue(MetadataDelta.between(image, image).isEmpty());
    }

    @Test
    void equalButRebuiltTopicsAreNoChange() {
        MetadataImage before = image(topic("a", ID_A, partition(0, 0, 0)));
        MetadataImage after = image(topic("a", ID_A, partition(0, 0, 0)));
        assertTrue(MetadataDelta.between(before, after).isEmpty());
    }

    @Test
    void onlyThePartitionWhoseRecordChangedIsReported() {
        MetadataImage before = image(topic("a", ID_A, partition(0, 0, 0), partition(1, 1, 0)),
                topic("b", ID_B, partition(0, 2, 0)));
        MetadataImage after = image(topic("a", ID_A, partition(0, 0, 0), partition(1, 2, 1)),
                topic("b", ID_B, partition(0, 2, 0)));
        MetadataDelta delta = MetadataDelta.between(before, after);
        assertEquals(Set.of(new TopicPartition("a", 1)), delta.changedPartitions());
        assertEquals(Set.of(), delta.removedPartitions());
    }

    @Test
    void aNewTopicsPartitionsAreAllChanged() {
        MetadataDelta delta = MetadataDelta.between(image(), image(topic("a", ID_A, partition(0, 0, 0),
                partition(1, 1, 0))));
        assertEquals(Set.of(new TopicPartition("a", 0), new TopicPartition("a", 1)), delta.changedPartitions());
    }

    @Test
    void aDeletedTopicsPartitionsAreRemoved() {
        MetadataDelta delta = MetadataDelta.between(image(topic("a", ID_A, partition(0, 0, 0))), image());
        assertEquals(Set.of(new TopicPartition("a", 0)), delta.removedPartitions());
        assertEquals(Set.of("a"), delta.deletedTopics());
    }

    @Test
    void aTopicRecreatedWithAnotherIdChangesAllItsPartitionsEvenWithEqualRecords() {
        MetadataDelta delta = MetadataDelta.between(image(topic("a", ID_A, partition(0, 0, 0), partition(1, 0, 0))),
                image(topic("a", ID_B, partition(0, 0, 0))));
        assertEquals(Set.of(new TopicPartition("a", 0)), delta.changedPartitions());
        assertEquals(Set.of(new TopicPartition("a", 1)), delta.removedPartitions());
    }

    @Test
    void configChangesAreReportedPerTopic() {
        TopicImage a = topic("a", ID_A, partition(0, 0, 0));
        MetadataDelta delta = MetadataDelta.between(image(List.of(a), Map.of("a", Map.of("retention.ms", "1")),
                MirrorImage.EMPTY), image(List.of(a), Map.of("a", Map.of("retention.ms", "2")), MirrorImage.EMPTY));
        assertEquals(Set.of("a"), delta.changedConfigTopics());
        assertEquals(Set.of(), delta.changedPartitions());
    }

    @Test
    void mirrorRecordChangesAreReportedPerPartitionAndTopic() {
        TopicImage a = topic("a", ID_A, partition(0, 0, 0), partition(1, 0, 0));
        TopicPartition a0 = new TopicPartition("a", 0);
        TopicPartition a1 = new TopicPartition("a", 1);
        MirrorImage.MirrorPartition mirroring = new MirrorImage.MirrorPartition(MirrorPartitionState.MIRRORING, 0,
                Map.of("state", "MIRRORING"), 3);
        MirrorImage.MirrorPartition stopping = new MirrorImage.MirrorPartition(MirrorPartitionState.STOPPING, 0,
                Map.of("state", "STOPPING"), 4);
        MirrorImage before = new MirrorImage(Map.of("a", new MirrorImage.MirrorTopic("m", DesiredMirrorState.MIRRORING)),
                Map.of(a0, mirroring, a1, mirroring));
        MirrorImage after = new MirrorImage(Map.of("a", new MirrorImage.MirrorTopic("m", DesiredMirrorState.STOPPED)),
                Map.of(a0, stopping, a1, mirroring));
        MetadataDelta delta = MetadataDelta.between(image(List.of(a), Map.of(), before),
                image(List.of(a), Map.of(), after));
        assertEquals(Set.of(a0), delta.changedMirrorPartitions());
        assertEquals(Set.of("a"), delta.changedMirrorTopics());
        assertEquals(Set.of(), delta.changedPartitions());
        assertFalse(delta.isEmpty());
    }

    @Test
    void brokerAndControllerChangesAreFlagged() {
        MetadataImage before = new MetadataImage("c", Map.of(), Map.of(), Map.of(), 0, MirrorImage.EMPTY);
        MetadataImage after = new MetadataImage("c", Map.of(), Map.of(), Map.of(), 1, MirrorImage.EMPTY);
        MetadataDelta delta = MetadataDelta.between(before, after);
        assertTrue(delta.controllerChanged());
        assertFalse(delta.brokersChanged());
    }
}
