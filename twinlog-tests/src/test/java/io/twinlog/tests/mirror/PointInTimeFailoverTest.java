package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorAdmin.PointInTimeResult;
import io.twinlog.clients.mirror.MirrorAdmin.PointInTimeStopResult;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.Quarantined;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A failover to a point in time (issue 30 points 2 and 6) on two 3-broker clusters, every replica read from its
 * broker's storage: each partition keeps exactly its batches at or before the time on every replica and the
 * quarantine holds the rest; a transaction committed before the time is visible to read_committed readers and one
 * whose commit marker came after it not at all; a partition that does not reach the time stops at the timeout, or
 * at once when the source is down, at what it has, and says so; a leader killed during the failover changes
 * nothing in the cut.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PointInTimeFailoverTest {
    private static final String MIRROR = "dr";
    /** Timestamps of the written records: an hour ago, one millisecond apart. */
    private static final long BASE = System.currentTimeMillis() - 3_600_000L;

    private static MirroredClusters clusters;

    @BeforeAll
    static void start() throws Exception {
        // the source counts as down after 5 s without an answer (mirror.state.timeout.ms)
        clusters = MirroredClusters.start(TestCluster.builder().brokers(3),
                TestCluster.builder().brokers(3).brokerProperty("mirror.state.timeout.ms", "5000")
                        .brokerProperty("default.replication.factor", "3"));
        clusters.createSourceTopics(new NewTopic("orders", 2, (short) 3), new NewTopic("payments", 1, (short) 3),
                new NewTopic("late", 1, (short) 3), new NewTopic("kill", 1, (short) 3),
                new NewTopic("offline", 1, (short) 3));
        clusters.mirror(MIRROR, "orders", "payments", "late", "kill", "offline");
    }

    @AfterAll
    static void stop() {
        if (clusters != null) {
            clusters.close();
        }
    }

    @Test
    @Order(1)
    void keepsExactlyTheBatchesAtOrBeforeTheTimeOnEveryReplicaAndQuarantinesTheRest() throws Exception {
        List<TopicPartition> partitions = List.of(new TopicPartition("orders", 0), new TopicPartition("orders", 1));
        for (TopicPartition tp : partitions) {
            writeOneBatchEach(tp, 10);
            clusters.awaitMirrored(tp);
        }
        long at = BASE + 5; // records 0..5 are at or before it

        PointInTimeStopResult result = clusters.mirrors().stopMirrorTopicsAt(MIRROR, List.of("orders"), List.of(),
                at, 10_000);

        assertEquals(Map.of(), result.errors());
        assertEquals(List.of(new PointInTimeResult("orders", 0, "REACHED", 6, BASE + 5, 6, 10, 4),
                new PointInTimeResult("orders", 1, "REACHED", 6, BASE + 5, 6, 10, 4)), result.partitions());
        for (TopicPartition tp : partitions) {
            List<ReplicaLogs.StoredRecord> kept = dataRecords(ReplicaLogs.awaitIdentical(clusters.destination(), tp,
                    List.of(0, 1, 2)));
            assertEquals(values(tp, 0, 6), kept.stream().map(ReplicaLogs.StoredRecord::value).toList(), tp + " kept");
            assertTrue(kept.stream().allMatch(r -> r.timestamp() <= at), tp + ": a record after the time was kept");
        }
        Set<String> quarantined = new TreeSet<>(values(partitions.get(0), 6, 10));
        quarantined.addAll(values(partitions.get(1), 6, 10));
        assertEquals(quarantined, quarantinedValues("orders-", quarantined.size()));
    }

    @Test
    @Order(2)
    void aTransactionCommittedBeforeTheTimeIsVisibleAndOneCommittedAfterItIsNot() throws Exception {
        TopicPartition tp = new TopicPartition("payments", 0);
        long before = System.currentTimeMillis();
        transaction("before", tp, before);
        long at = System.currentTimeMillis(); // after the first commit marker was written
        Waits.waitUntil("the clock to pass the time", () -> System.currentTimeMillis() > at + 1);
        // its records are before the time, its commit marker after it: the cut leaves it open, and it is aborted
        transaction("after", tp, at - 1_000);
        clusters.awaitMirrored(tp);

        PointInTimeStopResult result = clusters.mirrors().stopMirrorTopicsAt(MIRROR, List.of("payments"),
                List.of(), at, 10_000);

        assertEquals(Map.of(), result.errors());
        assertEquals("REACHED", result.partitions().get(0).reach());
        List<ReplicaLogs.Batch> log = ReplicaLogs.awaitIdentical(clusters.destination(), tp, List.of(0, 1, 2));
        assertEquals(List.of("before-0", "before-1", "before-2", "after-0", "after-1", "after-2"),
                dataRecords(log).stream().map(ReplicaLogs.StoredRecord::value).toList());
        try (KafkaConsumer<byte[], byte[]> c = clusters.destination().consumer(Map.of("isolation.level",
                "read_committed"))) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = clusters.destinationAdmin().listOffsets(Map.of(tp, OffsetSpec.latest())).all().get().get(tp)
                    .offset();
            List<String> read = new ArrayList<>();
            Waits.waitUntil("a read_committed reader at the end of " + tp, () -> {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
                    read.add(new String(r.value(), StandardCharsets.UTF_8));
                }
                return c.position(tp) >= end;
            });
            assertEquals(List.of("before-0", "before-1", "before-2"), read);
        }
    }

    @Test
    @Order(3)
    void aPartitionThatDoesNotReachTheTimeStopsAtTheTimeoutWithWhatItHasAndSaysSo() throws Exception {
        TopicPartition tp = new TopicPartition("late", 0);
        writeOneBatchEach(tp, 3);
        clusters.awaitMirrored(tp);
        long at = System.currentTimeMillis() + 600_000; // nothing is that new yet

        long started = System.currentTimeMillis();
        PointInTimeStopResult result = clusters.mirrors().stopMirrorTopicsAt(MIRROR, List.of("late"), List.of(), at,
                1_500);

        assertEquals(Map.of(), result.errors());
        assertEquals(List.of(new PointInTimeResult("late", 0, "TIMED_OUT", 3, BASE + 2, -1, -1, 0)),
                result.partitions());
        assertTrue(System.currentTimeMillis() - started >= 1_500, "stopped before the timeout");
        assertEquals(values(tp, 0, 3), dataRecords(ReplicaLogs.awaitIdentical(clusters.destination(), tp,
                List.of(0, 1, 2))).stream().map(ReplicaLogs.StoredRecord::value).toList());
    }

    @Test
    @Order(4)
    void aLeaderKilledDuringTheFailoverLeavesTheSameCut() throws Exception {
        TopicPartition tp = new TopicPartition("kill", 0);
        writeOneBatchEach(tp, 10);
        clusters.awaitMirrored(tp);
        long at = BASE + 3;
        int leader = clusters.destinationAdmin().describeTopics(List.of("kill")).allTopicNames().get().get("kill")
                .partitions().get(0).leader().id();
        int other = (leader + 1) % 3;
        try (MirrorAdmin viaOther = MirrorAdmin.create(clusters.destination().broker(other).bootstrapServers(),
                MirroredClusters.TIMEOUT)) {
            CompletableFuture<PointInTimeStopResult> stop = CompletableFuture.supplyAsync(() -> {
                try {
                    return viaOther.stopMirrorTopicsAt(MIRROR, List.of("kill"), List.of(), at, 10_000);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            clusters.destination().killBroker(leader);
            stop.get(2, TimeUnit.MINUTES); // with the leader gone the answer may say "in progress": waited below
            clusters.destination().startBroker(leader);
            clusters.awaitState(MIRROR, "kill", "STOPPED");
        }
        List<ReplicaLogs.StoredRecord> kept = dataRecords(ReplicaLogs.awaitIdentical(clusters.destination(), tp,
                List.of(0, 1, 2)));
        assertEquals(values(tp, 0, 4), kept.stream().map(ReplicaLogs.StoredRecord::value).toList());
        // copied once, or again by the new leader if the old one died before it recorded its cut: never lost
        assertEquals(new TreeSet<>(values(tp, 4, 10)), quarantinedValues("kill-", 6));
    }

    @Test
    @Order(5)
    void withTheSourceDownAPartitionStopsAtWhatItHasAndSaysSo() throws Exception {
        TopicPartition tp = new TopicPartition("offline", 0);
        writeOneBatchEach(tp, 4);
        clusters.awaitMirrored(tp);
        for (int id : List.copyOf(clusters.source().runningBrokerIds())) {
            clusters.source().stopBroker(id);
        }
        long at = System.currentTimeMillis() + 600_000;

        PointInTimeStopResult result = clusters.mirrors().stopMirrorTopicsAt(MIRROR, List.of("offline"), List.of(),
                at, 60_000);

        assertEquals(Map.of(), result.errors());
        assertEquals(List.of(new PointInTimeResult("offline", 0, "SOURCE_UNREACHABLE", 4, BASE + 3, -1, -1, 0)),
                result.partitions());
        assertEquals(values(tp, 0, 4), dataRecords(ReplicaLogs.awaitIdentical(clusters.destination(), tp,
                List.of(0, 1, 2))).stream().map(ReplicaLogs.StoredRecord::value).toList());
    }

    /** {@code count} records to {@code tp} on the source, one batch each, the i-th at {@code BASE + i}. */
    private static void writeOneBatchEach(TopicPartition tp, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = clusters.source().producer(Map.of("linger.ms", 0, "acks", "all"))) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(tp.topic(), tp.partition(), BASE + i, null, bytes(value(tp, i)))).get();
            }
        }
    }

    /** A committed transaction of three records to {@code tp}, stamped {@code timestamp}, its markers written. */
    private static void transaction(String id, TopicPartition tp, long timestamp) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = clusters.source().producer(Map.of("transactional.id", id))) {
            p.initTransactions();
            p.beginTransaction();
            for (int i = 0; i < 3; i++) {
                p.send(new ProducerRecord<>(tp.topic(), tp.partition(), timestamp, null, bytes(id + "-" + i)));
            }
            p.commitTransaction();
        }
        Waits.waitFor("transaction " + id + " completed", () -> clusters.sourceAdmin().describeTransactions(
                List.of(id)).all().get().get(id).state(), s -> s == TransactionState.COMPLETE_COMMIT);
    }

    private static List<ReplicaLogs.StoredRecord> dataRecords(List<ReplicaLogs.Batch> log) {
        return log.stream().filter(b -> !b.control()).flatMap(b -> b.records().stream()).toList();
    }

    /** The values of the quarantine's records starting with {@code prefix}, once there are {@code count}. */
    private static Set<String> quarantinedValues(String prefix, int count) {
        return Waits.waitFor(count + " records of " + prefix + " in the quarantine", () -> {
            Set<String> out = new TreeSet<>();
            try (KafkaConsumer<byte[], byte[]> c = clusters.destination().consumer(Map.of())) {
                TopicPartition q = new TopicPartition(Quarantined.TOPIC, 0);
                c.assign(List.of(q));
                c.seekToBeginning(List.of(q));
                long end = c.endOffsets(List.of(q)).get(q);
                while (c.position(q) < end) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                        String v = new String(r.value(), StandardCharsets.UTF_8);
                        if (v.startsWith(prefix)) {
                            out.add(v);
                        }
                    }
                }
            }
            return out;
        }, out -> out.size() >= count);
    }

    private static String value(TopicPartition tp, int i) {
        return tp.topic() + "-" + tp.partition() + "-v" + i;
    }

    private static List<String> values(TopicPartition tp, int from, int to) {
        List<String> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            out.add(value(tp, i));
        }
        return out;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
