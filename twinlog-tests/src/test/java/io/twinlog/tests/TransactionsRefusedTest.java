package io.twinlog.tests;

import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Transactions are not served yet (issue 10): a transactional producer must fail fast with a message a user can
 * act on, not wait out {@code max.block.ms} retrying COORDINATOR_NOT_AVAILABLE. An idempotent producer, the
 * suggested alternative, keeps working on the same cluster.
 */
@Timeout(120)
class TransactionsRefusedTest {
    private static final String TOPIC = "transactions-refused";
    /** Far above the time allowed, so a producer that retries instead of failing would be caught. */
    private static final int MAX_BLOCK_MS = 60_000;
    private static final Duration FAIL_FAST = Duration.ofSeconds(5);

    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(1).build().start();
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
        }
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void initTransactionsFailsAtOnceWithTheReason() {
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, "payments-writer",
                ProducerConfig.MAX_BLOCK_MS_CONFIG, MAX_BLOCK_MS))) {
            long start = System.nanoTime();
            KafkaException error = assertThrows(KafkaException.class, producer::initTransactions);
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertTrue(took.compareTo(FAIL_FAST) < 0, "initTransactions() took " + took.toMillis() + " ms");
            assertTrue(error.getMessage().contains("Twinlog does not support transactions yet")
                            && error.getMessage().contains("transactional.id 'payments-writer'"),
                    "the producer shows the broker's reason: " + error.getMessage());
        }
    }

    /**
     * Transactional batches in a produce request without a transactional id (a client that sets the batch flag on
     * its own): refused as Kafka refuses them, so no transaction is opened that nothing could end, which would hold
     * the partition's last stable offset and every read_committed consumer for good.
     */
    @Test
    void transactionalBatchesWithoutATransactionalIdAreRefused() throws Exception {
        try (Admin admin = cluster.admin();
             RawKafkaConnection connection = RawKafkaConnection.to(cluster.bootstrapServers())) {
            long endBefore = KafkaRequests.latestOffset(connection, TOPIC, 0);
            InitProducerIdResponse id = KafkaRequests.initProducerId(connection);
            MemoryRecords records = MemoryRecords.withTransactionalRecords(Compression.NONE, id.data().producerId(),
                    id.data().producerEpoch(), 0, KafkaRequests.simpleRecords(3, "txn"));
            ProduceResponse response = connection.send(KafkaRequests.produce(ApiKeys.PRODUCE.latestVersion(), TOPIC,
                    KafkaRequests.topicId(admin, TOPIC), 0, (short) -1, records));
            assertEquals(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                    Errors.forCode(KafkaRequests.onlyPartition(response).errorCode()));
            assertEquals(endBefore, KafkaRequests.latestOffset(connection, TOPIC, 0), "nothing appended");
        }
    }

    @Test
    void idempotentProducerStillWrites() throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true))) {
            long offset = producer.send(new ProducerRecord<>(TOPIC, 0, null,
                    "exactly once per partition".getBytes(StandardCharsets.UTF_8))).get().offset();
            assertEquals(0, offset);
        }
    }
}
