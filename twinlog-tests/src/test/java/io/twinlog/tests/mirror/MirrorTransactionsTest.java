package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import io.twinlog.tests.KafkaTools;
import io.twinlog.tests.ToolResult;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Transactions across a mirror from a Twinlog source (issue 26, point 4; the KIP-1279 prototype's
 * {@code test_stop_with_txns}): a committed, an aborted and two open transactions on the source are mirrored as
 * they are, so a read_committed reader of the destination sees exactly what one of the source sees (held at the
 * first open transaction); at failover the open transactions are aborted and read_committed readers reach the
 * end; no producer is left with a transaction open on the destination; the transactional id whose transaction was
 * open on the source initializes, commits and is read on the destination; and after a failback, while the source's
 * coordinator times out the transactions it had open before the failover, both clusters hold the same logs with no
 * transaction open on either.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class MirrorTransactionsTest {
    @TempDir
    Path toolDir;

    private static final String TOPIC = "payments";
    private static final List<TopicPartition> PARTITIONS = List.of(new TopicPartition(TOPIC, 0),
            new TopicPartition(TOPIC, 1));

    @Test
    void transactionalTopicsMirrorUnchangedAndFailOverWithTheirOpenTransactionsAborted() throws Exception {
        // the source's coordinator ends its transactions soon after their timeout (below)
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(1)
                .brokerProperty("transaction.abort.timed.out.transaction.cleanup.interval.ms", "500"),
                TestCluster.builder().brokers(1))) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            Admin sourceAdmin = clusters.sourceAdmin();
            Admin destinationAdmin = clusters.destinationAdmin();
            MirrorAdmin mirrors = clusters.mirrors();
            clusters.createSourceTopics(new NewTopic(TOPIC, 2, (short) 1));
            clusters.mirror("dr", TOPIC);

            transaction(source, "committer", "committed", 10, true);
            transaction(source, "aborter", "aborted", 10, false);
            // EndTxn is answered before the markers are written: wait for them
            Waits.waitFor("the source's transactions completed", () -> List.of(state(sourceAdmin, "committer"),
                    state(sourceAdmin, "aborter")), states -> states.equals(List.of(TransactionState.COMPLETE_COMMIT,
                    TransactionState.COMPLETE_ABORT)));
            KafkaProducer<byte[], byte[]> pending = source.producer(Map.of("transactional.id", "pending",
                    "transaction.timeout.ms", 10_000));
            KafkaProducer<byte[], byte[]> pending2 = source.producer(Map.of("transactional.id", "pending-2",
                    "transaction.timeout.ms", 10_000));
            try {
                for (KafkaProducer<byte[], byte[]> p : List.of(pending, pending2)) {
                    p.initTransactions();
                    p.beginTransaction();
                    for (TopicPartition tp : PARTITIONS) {
                        for (int i = 0; i < 5; i++) {
                            p.send(new ProducerRecord<>(TOPIC, tp.partition(), null, bytes("open-" + i))).get();
                        }
                    }
                }
                Map<TopicPartition, Long> sourceEnds = endOffsets(source, "read_uncommitted");
                Waits.waitUntil("the destination holds every source record", () ->
                        endOffsets(destination, "read_uncommitted").equals(sourceEnds));
                assertEquals(readCommitted(source), readCommitted(destination),
                        "read_committed on the destination sees what it sees on the source");
                assertEquals(endOffsets(source, "read_committed"), endOffsets(destination, "read_committed"),
                        "the same last stable offsets");

                // failover: the open transactions can never end on the destination, so they are aborted
                assertEquals(Map.of(), mirrors.stopMirrorTopics("dr", List.of(TOPIC), List.of()));
                Waits.waitUntil("every partition failed over", () -> mirrors.describeClusterMirrors(List.of("dr"))
                        .get("dr").topics().get(TOPIC).partitions().stream()
                        .allMatch(p -> p.state().equals("STOPPED")));
                Waits.waitUntil("read_committed reaches the end", () -> endOffsets(destination, "read_committed")
                        .equals(endOffsets(destination, "read_uncommitted")));
                List<String> afterFailover = readCommitted(destination);
                assertEquals(20, afterFailover.size(), afterFailover.toString());
                assertTrue(afterFailover.stream().allMatch(v -> v.startsWith("committed-")), afterFailover.toString());
                for (TopicPartition tp : PARTITIONS) {
                    List<ProducerState> producers = destinationAdmin.describeProducers(List.of(tp)).all().get()
                            .get(tp).activeProducers();
                    assertTrue(producers.stream().noneMatch(p -> p.currentTransactionStartOffset().isPresent()),
                            tp + " has a transaction open: " + producers);
                }

                // the application moves: its transactional id, open on the source, works on the destination
                transaction(destination, "pending", "after-failover", 3, true);
                Waits.waitUntil("the destination's transaction completed", () -> state(destinationAdmin, "pending")
                        == TransactionState.COMPLETE_COMMIT);
                List<String> withNew = readCommitted(destination);
                assertEquals(26, withNew.size(), withNew.toString());

                // failback: the source mirrors back from the destination; its coordinator still has the two
                // transactions of before the failover and aborts them at their timeout, and whatever markers that
                // writes (before the failback: cut by it; during it: refused by the mirror partitions) leave both
                // clusters with the same logs, batch for batch, and no transaction open on either
                try (MirrorAdmin onSource = MirrorAdmin.create(source.bootstrapServers(), Duration.ofSeconds(60))) {
                    MirrorSteps.startMirroring(onSource, "back", destination, TOPIC);
                    Waits.waitUntil("the source's coordinator ended its pre-failover transactions", () ->
                            state(sourceAdmin, "pending") == TransactionState.COMPLETE_ABORT
                                    && state(sourceAdmin, "pending-2") == TransactionState.COMPLETE_ABORT);
                    for (TopicPartition tp : PARTITIONS) {
                        MirrorInvariants.awaitMirrored(destination, source, tp);
                        for (Admin admin : List.of(sourceAdmin, destinationAdmin)) {
                            assertTrue(admin.describeProducers(List.of(tp)).all().get().get(tp).activeProducers()
                                    .stream().noneMatch(p -> p.currentTransactionStartOffset().isPresent()),
                                    tp + " has a transaction open");
                        }
                    }
                    assertEquals(readCommitted(destination), readCommitted(source),
                            "after the failback, read_committed sees the same on both clusters");
                    // what an operator checks: kafka-transactions.sh find-hanging lists nothing on either cluster
                    for (TestCluster cluster : List.of(source, destination)) {
                        ToolResult hanging = KafkaTools.run(toolDir.toFile(), Duration.ofSeconds(60),
                                "org.apache.kafka.tools.TransactionsCommand", null, "--bootstrap-server",
                                cluster.bootstrapServers(), "find-hanging", "--broker-id", "0");
                        hanging.assertSuccess();
                        List<String> rows = hanging.stdoutLines().stream().filter(l -> !l.isBlank()).toList();
                        assertEquals(1, rows.size(), "find-hanging lists only its header: " + hanging);
                    }
                }
            } finally {
                pending.close(Duration.ZERO);
                pending2.close(Duration.ZERO);
            }
        }
    }

    /**
     * A source topic deleted while a transaction is open on it: its mirror partitions fail for good (decision 61),
     * and since the source can never end that transaction, it is aborted there, so read_committed readers of the
     * destination reach the end instead of stopping at the last stable offset for good.
     */
    @Test
    void aSourceTopicDeletedWithATransactionOpenLeavesNoTransactionOpenOnTheDestination() throws Exception {
        // the source's answers for a deleted topic are confirmed within the mirror state timeout
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(1),
                TestCluster.builder().brokers(1).brokerProperty("mirror.state.timeout.ms", "6000"))) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            Admin sourceAdmin = clusters.sourceAdmin();
            MirrorAdmin mirrors = clusters.mirrors();
            clusters.createSourceTopics(new NewTopic(TOPIC, 2, (short) 1));
            clusters.mirror("dr", TOPIC);
            transaction(source, "committer", "committed", 10, true);
            Waits.waitUntil("the committed transaction completed", () -> state(sourceAdmin, "committer")
                    == TransactionState.COMPLETE_COMMIT);
            try (KafkaProducer<byte[], byte[]> open = source.producer(Map.of("transactional.id", "open"))) {
                open.initTransactions();
                open.beginTransaction();
                for (TopicPartition tp : PARTITIONS) {
                    open.send(new ProducerRecord<>(TOPIC, tp.partition(), null, bytes("open"))).get();
                }
                Map<TopicPartition, Long> sourceEnds = endOffsets(source, "read_uncommitted");
                Waits.waitUntil("the destination holds every source record", () ->
                        endOffsets(destination, "read_uncommitted").equals(sourceEnds));
                assertTrue(!endOffsets(destination, "read_committed").equals(sourceEnds), "held at the open one");
                sourceAdmin.deleteTopics(List.of(TOPIC)).all().get();
                Waits.waitUntil("every mirror partition failed for good", () -> mirrors.describeClusterMirrors(
                        List.of("dr")).get("dr").topics().get(TOPIC).partitions().stream()
                        .allMatch(p -> p.state().equals("FAILED")));
                Waits.waitUntil("read_committed reaches the end", () -> endOffsets(destination, "read_committed")
                        .equals(endOffsets(destination, "read_uncommitted")));
                assertEquals(20, readCommitted(destination).size());
            }
        }
    }

    private static TransactionState state(Admin admin, String id) throws Exception {
        return admin.describeTransactions(List.of(id)).description(id).get().state();
    }

    /** One transaction of {@code count} records on each partition, committed or aborted. */
    private static void transaction(TestCluster cluster, String id, String prefix, int count, boolean commit) {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("transactional.id", id))) {
            p.initTransactions();
            p.beginTransaction();
            for (TopicPartition tp : PARTITIONS) {
                for (int i = 0; i < count; i++) {
                    p.send(new ProducerRecord<>(TOPIC, tp.partition(), null, bytes(prefix + "-" + i)));
                }
            }
            // in the log before the end: an abort of batches still in the producer never reaches the broker
            p.flush();
            if (commit) {
                p.commitTransaction();
            } else {
                p.abortTransaction();
            }
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Map<TopicPartition, Long> endOffsets(TestCluster cluster, String isolation) {
        try (KafkaConsumer<byte[], byte[]> c = cluster.consumer(Map.of("isolation.level", isolation))) {
            return c.endOffsets(PARTITIONS);
        }
    }

    /** Every record a read_committed reader gets, partition by partition, up to the last stable offsets. */
    private static List<String> readCommitted(TestCluster cluster) {
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = cluster.consumer(Map.of("isolation.level", "read_committed"))) {
            for (TopicPartition tp : PARTITIONS) {
                c.assign(List.of(tp));
                c.seekToBeginning(List.of(tp));
                long end = c.endOffsets(List.of(tp)).get(tp);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (c.position(tp) < end && System.nanoTime() < deadline) {
                    c.poll(Duration.ofMillis(200)).forEach(r -> values.add(tp.partition() + ":"
                            + new String(r.value(), StandardCharsets.UTF_8)));
                }
            }
        }
        return values.stream().map(v -> v.substring(v.indexOf(':') + 1)).toList();
    }
}
