package io.twinlog.tests.transactions;

import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static io.twinlog.tests.transactions.TransactionalRecords.readAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A consume-transform-produce loop, exactly once across failures (issue 26, point 6): it copies every input record
 * to the output in transactions that also commit its input offsets, while the leader of an input partition and then
 * the leader of an output partition are killed and restarted. A transaction that fails is aborted and its batch
 * read again from the committed offsets. Every input record is then in the output exactly once (counted one by one)
 * and the group's offsets are at the end of the input.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ConsumeTransformProduceFailuresTest {
    private static final int RECORDS = 3_000;

    @Test
    void everyInputRecordIsCopiedExactlyOnceThroughLeaderKills() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("in", 3, (short) 3), new NewTopic("out", 3, (short) 3)))
                    .all().get();
            try (KafkaProducer<byte[], byte[]> input = cluster.producer(Map.of("enable.idempotence", true))) {
                for (int i = 0; i < RECORDS; i++) {
                    input.send(new ProducerRecord<>("in", null, ("v" + i).getBytes(StandardCharsets.UTF_8)));
                }
            }
            int inputLeader = leader(admin, "in");
            int outputLeader = -1;
            int copied = 0;
            int aborted = 0;
            boolean inputKilled = false;
            boolean outputKilled = false;
            try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of("group.id", "copier",
                    "isolation.level", "read_committed", "enable.auto.commit", false, "auto.offset.reset", "earliest",
                    "max.poll.records", 100));
                 KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of("transactional.id", "copier-1",
                         "delivery.timeout.ms", 20_000, "request.timeout.ms", 5_000))) {
                producer.initTransactions();
                consumer.subscribe(List.of("in"));
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
                while (copied < RECORDS && System.nanoTime() < deadline) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                    if (records.isEmpty()) {
                        continue;
                    }
                    try {
                        producer.beginTransaction();
                        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                        for (ConsumerRecord<byte[], byte[]> r : records) {
                            producer.send(new ProducerRecord<>("out", r.partition(), null, r.value()));
                            offsets.put(new TopicPartition(r.topic(), r.partition()),
                                    new OffsetAndMetadata(r.offset() + 1));
                        }
                        producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                        producer.commitTransaction();
                        copied += records.count();
                    } catch (ProducerFencedException e) {
                        throw e; // only one instance runs: a fence here is a defect
                    } catch (KafkaException e) {
                        // abortable (a leader or coordinator moved under it): abort, read the batch again
                        aborted++;
                        producer.abortTransaction();
                        rewind(consumer);
                    }
                    if (!inputKilled && copied > RECORDS / 4) {
                        cluster.killBroker(inputLeader);
                        inputKilled = true;
                    } else if (inputKilled && !outputKilled && copied > RECORDS / 2) {
                        cluster.startBroker(inputLeader);
                        outputLeader = leader(admin, "out");
                        cluster.killBroker(outputLeader);
                        outputKilled = true;
                    }
                }
            }
            if (outputKilled) {
                cluster.startBroker(outputLeader);
            }
            assertTrue(inputKilled && outputKilled, "both leaders were killed mid-run");
            assertEquals(RECORDS, copied, "copied before the deadline (" + aborted + " transactions aborted)");
            List<String> out = readAll(cluster, "out", "read_committed", RECORDS);
            Set<String> distinct = new HashSet<>(out);
            assertEquals(RECORDS, out.size(), "output records (" + aborted + " transactions aborted)");
            assertEquals(RECORDS, distinct.size(), "each input record once");
            for (int i = 0; i < RECORDS; i++) {
                assertTrue(distinct.contains("v" + i), "v" + i + " missing");
            }
            long committed = admin.listConsumerGroupOffsets("copier").partitionsToOffsetAndMetadata().get()
                    .values().stream().mapToLong(OffsetAndMetadata::offset).sum();
            assertEquals(RECORDS, committed, "the group's offsets at the end of the input");
        }
    }

    private static int leader(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().get(0).leader().id();
    }

    /** Back to the committed offsets of every assigned partition, after an aborted transaction. */
    private static void rewind(KafkaConsumer<byte[], byte[]> consumer) {
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(consumer.assignment());
        for (TopicPartition tp : consumer.assignment()) {
            OffsetAndMetadata c = committed.get(tp);
            if (c == null) {
                consumer.seekToBeginning(List.of(tp));
            } else {
                consumer.seek(tp, c.offset());
            }
        }
    }
}
