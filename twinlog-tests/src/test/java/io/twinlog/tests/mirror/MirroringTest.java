package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** End to end: a mirror copies a topic with the same ID, offsets, epochs and CRCs; read-only; failover. */
@Timeout(300)
class MirroringTest {

    @Test
    void mirrorsBatchForBatchThenFailsOver() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start()) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            Admin sourceAdmin = clusters.sourceAdmin();
            MirrorAdmin mirrors = clusters.mirrors();
            clusters.createSourceTopics(new NewTopic("orders", 2, (short) 1)
                    .configs(Map.of("retention.ms", "86400000")));
            Uuid sourceId = sourceAdmin.describeTopics(List.of("orders")).allTopicNames().get().get("orders").topicId();
            produce(source, "orders", 0, 300, "a");
            produce(source, "orders", 1, 200, "b");

            clusters.mirror("dr", "orders");

            TopicPartition p0 = new TopicPartition("orders", 0);
            TopicPartition p1 = new TopicPartition("orders", 1);
            Waits.waitUntil("partition 0 mirrored", () -> end(destination, p0) == 300);
            Waits.waitUntil("partition 1 mirrored", () -> end(destination, p1) == 200);
            assertEquals(sourceId, clusters.destinationAdmin().describeTopics(List.of("orders")).allTopicNames().get()
                    .get("orders").topicId(), "the mirror topic keeps the source's topic ID");
            assertEquals(ReplicaLogs.read(source.broker(0), p0), ReplicaLogs.read(destination.broker(0), p0),
                    "batch for batch: offsets, epochs, CRCs");
            assertEquals(ReplicaLogs.read(source.broker(0), p1), ReplicaLogs.read(destination.broker(0), p1));

            // more data keeps flowing
            produce(source, "orders", 0, 50, "c");
            Waits.waitUntil("new records mirrored", () -> end(destination, p0) == 350);
            MirrorAdmin.PartitionDescription d0 = mirrors.describeClusterMirrors(List.of("dr")).get("dr").topics()
                    .get("orders").partitions().get(0);
            assertEquals("MIRRORING", d0.state());
            Waits.waitUntil("lag 0", () -> mirrors.describeClusterMirrors(List.of("dr")).get("dr").topics()
                    .get("orders").partitions().get(0).lag() == 0);
            clusters.awaitMirrored(p0);
            clusters.awaitMirrored(p1);

            // read-only while mirroring, with a message naming the mirror
            try (KafkaProducer<byte[], byte[]> p = destination.producer(Map.of("retries", 0))) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> p.send(new ProducerRecord<>(
                        "orders", 0, null, bytes("local"))).get());
                assertInstanceOf(PolicyViolationException.class, e.getCause());
                assertTrue(e.getCause().getMessage().contains("cluster mirror 'dr'"), e.getCause().getMessage());
            }

            // failover with the source down: the disaster case
            int sourceEpoch = ReplicaLogs.read(source.broker(0), p0).get(0).partitionLeaderEpoch();
            source.killBroker(0);
            assertEquals(Map.of(), mirrors.stopMirrorTopics("dr", List.of(), List.of("ord.*")));
            MirrorAdmin.PartitionDescription stopped = mirrors.describeClusterMirrors(List.of("dr")).get("dr").topics()
                    .get("orders").partitions().get(0);
            assertEquals("STOPPED", stopped.state());
            assertEquals(350, stopped.lastMirroredOffset());
            assertEquals(sourceEpoch, stopped.lastMirroredEpoch());
            String sourceClusterId = mirrors.describeClusterMirrors(List.of("dr")).get("dr").sourceClusterId();
            assertEquals(new MirrorAdmin.LastMirrored(sourceEpoch, 350), mirrors.lastMirroredEpochs(sourceClusterId,
                    Map.of("orders", List.of(0)), Map.of()).get(p0), "LastMirroredEpochs answers the failback peer");
            assertEquals(new MirrorAdmin.LastMirrored(-1, -1), mirrors.lastMirroredEpochs("another-cluster",
                    Map.of("orders", List.of(0)), Map.of()).get(p0), "and only for it");
            List<RecordMetadata> written = produce(destination, "orders", 0, 10, "after-failover");
            // 350 holds the producer-state barrier written at failover (decision 24)
            assertEquals(351, written.get(0).offset(), "writes continue after the mirrored offsets and the barrier");
            int localEpoch = ReplicaLogs.read(destination.broker(0), p0).get(ReplicaLogs.read(destination.broker(0), p0)
                    .size() - 1).partitionLeaderEpoch();
            assertTrue(localEpoch > stopped.lastMirroredEpoch(), "records after failover carry an epoch above the LME");

            // the old source comes back: both clusters still share what was mirrored before the failover
            source.startBroker(0);
            MirrorInvariants.awaitSharedPrefix(source, destination, p0, stopped.lastMirroredOffset());
            MirrorInvariants.awaitSharedPrefix(source, destination, p1, 200);
        }
    }

    private static long end(TestCluster cluster, TopicPartition tp) {
        return cluster.broker(0).logStore().log(tp).map(l -> l.highWatermark()).orElse(-1L);
    }

    private static List<RecordMetadata> produce(TestCluster cluster, String topic, int partition, int count,
                                                String prefix) throws Exception {
        List<RecordMetadata> out = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("linger.ms", 5))) {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                futures.add(p.send(new ProducerRecord<>(topic, partition, bytes("k" + i), bytes(prefix + i))));
            }
            for (var f : futures) {
                out.add(f.get());
            }
        }
        return out;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
