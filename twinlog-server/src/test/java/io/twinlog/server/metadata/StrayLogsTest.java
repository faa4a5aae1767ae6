package io.twinlog.server.metadata;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.server.metadata.StrayLogs.Fate;
import io.twinlog.server.metadata.StrayLogs.Verdict;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What the first metadata image after start does with each log it does not give this broker ({@link StrayLogs#decide});
 * broker 0, cluster "c".
 */
@Timeout(10)
class StrayLogsTest {
    private static final int BROKER = 0;
    private static final TopicPartition A0 = new TopicPartition("a", 0);
    private static final TopicPartition A1 = new TopicPartition("a", 1);
    private static final TopicPartition GONE = new TopicPartition("gone", 0);

    /** Topic "a": partition 0 on brokers 0,1 and partition 1 on brokers 1,2 (moved away from broker 0). */
    private static MetadataImage imageWithTopicA(String clusterId) {
        SortedMap<Integer, PartitionImage> partitions = new TreeMap<>();
        partitions.put(0, new PartitionImage(0, List.of(0, 1), new PartitionState(0, 1, List.of(0, 1), 0), 0));
        partitions.put(1, new PartitionImage(1, List.of(1, 2), new PartitionState(1, 1, List.of(1, 2), 0), 0));
        return new MetadataImage(clusterId, Map.of(), Map.of("a", new TopicImage("a", new Uuid(1, 1), partitions,
                Map.of(), 0)), Map.of(), 1, MirrorImage.EMPTY);
    }

    private static MetadataImage emptyImage(String clusterId) {
        return new MetadataImage(clusterId, Map.of(), Map.of(), Map.of(), 1, MirrorImage.EMPTY);
    }

    private static final Uuid A_ID = new Uuid(1, 1);
    private static final Uuid GONE_ID = new Uuid(2, 2);

    private static MetadataImage withMarks(MetadataImage image, Map<String, Uuid> marks) {
        return new MetadataImage(image.clusterId(), Map.of(), image.topics(), Map.of(), 1, MirrorImage.EMPTY, marks);
    }

    private static Map<TopicPartition, Optional<Uuid>> logs(Object... tpAndIds) {
        Map<TopicPartition, Optional<Uuid>> out = new HashMap<>();
        for (int i = 0; i < tpAndIds.length; i += 2) {
            out.put((TopicPartition) tpAndIds[i], Optional.ofNullable((Uuid) tpAndIds[i + 1]));
        }
        return out;
    }

    private static Map<TopicPartition, Fate> fates(StrayLogs strays) {
        Map<TopicPartition, Fate> out = new TreeMap<>(Comparator.comparing(TopicPartition::toString));
        strays.strays().forEach(s -> out.put(s.partition(), s.fate()));
        return out;
    }

    @Test
    void aMarkedDeletionAndAMovedReplicaDeleteTheirLogs() {
        StrayLogs strays = StrayLogs.decide(BROKER, "c", withMarks(imageWithTopicA("c"), Map.of("gone", GONE_ID)),
                logs(GONE, GONE_ID, A0, A_ID, A1, A_ID));
        assertEquals(Verdict.PER_LOG, strays.verdict());
        assertEquals(List.of(A1, GONE), strays.strays().stream().map(StrayLogs.Stray::partition).toList());
        assertEquals(Map.of(A1, Fate.DELETE_REPLICA_MOVED, GONE, Fate.DELETE_TOPIC_DELETED), fates(strays));
    }

    @Test
    void aTopicGoneWithoutAMarkKeepsItsLog() {
        // ZooKeeper partly emptied: "gone" lost its nodes, "a" is still there
        StrayLogs strays = StrayLogs.decide(BROKER, "c", imageWithTopicA("c"), logs(GONE, GONE_ID, A0, A_ID));
        assertEquals(Map.of(GONE, Fate.KEEP_UNACCOUNTED), fates(strays));
    }

    @Test
    void aMarkOfAnotherTopicIdDoesNotDeleteTheLog() {
        Uuid earlier = new Uuid(3, 3);
        StrayLogs strays = StrayLogs.decide(BROKER, "c", withMarks(imageWithTopicA("c"), Map.of("gone", earlier)),
                logs(GONE, GONE_ID));
        assertEquals(Map.of(GONE, Fate.KEEP_UNACCOUNTED), fates(strays));
    }

    @Test
    void aTopicNameTakenByAnotherTopicIdSetsTheLogAside() {
        Uuid older = new Uuid(4, 4);
        // the name "a" was deleted (no mark left) and created again while the broker was down
        assertEquals(Map.of(A1, Fate.SET_ASIDE_NAME_REUSED),
                fates(StrayLogs.decide(BROKER, "c", imageWithTopicA("c"), logs(A1, older))));
        assertEquals(Map.of(A1, Fate.SET_ASIDE_NAME_REUSED),
                fates(StrayLogs.decide(BROKER, "c", imageWithTopicA("c"), logs(A1, null))), "no topic ID recorded");
        // with the old topic ID's mark it is a deletion
        assertEquals(Map.of(A1, Fate.DELETE_TOPIC_DELETED), fates(StrayLogs.decide(BROKER, "c",
                withMarks(imageWithTopicA("c"), Map.of("a", older)), logs(A1, older))));
    }

    @Test
    void aPartitionAssignedHereWithoutItsStateNodeKeepsItsLog() {
        SortedMap<Integer, PartitionImage> partitions = new TreeMap<>();
        partitions.put(0, new PartitionImage(0, List.of(0, 1), null, 0));
        MetadataImage image = new MetadataImage("c", Map.of(), Map.of("a", new TopicImage("a", A_ID, partitions,
                Map.of(), 0)), Map.of(), 1, MirrorImage.EMPTY);
        assertEquals(Map.of(A0, Fate.KEEP_UNACCOUNTED), fates(StrayLogs.decide(BROKER, "c", image, logs(A0, A_ID))));
    }

    @Test
    void noStrayWhenEveryLogIsHosted() {
        assertEquals(Verdict.NONE, StrayLogs.decide(BROKER, "c", imageWithTopicA("c"), logs(A0, A_ID)).verdict());
        assertEquals(Verdict.NONE, StrayLogs.decide(BROKER, "c", emptyImage("c"), logs()).verdict());
    }

    @Test
    void anImageWithoutAnyTopicKeepsEveryLog() {
        StrayLogs strays = StrayLogs.decide(BROKER, "c", withMarks(emptyImage("c"), Map.of("gone", GONE_ID)),
                logs(A0, A_ID, GONE, GONE_ID));
        assertEquals(Verdict.KEEP_METADATA_EMPTY, strays.verdict());
        assertEquals(Map.of(A0, Fate.KEEP_BY_GUARD, GONE, Fate.KEEP_BY_GUARD), fates(strays));
    }

    @Test
    void anImageOfAnotherClusterKeepsEveryLog() {
        assertEquals(Verdict.KEEP_OTHER_CLUSTER,
                StrayLogs.decide(BROKER, "c", imageWithTopicA("other"), logs(A0, A_ID, GONE, GONE_ID)).verdict());
        StrayLogs strays = StrayLogs.decide(BROKER, "c", withMarks(emptyImage("other"), Map.of("gone", GONE_ID)),
                logs(GONE, GONE_ID));
        assertEquals(Verdict.KEEP_OTHER_CLUSTER, strays.verdict());
        assertEquals(Map.of(GONE, Fate.KEEP_BY_GUARD), fates(strays));
    }
}
