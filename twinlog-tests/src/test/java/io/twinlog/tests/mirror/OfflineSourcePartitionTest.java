package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A source partition with no leader (its only replica's broker is down, the rest of the source is up) is reported
 * FAILED with that reason after {@code mirror.state.timeout.ms}, retried, and mirrors again by itself once the
 * source partition is back.
 */
@Timeout(300)
class OfflineSourcePartitionTest {
    private static final String TOPIC = "ledger";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @Test
    void leaderlessSourcePartitionFailsWithTheReasonAndRecovers() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(2),
                TestCluster.builder().brokers(1).brokerProperty("mirror.state.timeout.ms", "3000"))) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            MirrorAdmin mirrors = clusters.mirrors();
            // the partition's only replica is on source broker 1
            clusters.createSourceTopics(new NewTopic(TOPIC, Map.of(0, List.of(1))));
            produce(source, 0, 100);
            // bootstrapped from broker 0 only, which stays up
            clusters.createMirror("dr", Map.of("bootstrap.servers", source.broker(0).bootstrapServers()));
            assertEquals(Map.of(), mirrors.startMirrorTopics("dr", List.of(TOPIC), List.of(), List.of()));
            Waits.waitUntil("100 records mirrored", () -> destination.logEndOffset(TP) == 100);
            clusters.awaitMirrored(TP);

            source.stopBroker(1);
            MirrorAdmin.PartitionDescription failed = Waits.waitFor("FAILED: the source partition has no leader",
                    () -> partition(mirrors), p -> p.state().equals("FAILED"), Duration.ofSeconds(30));
            assertTrue(failed.lastError().contains("no leader") && failed.retryAttempt() > 0, failed.lastError());

            source.startBroker(1);
            produce(source, 100, 50);
            Waits.waitUntil("mirroring again by itself, caught up", () -> partition(mirrors).state()
                    .equals("MIRRORING") && destination.logEndOffset(TP) == 150, Duration.ofSeconds(60));
            clusters.awaitMirrored(TP);
        }
    }

    private static MirrorAdmin.PartitionDescription partition(MirrorAdmin mirrors) throws Exception {
        return MirroredClusters.partition(mirrors, "dr", TP);
    }

    private static void produce(TestCluster cluster, int from, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("linger.ms", 5))) {
            for (int i = from; i < from + count; i++) {
                p.send(new ProducerRecord<>(TOPIC, 0, null, ("r" + i).getBytes(StandardCharsets.UTF_8))).get();
            }
        }
    }
}
