package io.twinlog.tests.transactions;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static io.twinlog.tests.transactions.TransactionalRecords.WAIT;
import static io.twinlog.tests.transactions.TransactionalRecords.causedBy;
import static io.twinlog.tests.transactions.TransactionalRecords.readAll;
import static io.twinlog.tests.transactions.TransactionalRecords.record;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Transactions end to end with Kafka's own 4.4 clients on a 3-broker cluster (transaction version 1): committed
 * records are seen by read_committed consumers and aborted ones are not (read_uncommitted consumers see both);
 * a zombie instance is fenced; a consume-transform-produce loop commits its input offsets with its output
 * (sendOffsetsToTransaction), so the group's offsets move only with a commit.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class TransactionsTest {

    @Test
    void readCommittedSeesCommittedRecordsOnlyAndAZombieIsFenced() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("ledger", 3, (short) 3))).all().get();
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of("transactional.id", "ledger-app"))) {
                producer.initTransactions();
                producer.beginTransaction();
                for (int i = 0; i < 30; i++) {
                    producer.send(record("ledger", "committed-" + i));
                }
                producer.commitTransaction();
                producer.beginTransaction();
                for (int i = 0; i < 30; i++) {
                    producer.send(record("ledger", "aborted-" + i));
                }
                producer.flush();
                producer.abortTransaction();
                producer.beginTransaction();
                producer.send(record("ledger", "committed-last"));
                producer.commitTransaction();
            }
            List<String> committed = readAll(cluster, "ledger", "read_committed", 31);
            assertEquals(31, committed.size(), committed.toString());
            assertTrue(committed.stream().allMatch(v -> v.startsWith("committed-")), committed.toString());
            assertEquals(61, readAll(cluster, "ledger", "read_uncommitted", 61).size());
            Waits.waitUntil("the last transaction completed", () -> admin.describeTransactions(List.of("ledger-app"))
                    .description("ledger-app").get().state() == TransactionState.COMPLETE_COMMIT, WAIT);

            KafkaProducer<byte[], byte[]> zombie = cluster.producer(Map.of("transactional.id", "ledger-app"));
            zombie.initTransactions();
            try (KafkaProducer<byte[], byte[]> successor = cluster.producer(Map.of("transactional.id",
                    "ledger-app"))) {
                successor.initTransactions();
                zombie.beginTransaction();
                Exception fenced = assertThrows(Exception.class, () -> {
                    zombie.send(record("ledger", "zombie")).get();
                    zombie.commitTransaction();
                });
                // at transaction version 2 the partition leader's verification refuses the zombie's old epoch
                // (INVALID_PRODUCER_EPOCH, as Kafka 4.4's); at 1 the coordinator fences its AddPartitionsToTxn
                assertTrue(causedBy(fenced, ProducerFencedException.class)
                        || causedBy(fenced, InvalidProducerEpochException.class), fenced.toString());
                assertThrows(KafkaException.class, zombie::commitTransaction, "the zombie cannot commit");
                successor.beginTransaction();
                successor.send(record("ledger", "committed-successor"));
                successor.commitTransaction();
            } finally {
                zombie.close(Duration.ZERO);
            }
            List<String> after = readAll(cluster, "ledger", "read_committed", 32);
            assertTrue(after.contains("committed-successor") && !after.contains("zombie"), after.toString());
        }
    }

    @Test
    void consumeTransformProduceCommitsItsInputOffsetsWithItsOutput() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("in", 2, (short) 3), new NewTopic("out", 2, (short) 3)))
                    .all().get();
            try (KafkaProducer<byte[], byte[]> input = cluster.producer(Map.of())) {
                for (int i = 0; i < 100; i++) {
                    input.send(record("in", "v" + i));
                }
            }
            int processed = 0;
            try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of("group.id", "copier",
                    "isolation.level", "read_committed", "enable.auto.commit", false, "auto.offset.reset",
                    "earliest"));
                 KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of("transactional.id", "copier-1"))) {
                producer.initTransactions();
                consumer.subscribe(List.of("in"));
                long deadline = System.nanoTime() + WAIT.toNanos();
                boolean abortedOnce = false;
                while (processed < 100 && System.nanoTime() < deadline) {
                    var records = consumer.poll(Duration.ofMillis(200));
                    if (records.isEmpty()) {
                        continue;
                    }
                    producer.beginTransaction();
                    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        producer.send(new ProducerRecord<>("out", r.partition(), null, r.value()));
                        offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                    }
                    ConsumerGroupMetadata group = consumer.groupMetadata();
                    producer.sendOffsetsToTransaction(offsets, group);
                    if (!abortedOnce) {
                        // the first batch is aborted: its output disappears and its offsets are not committed
                        producer.abortTransaction();
                        abortedOnce = true;
                        for (TopicPartition tp : consumer.assignment()) {
                            OffsetAndMetadata c = consumer.committed(Set.of(tp)).get(tp);
                            consumer.seek(tp, c == null ? 0 : c.offset());
                        }
                        continue;
                    }
                    producer.commitTransaction();
                    processed += records.count();
                }
            }
            assertEquals(100, processed);
            List<String> out = readAll(cluster, "out", "read_committed", 100);
            assertEquals(100, out.size());
            assertEquals(100, new HashSet<>(out).size(), "each input copied exactly once");
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets("copier")
                    .partitionsToOffsetAndMetadata().get();
            assertEquals(100, committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum(),
                    "the group's offsets moved with the committed transactions");
        }
    }
}
