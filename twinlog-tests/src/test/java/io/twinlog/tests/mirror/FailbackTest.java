package io.twinlog.tests.mirror;

import io.twinlog.testkit.HighWatermarkSampler;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Failback with clean elections: A is mirrored to B; B fails over and takes writes; A, which also took writes
 * after B's last fetch, mirrors back from B. A asks B for the last epoch and offset B mirrored from it
 * (LastMirroredEpochs), cuts only what B never had, and continues with B's records: both logs end identical,
 * batch for batch, and A keeps the prefix it shared with B instead of copying it again.
 */
@Timeout(300)
class FailbackTest {
    static final String TOPIC = "accounts";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @Test
    void oldSourceKeepsTheSharedPrefixCutsItsOwnTailAndMirrorsBack() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start()) {
            TestCluster a = clusters.source();
            TestCluster b = clusters.destination();
            clusters.createSourceTopics(new NewTopic(TOPIC, 1, (short) 1));
            produce(a, "a", 100);
            clusters.mirror("from-a", TOPIC);
            Waits.waitUntil("B holds A's 100 records", () -> b.logEndOffset(TP) == 100);

            clusters.failOver("from-a", TOPIC); // failover to B
            produce(a, "lost", 20);   // A went on taking writes B never saw
            produce(b, "b", 30);      // B's own records after failover, offsets 101..130 (100: the producer-state barrier)
            var firstBatchOfA = ReplicaLogs.read(a.broker(0), TP).get(0);

            clusters.failBack("from-b", TOPIC);
            Waits.waitUntil("A mirrors B's records after the shared prefix", () -> a.logEndOffset(TP) == 131
                    && MirroredClusters.partition(clusters.mirrorsOnSource(), "from-b", TP).state()
                    .equals("MIRRORING"));
            assertEquals(ReplicaLogs.read(b.broker(0), TP), MirrorInvariants.awaitMirrored(b, a, TP),
                    "A's log equals B's batch for batch");
            assertEquals(firstBatchOfA, ReplicaLogs.read(a.broker(0), TP).get(0), "the shared prefix was kept");
            List<String> values = readAll(a);
            assertEquals(130, values.size());
            assertTrue(values.stream().noneMatch(v -> v.startsWith("lost")), "A's own tail is cut");
            assertEquals("b-29", values.get(129));

            // the brokers' mirror metrics: B's failover; on A the failback, its one cut with the 20 records
            // quarantined first, and the shared prefix found identical to B's
            assertEquals(1, count(b, "Failovers", "from-a"));
            assertEquals(1, count(a, "Failbacks", "from-b"));
            assertEquals(1, count(a, "Truncations", "from-b"));
            assertEquals(20, count(a, "RecordsQuarantined", "from-b"));
            assertTrue(count(a, "ReconciliationsMatched", "from-b") >= 1);
            assertEquals(0, count(a, "ReconciliationsRepaired", "from-b"));
        }
    }

    private static long count(TestCluster cluster, String meter, String mirror) {
        return MirrorMetricsTest.meter(cluster.broker(0),
                "kafka.server:type=ClusterMirror,name=" + meter + ",mirror=" + mirror).count();
    }

    @Test
    void everyReplicaOfAReplicatedOldSourceConvergesOnTheFailedBackLog() throws Exception {
        try (MirroredClusters clusters = threeBrokerSource()) {
            TestCluster a = clusters.source();
            TestCluster b = clusters.destination();
            clusters.createSourceTopics(new NewTopic(TOPIC, 1, (short) 3));
            produce(a, "a", 100);
            clusters.mirror("from-a", TOPIC);
            Waits.waitUntil("B holds A's 100 records", () -> b.logEndOffset(TP) == 100);
            clusters.failOver("from-a", TOPIC);
            produce(a, "lost", 20);
            ReplicaLogs.awaitIdentical(a, TP, List.of(0, 1, 2)); // every replica of A holds the tail to be cut
            produce(b, "b", 30);

            try (HighWatermarkSampler highWatermark = HighWatermarkSampler.start(a, TP)) {
                clusters.failBack("from-b", TOPIC);
                assertEquals(ReplicaLogs.read(b.broker(0), TP), MirrorInvariants.awaitMirrored(b, a, TP),
                        "every replica of A ends equal to B, the cut tail gone from the followers too");
                highWatermark.assertNoViolation();
            }
        }
    }

    /**
     * The source has no record of what it mirrored from A (its mirror was deleted; Apache Kafka never has one): A's
     * leader cuts its whole log and mirrors everything again. Its followers, whose last epoch is now above anything
     * the leader holds, must cut theirs too instead of keeping the old tail, and the high watermark must never count
     * their old records as replicated.
     */
    @Test
    void everyReplicaConvergesWhenTheLeaderCutsItsWholeLog() throws Exception {
        try (MirroredClusters clusters = threeBrokerSource()) {
            TestCluster a = clusters.source();
            TestCluster b = clusters.destination();
            clusters.createSourceTopics(new NewTopic(TOPIC, 1, (short) 3));
            produce(a, "a", 50);
            clusters.mirror("from-a", TOPIC);
            Waits.waitUntil("B holds A's 50 records", () -> b.logEndOffset(TP) == 50);
            clusters.failOver("from-a", TOPIC);
            clusters.mirrors().deleteClusterMirror("from-a"); // B forgets what it mirrored from A
            produce(a, "lost", 20);
            ReplicaLogs.awaitIdentical(a, TP, List.of(0, 1, 2));
            produce(b, "b", 30);

            try (HighWatermarkSampler highWatermark = HighWatermarkSampler.start(a, TP)) {
                clusters.failBack("from-b", TOPIC);
                List<ReplicaLogs.Batch> converged = MirrorInvariants.awaitMirrored(b, a, TP);
                assertEquals(81L, converged.get(converged.size() - 1).lastOffset() + 1, "50 + barrier + 30");
                assertTrue(converged.stream().flatMap(batch -> batch.values().stream())
                        .noneMatch(v -> v != null && v.startsWith("lost")), "A's own tail is gone from every replica");
                highWatermark.assertNoViolation();
            }
        }
    }

    /** A three-broker source A and a one-broker destination B. */
    private static MirroredClusters threeBrokerSource() throws Exception {
        return MirroredClusters.start(TestCluster.builder().brokers(3), TestCluster.builder().brokers(1));
    }

    /** {@code count} records {@code prefix-i} to partition 0 of {@value #TOPIC}. */
    static void produce(TestCluster cluster, String prefix, int count) throws Exception {
        cluster.produce(TOPIC, 0, count, prefix + "-");
    }

    private static List<String> readAll(TestCluster cluster) {
        return readAll(cluster, cluster.logEndOffset(TP));
    }

    /** The values of partition 0 of {@value #TOPIC} up to {@code end}, read with a plain consumer. */
    static List<String> readAll(TestCluster cluster, long end) {
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = cluster.consumer(Map.of())) {
            c.assign(List.of(TP));
            Waits.waitUntil("read to the end", () -> {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
                    out.add(new String(r.value(), StandardCharsets.UTF_8));
                }
                return c.position(TP) >= end;
            });
        }
        return out;
    }
}
