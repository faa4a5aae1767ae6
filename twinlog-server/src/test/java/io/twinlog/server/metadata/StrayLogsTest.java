package io.twinlog.server.metadata;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.server.metadata.StrayLogs.Verdict;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Which logs the first metadata image after start may delete ({@link StrayLogs#decide}); broker 0, cluster "c". */
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

    @Test
    void logsOfDeletedTopicsAndMovedReplicasAreDeleted() {
        StrayLogs strays = StrayLogs.decide(BROKER, "c", imageWithTopicA("c"), List.of(GONE, A0, A1));
        assertEquals(Verdict.DELETE, strays.verdict());
        assertEquals(List.of(A1, GONE), strays.strays());
    }

    @Test
    void noStrayWhenEveryLogIsHosted() {
        assertEquals(Verdict.NONE, StrayLogs.decide(BROKER, "c", imageWithTopicA("c"), List.of(A0)).verdict());
        assertEquals(Verdict.NONE, StrayLogs.decide(BROKER, "c", emptyImage("c"), List.of()).verdict());
    }

    @Test
    void anImageWithoutAnyTopicKeepsEveryLog() {
        StrayLogs strays = StrayLogs.decide(BROKER, "c", emptyImage("c"), List.of(A0, GONE));
        assertEquals(Verdict.KEEP_METADATA_EMPTY, strays.verdict());
        assertEquals(List.of(A0, GONE), strays.strays());
    }

    @Test
    void anImageOfAnotherClusterKeepsEveryLog() {
        assertEquals(Verdict.KEEP_OTHER_CLUSTER,
                StrayLogs.decide(BROKER, "c", imageWithTopicA("other"), List.of(A0, GONE)).verdict());
        assertEquals(Verdict.KEEP_OTHER_CLUSTER,
                StrayLogs.decide(BROKER, "c", emptyImage("other"), List.of(GONE)).verdict());
    }
}
