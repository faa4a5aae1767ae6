package io.twinlog.tests.transactions;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.server.common.TransactionVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.twinlog.tests.transactions.TransactionalRecords.WAIT;
import static io.twinlog.tests.transactions.TransactionalRecords.readAll;
import static io.twinlog.tests.transactions.TransactionalRecords.record;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Both transaction protocols a Kafka 4.4 producer speaks, picked by the cluster's finalized {@code transaction.version}.
 * At level 2 (the default, as on a new Kafka 4.4 cluster; KIP-890) the producer adds no partition itself (each
 * partition's leader adds it when the first record arrives), commits offsets with TxnOffsetCommit v5 (which adds the
 * group's offsets partition) and every end bumps its epoch (EndTxn v5); at level 1, pinned in ZooKeeper's
 * {@code /feature} node, it uses AddPartitionsToTxn, AddOffsetsToTxn and keeps its epoch. Either way committed records
 * and offsets are seen and aborted ones are not.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class TransactionVersionsTest {

    @Test
    void atVersion2EveryTransactionsEndBumpsTheEpoch() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             Admin admin = cluster.admin()) {
            runTransactions(cluster, admin, "v2-app", 1);
        }
    }

    @Test
    void atVersion1TheEpochStaysAndTheOlderProtocolIsUsed() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             CuratorFramework zk = CuratorFrameworkFactory.newClient(cluster.zookeeperConnect(),
                     new RetryOneTime(100));
             Admin admin = cluster.admin()) {
            zk.start();
            assertTrue(zk.blockUntilConnected(30, TimeUnit.SECONDS));
            zk.create().forPath("/feature", "{\"version\":1,\"features\":{\"transaction.version\":1}}"
                    .getBytes(StandardCharsets.UTF_8));
            for (int id = 0; id < 3; id++) {
                int broker = id;
                Waits.waitUntil("broker " + id + " finalizes transaction.version 1", () -> cluster.broker(broker)
                        .metadata().image().features().transactionVersion() == TransactionVersion.TV_1);
            }
            runTransactions(cluster, admin, "v1-app", 0);
        }
    }

    /**
     * Commits, aborts and commits again with input offsets; {@code bumpPerEnd} is how much each end moves the epoch.
     */
    private static void runTransactions(TestCluster cluster, Admin admin, String id, int bumpPerEnd)
            throws Exception {
        admin.createTopics(List.of(new NewTopic("orders", 3, (short) 3), new NewTopic("input", 1, (short) 3)))
                .all().get();
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of("transactional.id", id))) {
            producer.initTransactions();
            int initial = describe(admin, id).producerEpoch();
            producer.beginTransaction();
            for (int i = 0; i < 20; i++) {
                producer.send(record("orders", "committed-" + i));
            }
            producer.commitTransaction();
            assertEquals(initial + bumpPerEnd, describe(admin, id).producerEpoch(), "after a commit");

            producer.beginTransaction();
            for (int i = 0; i < 20; i++) {
                producer.send(record("orders", "aborted-" + i));
            }
            producer.flush();
            producer.abortTransaction();
            assertEquals(initial + 2 * bumpPerEnd, describe(admin, id).producerEpoch(), "after an abort");

            producer.beginTransaction();
            producer.send(record("orders", "committed-last"));
            producer.sendOffsetsToTransaction(Map.of(new TopicPartition("input", 0), new OffsetAndMetadata(42)),
                    new ConsumerGroupMetadata(id + "-group"));
            producer.commitTransaction();
            assertEquals(initial + 3 * bumpPerEnd, describe(admin, id).producerEpoch(), "after the last commit");
        }
        List<String> committed = readAll(cluster, "orders", "read_committed", 21);
        assertEquals(21, committed.size(), committed.toString());
        assertTrue(committed.stream().allMatch(v -> v.startsWith("committed-")), committed.toString());
        assertEquals(41, readAll(cluster, "orders", "read_uncommitted", 41).size());
        Waits.waitUntil("the group's offset committed with the transaction", () -> {
            OffsetAndMetadata offset = admin.listConsumerGroupOffsets(id + "-group").partitionsToOffsetAndMetadata()
                    .get().get(new TopicPartition("input", 0));
            return offset != null && offset.offset() == 42;
        }, WAIT);
    }

    /** The id's transaction once its last end completed (its markers written). */
    private static TransactionDescription describe(Admin admin, String id) throws Exception {
        Waits.waitUntil("transactional id " + id + " completed", () -> {
            TransactionState state = admin.describeTransactions(List.of(id)).description(id).get().state();
            return state == TransactionState.EMPTY || state == TransactionState.COMPLETE_COMMIT
                    || state == TransactionState.COMPLETE_ABORT;
        }, WAIT);
        return admin.describeTransactions(List.of(id)).description(id).get();
    }
}
