package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.replication.Partition;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A broker applies the truncation points of a mirror start's many replicas on several threads at once (decision
 * 96), and a crash never makes it apply one twice: it is killed while its replicas apply the start's points,
 * restarted, and once the start is done killed again and restarted cut off from the other brokers, so that nothing
 * can refill a log a second application would have cut. Every replica must come back with its records and the
 * latest point recorded next to its log.
 */
@Timeout(300)
class MirrorStartTruncationPointsCrashTest {
    private static final String TOPIC = "points";
    private static final int PARTITIONS = 24;
    private static final int CRASHED = 2;

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void replicasKilledWhileApplyingTheStartsPointsNeverApplyThemTwice() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(1),
                TestCluster.builder().brokers(3).withFaultProxies()
                        .brokerProperty("default.replication.factor", "3"))) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            Admin sourceAdmin = clusters.sourceAdmin();
            MirrorAdmin mirrors = clusters.mirrors();
            sourceAdmin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
            produce(source, "before", 20);

            MirrorSteps.startMirroring(mirrors, "m", source, TOPIC);
            // killed as soon as its first replica recorded the start's point: most of the others have not yet
            Waits.waitFor("broker " + CRASHED + " records a truncation point", () -> recordedPoints(destination),
                    n -> n > 0, Duration.ofSeconds(60));
            destination.killBroker(CRASHED);
            destination.startBroker(CRASHED);
            awaitMirroring(source, destination, mirrors);
            assertEveryReplicaRecordsTheLatestPoint(destination);

            produce(source, "after", 20);
            awaitMirroring(source, destination, mirrors);
            Map<TopicPartition, Long> ends = logEndOffsets(destination);
            assertTrue(ends.values().stream().allMatch(end -> end >= 40), "every replica holds the records: " + ends);

            // a restart that cannot fetch: a point applied again would leave its cut in plain sight
            destination.killBroker(CRASHED);
            for (int other : List.of(0, 1)) {
                destination.cutNetwork(CRASHED, other);
            }
            destination.startBroker(CRASHED);
            Waits.waitUntil("broker " + CRASHED + " hosts every partition again",
                    () -> partitions(destination).size() == PARTITIONS);
            assertEquals(ends, logEndOffsets(destination), "no replica cut its log again at the restart");
            assertEveryReplicaRecordsTheLatestPoint(destination);
            for (int other : List.of(0, 1)) {
                destination.healNetwork(CRASHED, other);
            }
            produce(source, "healed", 5);
            awaitMirroring(source, destination, mirrors);
        }
    }

    private static void awaitMirroring(TestCluster source, TestCluster destination, MirrorAdmin mirrors) {
        Waits.waitUntil("every partition MIRRORING", () -> mirrors.describeClusterMirrors(List.of("m")).get("m")
                .topics().get(TOPIC).partitions().stream().allMatch(p -> p.state().equals("MIRRORING")),
                Duration.ofSeconds(90));
        for (int p = 0; p < PARTITIONS; p++) {
            MirrorInvariants.awaitMirrored(source, destination, new TopicPartition(TOPIC, p));
        }
    }

    /** How many of broker {@link #CRASHED}'s replicas have a truncation point file next to their log. */
    private static long recordedPoints(TestCluster destination) {
        return partitions(destination).stream()
                .filter(p -> Files.exists(p.log().dir().toPath().resolve("truncation-point"))).count();
    }

    private static List<Partition> partitions(TestCluster destination) {
        List<Partition> out = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            destination.broker(CRASHED).replicaManager().partition(new TopicPartition(TOPIC, p)).ifPresent(out::add);
        }
        return out;
    }

    private static Map<TopicPartition, Long> logEndOffsets(TestCluster destination) {
        Map<TopicPartition, Long> out = new HashMap<>();
        partitions(destination).forEach(p -> out.put(p.topicPartition(), p.log().logEndOffset()));
        return out;
    }

    /** Every replica on every running broker has the partition's latest point recorded, in memory and on disk. */
    private static void assertEveryReplicaRecordsTheLatestPoint(TestCluster destination) throws Exception {
        MirrorImage mirrors = destination.broker(CRASHED).metadata().image().mirrors();
        for (int broker : destination.runningBrokerIds()) {
            for (int p = 0; p < PARTITIONS; p++) {
                TopicPartition tp = new TopicPartition(TOPIC, p);
                long latest = mirrors.partitions().get(tp).latestTruncationId();
                assertTrue(latest != 0L, tp + " has a truncation point");
                Optional<Partition> replica = destination.broker(broker).replicaManager().partition(tp);
                assertTrue(replica.isPresent(), "broker " + broker + " hosts " + tp);
                assertTrue(replica.get().appliedTruncationIds().contains(latest),
                        "broker " + broker + " applied the latest point of " + tp);
                Path file = replica.get().log().dir().toPath().resolve("truncation-point");
                assertEquals(Long.toString(latest), Files.readString(file).trim().split(" ")[0],
                        "broker " + broker + " recorded the latest point of " + tp + " on disk");
            }
        }
    }

    private static void produce(TestCluster cluster, String prefix, int perPartition) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("linger.ms", 5))) {
            for (int partition = 0; partition < PARTITIONS; partition++) {
                for (int i = 0; i < perPartition; i++) {
                    p.send(new ProducerRecord<>(TOPIC, partition, null,
                            (prefix + "-" + partition + "-" + i).getBytes(StandardCharsets.UTF_8)));
                }
            }
            p.flush();
        }
    }
}
