package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.testkit.FaultProxy;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The source topic's lifecycle, as KIP-1279's {@code test_topic_deletion} and {@code test_failed_retry} expect:
 * a source topic deleted fails its mirror partitions for good with the reason within {@code mirror.state.timeout.ms};
 * created again under the same name (a new topic ID) it is never appended onto the old mirror log; a source none of
 * whose brokers answers fails the partitions within the bound, the same way at every look, with an unknown lag, and
 * they mirror again by themselves when it returns.
 */
@Timeout(300)
class SourceTopicLifecycleTest {
    private static final String TOPIC = "ledger";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final String MIRROR = "dr";
    private static final long STATE_TIMEOUT_MS = 6_000;
    /** The pass that writes the state (every 0.5 s) and a fetch round on a shared, loaded machine. */
    private static final long SLACK_MS = 3_000;

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aSourceTopicDeletedAndCreatedAgainFailsForGoodAndNothingOfTheNewTopicIsAppended() throws Exception {
        try (TestCluster source = TestCluster.builder().brokers(1).build().start();
             TestCluster destination = destination();
             Admin sourceAdmin = source.admin();
             MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
            mirror100Records(source, destination, sourceAdmin, mirrors, (short) 1);
            Uuid mirroredId = topicId(sourceAdmin);
            List<ReplicaLogs.Batch> mirrored = ReplicaLogs.read(destination.broker(0), TP);

            sourceAdmin.deleteTopics(List.of(TOPIC)).all().get();
            long deletedAt = System.nanoTime();
            MirrorAdmin.PartitionDescription deleted = Waits.waitFor("FAILED: the source topic was deleted",
                    () -> partition(mirrors), p -> p.state().equals("FAILED") && p.retryAttempt() < 0,
                    Duration.ofMillis(STATE_TIMEOUT_MS + SLACK_MS));
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - deletedAt);
            assertTrue(deleted.lastError().contains("source topic " + TOPIC + " was deleted (topic ID " + mirroredId
                    + ")"), deleted.lastError());
            assertEquals(-1, deleted.lag(), "the source's end is not known: no lag, not 0");
            assertTrue(tookMs <= STATE_TIMEOUT_MS + SLACK_MS, "FAILED " + tookMs + " ms after the deletion");

            Waits.waitUntil("the topic created again on the source", () -> {
                try {
                    // another topic under the name: more partitions, its own configs
                    sourceAdmin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1)
                            .configs(Map.of("retention.ms", "3600000")))).all().get();
                    return true;
                } catch (Exception e) {
                    return false; // still being deleted
                }
            });
            Uuid newId = topicId(sourceAdmin);
            assertNotEquals(mirroredId, newId);
            produce(source, 0, 150);
            MirrorAdmin.PartitionDescription recreated = Waits.waitFor("FAILED naming both topic IDs",
                    () -> partition(mirrors), p -> p.state().equals("FAILED") && p.lastError().contains(newId.toString()));
            assertTrue(recreated.lastError().contains(mirroredId.toString()) && recreated.retryAttempt() < 0
                    && recreated.lastError().contains("--stop"), recreated.lastError());
            assertEquals(mirrored, ReplicaLogs.read(destination.broker(0), TP),
                    "nothing of the new topic appended onto the old mirror log");
            assertEquals("FAILED", partition(mirrors).state(), "still FAILED: not retried");
            // the metadata sync (every second here) follows neither its partitions nor its configs
            MetadataImage image = destination.broker(0).metadata().image();
            assertEquals(1, image.topic(TOPIC).orElseThrow().partitions().size(), "the new topic's partition count");
            assertNull(image.topicConfig(TOPIC).get("retention.ms"), "the new topic's configs");

            // the operator keeps the topic: a failover works with the source topic gone
            assertEquals(Map.of(), mirrors.stopMirrorTopics(MIRROR, List.of(TOPIC), List.of()));
            Waits.waitUntil("failed over", () -> partition(mirrors).state().equals("STOPPED"));
            List<ReplicaLogs.Batch> failedOver = ReplicaLogs.read(destination.broker(0), TP);
            assertEquals(mirrored, failedOver.subList(0, mirrored.size()), "the log as mirrored, then the barrier");
        }
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void everySourceBrokerDownFailsWithinTheBoundWithAnUnknownLagThenMirrorsAgainByItself() throws Exception {
        try (TestCluster source = TestCluster.builder().brokers(2).build().start();
             TestCluster destination = destination();
             Admin sourceAdmin = source.admin();
             MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
            mirror100Records(source, destination, sourceAdmin, mirrors, (short) 2);
            Waits.waitUntil("MIRRORING, caught up", () -> partition(mirrors).state().equals("MIRRORING")
                    && partition(mirrors).lag() == 0);

            source.stopBroker(0);
            source.stopBroker(1);
            long downAt = System.nanoTime();
            MirrorAdmin.PartitionDescription failed = Waits.waitFor("FAILED: the source cluster is unreachable",
                    () -> partition(mirrors), p -> p.state().equals("FAILED")
                            && p.lastError().startsWith("The source cluster is unreachable"),
                    Duration.ofMillis(STATE_TIMEOUT_MS + SLACK_MS));
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - downAt);
            assertTrue(tookMs <= STATE_TIMEOUT_MS + SLACK_MS, "FAILED " + tookMs + " ms after the source went down");
            assertTrue(failed.retryAttempt() > 0, "retriable: " + failed);
            // the same at every look while the source is away: FAILED, the same reason, no lag
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * STATE_TIMEOUT_MS);
            while (System.nanoTime() < until) { // back to back: each describe asks every destination broker
                MirrorAdmin.PartitionDescription p = partition(mirrors);
                assertEquals("FAILED", p.state(), "never MIRRORING while the source is away: " + p);
                assertEquals(failed.lastError(), p.lastError());
                assertEquals(-1, p.lag(), "the source's end is unknown: " + p);
            }

            source.startBroker(0); // same ports: the mirror's bootstrap address is valid again
            source.startBroker(1);
            produce(source, 100, 50);
            Waits.waitUntil("MIRRORING again by itself, caught up", () -> partition(mirrors).state()
                    .equals("MIRRORING") && end(destination) == 150, Duration.ofSeconds(90));
            MirrorInvariants.awaitMirrored(source, destination, TP);
            Waits.waitUntil("describe's lag 0 once caught up", () -> partition(mirrors).lag() == 0);
        }
    }

    /**
     * A source behind a network that drops packets (the proxy in front of its MIRROR listener blackholed): fetches
     * go unanswered until their 30-second timeout. Describe stops showing the last figure (lag 0 for a caught-up
     * partition) within a bound: the fetch unanswered for 10 s, then the next progress write (at most 5 s); and once
     * the network is back the partition mirrors again by itself and shows lag 0 when caught up (decision 80).
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aSourceBehindANetworkThatDropsPacketsShowsAnUnknownLagNotAStaleZero() throws Exception {
        try (FaultProxy network = new FaultProxy("source-mirror-listener", "127.0.0.1", 1);
             TestCluster source = MirrorSteps.startSourceBehind(network, TestCluster.builder());
             // a state timeout longer than the test's bound: the lag must be unknown before the source is judged
             // unreachable (FAILED, which shows it unknown too)
             TestCluster destination = TestCluster.builder().brokers(1)
                     .brokerProperty("mirror.state.timeout.ms", "120000").build().start();
             Admin sourceAdmin = source.admin();
             MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
            sourceAdmin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            produce(source, 0, 100);
            mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", network.address()));
            assertEquals(Map.of(), mirrors.startMirrorTopics(MIRROR, List.of(TOPIC), List.of(), List.of()));
            Waits.waitUntil("MIRRORING, caught up", () -> partition(mirrors).state().equals("MIRRORING")
                    && partition(mirrors).lag() == 0 && end(destination) == 100);

            network.blackhole();
            long cutAt = System.nanoTime();
            MirrorAdmin.PartitionDescription unknown = Waits.waitFor("the lag unknown, not the last figure",
                    () -> partition(mirrors), p -> p.lag() == -1, Duration.ofSeconds(25));
            assertEquals("MIRRORING", unknown.state(), "not yet judged unreachable: " + unknown);
            String lagGauge = "kafka.server:type=ClusterMirrorPartition,name=LagRecords,mirror=" + MIRROR + ",topic="
                    + TOPIC + ",partition=0";
            assertEquals(Optional.of(-1L), MirrorMetricsTest.gaugeValue(destination.broker(0), lagGauge),
                    "the lag gauge says unknown as describe does");
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cutAt);
            System.out.printf("lag unknown %d ms after the network began dropping packets%n", tookMs);
            assertTrue(tookMs < 25_000, "lag unknown after " + tookMs + " ms");

            network.heal();
            produce(source, 100, 50);
            Waits.waitUntil("MIRRORING again by itself, caught up", () -> partition(mirrors).state()
                    .equals("MIRRORING") && end(destination) == 150, Duration.ofSeconds(90));
            Waits.waitUntil("describe's lag 0 once caught up", () -> partition(mirrors).lag() == 0);
            Waits.waitUntil("and the lag gauge's", () -> MirrorMetricsTest.gaugeValue(destination.broker(0), lagGauge)
                    .equals(Optional.of(0L)));
        }
    }

    private static TestCluster destination() throws Exception {
        return TestCluster.builder().brokers(1)
                .brokerProperty("mirror.state.timeout.ms", Long.toString(STATE_TIMEOUT_MS)).build().start();
    }

    /** The topic created on the source with 100 records, mirrored to the destination. */
    private static void mirror100Records(TestCluster source, TestCluster destination, Admin sourceAdmin,
                                         MirrorAdmin mirrors, short replicationFactor) throws Exception {
        sourceAdmin.createTopics(List.of(new NewTopic(TOPIC, 1, replicationFactor))).all().get();
        produce(source, 0, 100);
        mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", source.bootstrapServers(),
                "mirror.metadata.refresh.interval.ms", "1000"));
        assertEquals(Map.of(), mirrors.startMirrorTopics(MIRROR, List.of(TOPIC), List.of(), List.of()));
        MirrorInvariants.awaitMirrored(source, destination, TP);
    }

    private static Uuid topicId(Admin admin) throws Exception {
        return admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC).topicId();
    }

    private static long end(TestCluster destination) {
        return destination.broker(0).logStore().log(TP).map(l -> l.logEndOffset()).orElse(-1L);
    }

    private static MirrorAdmin.PartitionDescription partition(MirrorAdmin mirrors) throws Exception {
        return mirrors.describeClusterMirrors(List.of(MIRROR)).get(MIRROR).topics().get(TOPIC).partitions().get(0);
    }

    private static void produce(TestCluster cluster, int from, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("linger.ms", 5))) {
            for (int i = from; i < from + count; i++) {
                p.send(new ProducerRecord<>(TOPIC, 0, null, ("r" + i).getBytes(StandardCharsets.UTF_8))).get();
            }
        }
    }
}
