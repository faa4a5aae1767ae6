package io.twinlog.tests.mirror;

import io.twinlog.cli.MirrorsCommand;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorAdmin.PointInTimeResult;
import io.twinlog.clients.mirror.MirrorAdmin.PointInTimeStopResult;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.Quarantined;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
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
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
                new NewTopic("offline", 1, (short) 3), new NewTopic("preview", 2, (short) 3),
                new NewTopic("common", 2, (short) 3), new NewTopic("again", 1, (short) 3));
        clusters.mirror(MIRROR, "orders", "payments", "late", "kill", "offline", "preview", "common", "again");
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
        List<TopicPartition> partitions = tenBatchesEachMirrored("orders");
        long at = BASE + 5; // records 0..5 are at or before it

        PointInTimeStopResult result = clusters.mirrors().stopMirrorTopicsAt(MIRROR, List.of("orders"), List.of(),
                at, 10_000);

        assertEquals(Map.of(), result.errors());
        assertEquals(List.of(new PointInTimeResult("orders", 0, "REACHED", 6, BASE + 5, 6, 10, -1),
                new PointInTimeResult("orders", 1, "REACHED", 6, BASE + 5, 6, 10, -1)), result.partitions());
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
    void aSecondStopCannotChangeOrDropTheTimeWhileAPartitionWaitsForIt() throws Exception {
        TopicPartition tp = new TopicPartition("again", 0);
        writeOneBatchEach(tp, 3);
        clusters.awaitMirrored(tp);
        long at = System.currentTimeMillis() + 600_000; // not reached: the partition waits out the timeout
        String node = "/mirrors/" + MIRROR + "/topics/again";
        try (MirrorAdmin other = MirrorAdmin.create(clusters.destination().bootstrapServers(),
                MirroredClusters.TIMEOUT);
             CuratorFramework zk = CuratorFrameworkFactory.newClient(clusters.destination().zookeeperConnect(),
                     new RetryOneTime(100))) {
            zk.start();
            CompletableFuture<PointInTimeStopResult> first = CompletableFuture.supplyAsync(() -> {
                try {
                    return other.stopMirrorTopicsAt(MIRROR, List.of("again"), List.of(), at, 6_000);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            Waits.waitUntil("the first stop's time written", () -> new String(zk.getData().forPath(node),
                    StandardCharsets.UTF_8).contains("\"stopAtMs\":" + at));

            PointInTimeStopResult another = clusters.mirrors().stopMirrorTopicsAt(MIRROR, List.of("again"),
                    List.of(), at - 60_000, 1_000);
            String refused = another.errors().get("again").getMessage();
            assertTrue(refused.startsWith("MIRROR_TOPIC_BEING_STOPPED") && refused.contains("--at " + at), refused);
            String plain = clusters.mirrors().stopMirrorTopics(MIRROR, List.of("again"), List.of()).get("again")
                    .getMessage();
            assertTrue(plain.contains("a stop without a time"), plain);

            assertEquals(List.of(new PointInTimeResult("again", 0, "TIMED_OUT", 3, BASE + 2, -1, -1, 0)),
                    first.get(2, TimeUnit.MINUTES).partitions());
            assertTrue(new String(zk.getData().forPath(node), StandardCharsets.UTF_8).contains("\"stopAtMs\":" + at),
                    "the time in force stayed");
        }
    }

    @Test
    @Order(6)
    void theDryRunSaysWhatTheFailoverThenDoesAndChangesNothing() throws Exception {
        List<TopicPartition> partitions = tenBatchesEachMirrored("preview");
        String at = Long.toString(BASE + 5);

        String dryRun = cli("--stop", "--dry-run", "--mirror", MIRROR, "--topic", "preview", "--at", at);
        String kept = "up to offset 6 (newest kept batch " + Instant.ofEpochMilli(BASE + 5) + ")";
        for (TopicPartition tp : partitions) {
            assertTrue(dryRun.contains("  " + tp + ": would keep " + kept + ", quarantine offsets [6,10); "
                    + "RPO "), dryRun);
        }
        assertEquals(Map.of(0, 10L, 1, 10L, 2, 10L), ReplicaLogs.logEndOffsets(clusters.destination(),
                partitions.get(0)), "the dry run changed nothing");
        assertEquals("MIRRORING", clusters.partition(MIRROR, partitions.get(0)).state());

        String failover = cli("--stop", "--mirror", MIRROR, "--topic", "preview", "--at", at);
        for (TopicPartition tp : partitions) {
            assertTrue(failover.contains("  " + tp + ": kept " + kept + ", quarantined offsets [6,10)"),
                    failover);
            assertEquals(values(tp, 0, 6), dataRecords(ReplicaLogs.awaitIdentical(clusters.destination(), tp,
                    List.of(0, 1, 2))).stream().map(ReplicaLogs.StoredRecord::value).toList());
        }
    }

    @Test
    @Order(7)
    void atCommonFailsOverEveryPartitionAtTheOldestMirroredUpToTime() throws Exception {
        List<TopicPartition> partitions = List.of(new TopicPartition("common", 0), new TopicPartition("common", 1));
        writeOneBatchEach(partitions.get(0), 5);
        writeOneBatchEach(partitions.get(1), 8);
        for (TopicPartition tp : partitions) {
            clusters.awaitMirrored(tp);
        }
        Waits.waitUntil("mirrored-up-to times of " + partitions, () -> {
            for (TopicPartition tp : partitions) {
                if (clusters.partition(MIRROR, tp).mirroredUpToMs() < 0) {
                    return false;
                }
            }
            return true;
        });

        String out = cli("--stop", "--mirror", MIRROR, "--topic", "common", "--at", "common");

        Matcher chosen = Pattern.compile("Mirror dr: the common time is (\\S+) \\((\\d+)\\)").matcher(out);
        assertTrue(chosen.find(), out);
        long at = Long.parseLong(chosen.group(2));
        assertTrue(out.contains("stopped (failed over, writable)"), out);
        for (TopicPartition tp : partitions) {
            List<ReplicaLogs.Batch> source = ReplicaLogs.read(clusters.source().broker(leaderOf(tp)), tp);
            List<ReplicaLogs.StoredRecord> wanted = dataRecords(source.stream()
                    .filter(b -> b.records().stream().allMatch(r -> r.timestamp() <= at)).toList());
            List<ReplicaLogs.StoredRecord> kept = dataRecords(ReplicaLogs.awaitIdentical(clusters.destination(), tp,
                    List.of(0, 1, 2)));
            assertTrue(kept.stream().allMatch(r -> r.timestamp() <= at), tp + " kept a record after " + at);
            // every source batch at or before the time is kept: none behind it
            assertEquals(wanted, kept, tp.toString());
        }
    }

    @Test
    @Order(9)
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

    /** Runs twinlog-mirrors.sh against the destination; its output, once it exits 0. */
    private static String cli(String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", clusters.destination().bootstrapServers()));
        all.addAll(List.of(args));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine command = MirrorsCommand.newCommandLine();
        command.setOut(new PrintWriter(out, true));
        command.setErr(new PrintWriter(err, true));
        int exit = command.execute(all.toArray(String[]::new));
        assertEquals(0, exit, out + "\n" + err);
        return out.toString();
    }

    private static int leaderOf(TopicPartition tp) throws Exception {
        return clusters.sourceAdmin().describeTopics(List.of(tp.topic())).allTopicNames().get().get(tp.topic())
                .partitions().get(tp.partition()).leader().id();
    }

    /** Ten batches written to each of the two partitions of {@code topic} and mirrored; the partitions. */
    private static List<TopicPartition> tenBatchesEachMirrored(String topic) throws Exception {
        List<TopicPartition> partitions = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
        for (TopicPartition tp : partitions) {
            writeOneBatchEach(tp, 10);
            clusters.awaitMirrored(tp);
        }
        return partitions;
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
