package io.twinlog.tests.mirror;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A mirror topic deleted on the destination takes its mirror state and progress records with it, so mirroring
 * it again under the same name starts clean. (Left behind, the old STOPPED record was read as the new partition's:
 * the controller raised the new partition's epoch from it, and the state machine started a failback,
 * STOPPED -> LOG_TRUNCATION, for a topic that had never failed over; a record written by a later leader epoch
 * than the new partition's would have had it ignored altogether.)
 */
@Timeout(300)
class MirrorTopicRecreateTest {
    private static final TopicPartition TP = new TopicPartition("events", 0);

    @Test
    void aDeletedMirrorTopicMirroredAgainStartsClean() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start()) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            clusters.createSourceTopics(new NewTopic("events", 1, (short) 1));
            source.produce("events", 0, 100, "a");
            clusters.mirror("m", "events");
            clusters.awaitMirrored(TP);
            // failover: the record now holds STOPPED, the last mirrored offset and epoch, raised leader epochs
            clusters.failOver("m", "events");

            clusters.destinationAdmin().deleteTopics(List.of("events")).all().get();
            Waits.waitFor("the topic's mirror records gone with it", () -> destination.broker(0).metadata().image(),
                    (MetadataImage image) -> image.topic("events").isEmpty()
                            && !image.mirrors().partitions().containsKey(TP));

            source.produce("events", 0, 50, "b");
            assertEquals(Map.of(), clusters.mirrors().startMirrorTopics("m", List.of("events"), List.of(),
                    List.of()));
            clusters.awaitState("m", "events", "MIRRORING");
            List<ReplicaLogs.Batch> mirrored = clusters.awaitMirrored(TP);
            assertEquals(0, mirrored.get(0).baseOffset(), "mirrored from the start");
            assertEquals(149, mirrored.get(mirrored.size() - 1).lastOffset(), "every source record");
        }
    }
}
