package io.twinlog.tests.replication;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;

import static io.twinlog.tests.replication.Replication.assertAckedRecordsReadable;
import static io.twinlog.tests.replication.Replication.awaitIsr;
import static io.twinlog.tests.replication.Replication.awaitLeaderIn;
import static io.twinlog.tests.replication.Replication.createTopic;
import static io.twinlog.tests.replication.Replication.describe;
import static io.twinlog.tests.replication.Replication.ids;
import static io.twinlog.tests.replication.Replication.leaderId;
import static io.twinlog.tests.replication.Replication.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A log dir that fails for real (deleted, a regular file in its place, so the next segment roll or checkpoint
 * there gets an I/O error) takes its partitions offline on that broker: the controller moves their leadership to
 * another in-sync replica and a producer with default settings (acks=all, idempotent) goes on without losing or
 * duplicating a record, while the broker keeps serving the partitions of its other log dir. DescribeLogDirs reports
 * the dir's error and Metadata lists the offline replica. A broker whose every log dir failed shuts down.
 */
@Timeout(180)
class LogDirFailureTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** Every segment older than this rolls at the next append: a produce then touches the directory. */
    private static final Map<String, String> ROLL_OFTEN = Map.of("segment.ms", "100");

    @Test
    void failedDirGoesOfflineAndTheBrokerServesItsOtherDir() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).logDirs(0, 2).build().start();
             Admin admin = cluster.admin()) {
            String topic = "two-dirs";
            Map<Integer, List<Integer>> ledByZero = new HashMap<>();
            for (int p = 0; p < 4; p++) {
                ledByZero.put(p, List.of(0, 1, 2));
            }
            createTopic(admin, topic, ledByZero, ROLL_OFTEN);
            Map<String, TopicPartition> oneInEachDir = new TreeMap<>();
            for (int p = 0; p < 4; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
                oneInEachDir.put(cluster.broker(0).logStore().log(tp).orElseThrow().parentDir(), tp);
            }
            String failedDir = cluster.logDirs(0).get(1).getAbsolutePath();
            String healthyDir = cluster.logDirs(0).get(0).getAbsolutePath();
            assertEquals(Set.of(failedDir, healthyDir), oneInEachDir.keySet(), "broker 0 uses both log dirs");
            TopicPartition inFailed = oneInEachDir.get(failedDir);
            TopicPartition inHealthy = oneInEachDir.get(healthyDir);

            NavigableMap<Long, String> ackedInFailed = new TreeMap<>();
            NavigableMap<Long, String> ackedInHealthy = new TreeMap<>();
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of())) {
                produce(producer, inFailed, "before", 20, ackedInFailed);
                produce(producer, inHealthy, "before", 20, ackedInHealthy);
                long failedAt = System.nanoTime();
                cluster.failLogDir(new File(failedDir));
                produce(producer, inFailed, "after", 50, ackedInFailed);
                System.out.printf("log dir failed; 50 acks=all records to %s took %d ms across the leader move%n",
                        inFailed, (System.nanoTime() - failedAt) / 1_000_000);
                produce(producer, inHealthy, "after", 50, ackedInHealthy);
            }

            int newLeader = awaitLeaderIn(admin, inFailed, Set.of(1, 2), TIMEOUT);
            awaitIsr(admin, inFailed, Set.of(1, 2), TIMEOUT);
            assertEquals(0, leaderId(describe(admin, inHealthy)), "broker 0 still leads " + inHealthy);
            assertEquals(Set.of(0, 1, 2), ids(describe(admin, inHealthy).isr()));
            assertTrue(cluster.broker(0).isStarted() && !cluster.broker(0).isShutDown(), "broker 0 keeps running");
            assertThrows(KafkaStorageException.class, () -> cluster.broker(0).replicaManager().partitionOrThrow(inFailed));
            assertAckedRecordsReadable(cluster, inFailed, ackedInFailed);
            assertAckedRecordsReadable(cluster, inHealthy, ackedInHealthy);
            assertEquals(70, ackedInFailed.size());
            System.out.printf("%s now led by broker %d; %s still led by broker 0%n", inFailed, newLeader, inHealthy);

            Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(0)).allDescriptions().get().get(0);
            assertInstanceOf(KafkaStorageException.class, dirs.get(failedDir).error(), "error of " + failedDir);
            assertNull(dirs.get(healthyDir).error());
            assertTrue(dirs.get(healthyDir).replicaInfos().containsKey(inHealthy));

            try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of())) {
                Map<Integer, List<Integer>> offline = Waits.waitFor("Metadata to list broker 0's replica of "
                        + inFailed + " as offline", () -> offlineReplicas(consumer, topic),
                        o -> o.get(inFailed.partition()).equals(List.of(0)), TIMEOUT);
                assertEquals(List.of(), offline.get(inHealthy.partition()));
            }
        }
    }

    @Test
    void brokerWhoseEveryLogDirFailedShutsDown() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start(); Admin admin = cluster.admin()) {
            TopicPartition tp = new TopicPartition("one-dir", 0);
            createTopic(admin, tp.topic(), Map.of(0, List.of(2, 0, 1)), ROLL_OFTEN);
            awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
            NavigableMap<Long, String> acked = new TreeMap<>();
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of())) {
                produce(producer, tp, "before", 20, acked);
                cluster.failLogDir(cluster.logDir(2));
                produce(producer, tp, "after", 20, acked);
            }
            Waits.waitUntil("broker 2 to shut itself down", () -> cluster.broker(2).isShutDown(), TIMEOUT);
            assertTrue(cluster.broker(2).stoppedOnFatalError());
            awaitLeaderIn(admin, tp, Set.of(0, 1), TIMEOUT);
            assertAckedRecordsReadable(cluster, tp, acked);
        }
    }

    private static void produce(KafkaProducer<byte[], byte[]> producer, TopicPartition tp, String prefix, int count,
                                NavigableMap<Long, String> acked) throws Exception {
        for (int i = 0; i < count; i++) {
            String value = prefix + "-" + i;
            acked.put(send(producer, tp, value).offset(), value);
        }
    }

    /** Partition -> offline replicas, as a kafka-clients consumer reads them from Metadata. */
    private static Map<Integer, List<Integer>> offlineReplicas(KafkaConsumer<byte[], byte[]> consumer, String topic) {
        Map<Integer, List<Integer>> out = new TreeMap<>();
        for (PartitionInfo p : consumer.partitionsFor(topic)) {
            out.put(p.partition(), List.of(p.offlineReplicas()).stream().map(Node::id).toList());
        }
        return out;
    }
}
