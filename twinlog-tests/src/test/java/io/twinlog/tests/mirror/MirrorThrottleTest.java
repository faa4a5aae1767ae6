package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A mirror's bandwidth cap (issue 28, point 4; {@code mirror.replication.throttled.rate}): a mirror capped at 2 MiB/s
 * copies a 40 MiB backlog at about 2 MiB/s, says so in its metrics, and catches up at once when the cap is lifted
 * live; a cap of 0 is refused. The replication quota windows are 3 x 1 s (Kafka's default 11 would let a first burst
 * of ~20 MiB through).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class MirrorThrottleTest {
    private static final String TOPIC = "backlog";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final int RECORD_BYTES = 1024;
    private static final int RECORDS = 40 * 1024;
    private static final long CAP = 2L << 20;

    @Test
    void aCappedMirrorCopiesAtTheCapAndCatchesUpWhenItIsLifted() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(1),
                TestCluster.builder().brokers(1).brokerProperty("replication.quota.window.num", "3")
                        .brokerProperty("replication.quota.window.size.seconds", "1"))) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            MirrorAdmin mirrors = clusters.mirrors();
            clusters.createSourceTopics(new NewTopic(TOPIC, 1, (short) 1));
            try (KafkaProducer<byte[], byte[]> producer = source.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 5))) {
                byte[] value = new byte[RECORD_BYTES];
                for (int i = 0; i < RECORDS; i++) {
                    producer.send(new ProducerRecord<>(TOPIC, value));
                }
                producer.flush();
            }
            MirrorException refused = assertThrows(MirrorException.class, () -> mirrors.createClusterMirror("m",
                    Map.of("bootstrap.servers", source.bootstrapServers(), "mirror.replication.throttled.rate", "0")));
            assertTrue(refused.getMessage().contains("mirror.replication.throttled.rate"), refused.getMessage());

            clusters.createMirror("m", Map.of("mirror.replication.throttled.rate", Long.toString(CAP)));
            assertEquals(Map.of(), mirrors.startMirrorTopics("m", List.of(TOPIC), List.of(), List.of()));
            Waits.waitUntil("mirroring began", () -> logEnd(destination) > 0, Duration.ofSeconds(30));
            long firstNanos = System.nanoTime();
            // past the first windows (a fresh rate lets about two windows' worth through at once), then 6 s measured
            Waits.waitUntil("4 s of capped mirroring", () -> System.nanoTime() - firstNanos
                    > TimeUnit.SECONDS.toNanos(4), Duration.ofSeconds(10));
            long fromOffset = logEnd(destination);
            long fromNanos = System.nanoTime();
            Waits.waitUntil("6 s more", () -> System.nanoTime() - fromNanos > TimeUnit.SECONDS.toNanos(6),
                    Duration.ofSeconds(10));
            double seconds = (System.nanoTime() - fromNanos) / 1e9;
            double mibPerSecond = (logEnd(destination) - fromOffset) * (double) RECORD_BYTES / seconds / (1 << 20);
            System.out.printf("mirror capped at 2 MiB/s copied %.2f MiB/s%n", mibPerSecond);
            assertTrue(mibPerSecond > 1.4 && mibPerSecond < 2.8, "capped at 2 MiB/s, copied " + mibPerSecond
                    + " MiB/s");
            assertTrue(logEnd(destination) < RECORDS, "still behind under the cap");
            assertTrue(MirrorMetricsTest.meter(destination.broker(0), "kafka.server:type=ClusterMirror,"
                    + "name=ThrottledTimeMs,mirror=m").count() > 0, "the wait for the cap is in the mirror metrics");
            assertEquals(Long.valueOf(CAP), MirrorMetricsTest.gaugeValue(destination.broker(0),
                    "kafka.server:type=ClusterMirror,name=ReplicationThrottledRate,mirror=m").orElseThrow());

            Map<String, String> lifted = new HashMap<>();
            lifted.put("mirror.replication.throttled.rate", null);
            mirrors.alterClusterMirror("m", lifted);
            long liftedNanos = System.nanoTime();
            Waits.waitUntil("caught up once the cap is lifted", () -> logEnd(destination) == RECORDS,
                    Duration.ofSeconds(30));
            double catchUpSeconds = (System.nanoTime() - liftedNanos) / 1e9;
            System.out.printf("caught up %.1f s after the cap was lifted%n", catchUpSeconds);
            // what was left (over 10 MiB) would take more than 5 s at the cap
            assertTrue(catchUpSeconds < 5, "caught up in " + catchUpSeconds + " s");
            assertEquals(-1L, MirrorMetricsTest.gaugeValue(destination.broker(0),
                    "kafka.server:type=ClusterMirror,name=ReplicationThrottledRate,mirror=m").orElseThrow());
        }
    }

    private static long logEnd(TestCluster cluster) {
        return cluster.broker(0).replicaManager().partition(TP).map(p -> p.log().logEndOffset()).orElse(-1L);
    }
}
