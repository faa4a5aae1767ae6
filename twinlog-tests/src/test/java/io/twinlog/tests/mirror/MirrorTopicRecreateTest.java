package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
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
class MirrorTopicRecreateTest {
    private static final TopicPartition TP = new TopicPartition("events", 0);

    @Test
    void aDeletedMirrorTopicMirroredAgainStartsClean() throws Exception {
        try (TestCluster source = TestCluster.builder().brokers(1).build().start();
             TestCluster destination = TestCluster.builder().brokers(1).build().start();
             Admin sourceAdmin = source.admin();
             Admin destAdmin = destination.admin();
             MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
            sourceAdmin.createTopics(List.of(new NewTopic("events", 1, (short) 1))).all().get();
            produce(source, 100, "a");
            mirrors.createClusterMirror("m", Map.of("bootstrap.servers", source.bootstrapServers()));
            assertEquals(Map.of(), mirrors.startMirrorTopics("m", List.of("events"), List.of(), List.of()));
            MirrorInvariants.awaitMirrored(source, destination, TP);
            // failover: the record now holds STOPPED, the last mirrored offset and epoch, raised leader epochs
            assertEquals(Map.of(), mirrors.stopMirrorTopics("m", List.of("events"), List.of()));
            Waits.waitUntil("failed over", () -> state(mirrors).equals("STOPPED"));

            destAdmin.deleteTopics(List.of("events")).all().get();
            Waits.waitFor("the topic's mirror records gone with it", () -> destination.broker(0).metadata().image(),
                    (MetadataImage image) -> image.topic("events").isEmpty()
                            && !image.mirrors().partitions().containsKey(TP));

            produce(source, 50, "b");
            assertEquals(Map.of(), mirrors.startMirrorTopics("m", List.of("events"), List.of(), List.of()));
            Waits.waitUntil("mirroring again", () -> state(mirrors).equals("MIRRORING"));
            List<ReplicaLogs.Batch> mirrored = MirrorInvariants.awaitMirrored(source, destination, TP);
            assertEquals(0, mirrored.get(0).baseOffset(), "mirrored from the start");
            assertEquals(149, mirrored.get(mirrored.size() - 1).lastOffset(), "every source record");
        }
    }

    private static String state(MirrorAdmin mirrors) throws Exception {
        var topics = mirrors.describeClusterMirrors(List.of("m")).get("m").topics();
        return topics.containsKey("events") && !topics.get("events").partitions().isEmpty()
                ? topics.get("events").partitions().get(0).state() : "NONE";
    }

    private static void produce(TestCluster cluster, int count, String prefix) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("linger.ms", 5))) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>("events", 0, null, (prefix + i).getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
    }
}
