package io.twinlog.tests;

import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Future;

import static io.twinlog.tests.KafkaRequests.fetch;
import static io.twinlog.tests.KafkaRequests.initProducerId;
import static io.twinlog.tests.KafkaRequests.latestOffset;
import static io.twinlog.tests.KafkaRequests.onlyPartition;
import static io.twinlog.tests.KafkaRequests.produce;
import static io.twinlog.tests.KafkaRequests.simpleRecords;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * Idempotent produce as Kafka's {@code UnifiedLog} enforces it through the producer state: a retried batch (same
 * producer ID, epoch and base sequence) is acknowledged with its original offset and written once; a sequence gap
 * is OUT_OF_ORDER_SEQUENCE_NUMBER; a batch of an older producer epoch is INVALID_PRODUCER_EPOCH. Then a real
 * idempotent KafkaProducer with five requests in flight, whose records must land once and in order.
 *
 * <p>Each raw case uses its own partition and its own producer ID, so the cases do not depend on each other.
 */
@Timeout(300)
class IdempotentProduceTest {
    private static final String TOPIC = "idempotent";
    private static final int PARTITIONS = 3;

    private static TestCluster cluster;
    private static Uuid topicId;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(1).build().start();
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
            topicId = KafkaRequests.topicId(admin, TOPIC);
        }
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Test
    void retriedBatchIsAcknowledgedWithItsOriginalOffsetAndWrittenOnce() throws Exception {
        int partition = 0;
        try (RawKafkaConnection c = connect()) {
            InitProducerIdResponse id = initProducerId(c);
            long producerId = id.data().producerId();
            short epoch = id.data().producerEpoch();
            long logEndBefore = latestOffset(c, TOPIC, partition);

            ProduceResponseData.PartitionProduceResponse first = send(c, partition,
                    idempotent(producerId, epoch, 0, 4, "dup"));
            assertEquals(Errors.NONE, Errors.forCode(first.errorCode()), first.toString());
            assertEquals(logEndBefore, first.baseOffset(), "first attempt lands at the log end");

            ProduceResponseData.PartitionProduceResponse retry = send(c, partition,
                    idempotent(producerId, epoch, 0, 4, "dup"));
            assertEquals(Errors.NONE, Errors.forCode(retry.errorCode()), "a duplicate is not an error: " + retry);
            assertEquals(first.baseOffset(), retry.baseOffset(), "the retry is acknowledged at the original offset");
            assertEquals(logEndBefore + 4, latestOffset(c, TOPIC, partition), "the log holds the records once");

            ProduceResponseData.PartitionProduceResponse next = send(c, partition,
                    idempotent(producerId, epoch, 4, 2, "next"));
            assertEquals(Errors.NONE, Errors.forCode(next.errorCode()), next.toString());
            assertEquals(logEndBefore + 4, next.baseOffset(), "the next sequence follows the single copy");

            List<String> values = readValues(c, partition, logEndBefore);
            assertEquals(List.of("dup-value-0", "dup-value-1", "dup-value-2", "dup-value-3", "next-value-0",
                    "next-value-1"), values);
        }
    }

    @Test
    void sequenceGapIsOutOfOrderSequenceNumber() throws Exception {
        int partition = 1;
        try (RawKafkaConnection c = connect()) {
            InitProducerIdResponse id = initProducerId(c);
            long producerId = id.data().producerId();
            short epoch = id.data().producerEpoch();
            ProduceResponseData.PartitionProduceResponse first = send(c, partition,
                    idempotent(producerId, epoch, 0, 3, "seq"));
            assertEquals(Errors.NONE, Errors.forCode(first.errorCode()), first.toString());
            long logEnd = latestOffset(c, TOPIC, partition);

            // sequences 0..2 are written; 3 is expected, 5 leaves a gap
            ProduceResponseData.PartitionProduceResponse gap = send(c, partition,
                    idempotent(producerId, epoch, 5, 1, "gap"));
            assertEquals(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, Errors.forCode(gap.errorCode()), gap.toString());
            assertEquals(logEnd, latestOffset(c, TOPIC, partition), "nothing written for the refused batch");

            ProduceResponseData.PartitionProduceResponse expected = send(c, partition,
                    idempotent(producerId, epoch, 3, 1, "expected"));
            assertEquals(Errors.NONE, Errors.forCode(expected.errorCode()), "the expected sequence is still accepted");
            assertEquals(logEnd, expected.baseOffset());
        }
    }

    /**
     * Kafka's ProducerAppendInfo refuses a client batch whose epoch is below the last one seen for the producer ID
     * with InvalidProducerEpochException (since 2.7, instead of the fatal PRODUCER_FENCED), so INVALID_PRODUCER_EPOCH.
     */
    @Test
    void batchOfOlderProducerEpochIsInvalidProducerEpoch() throws Exception {
        int partition = 2;
        try (RawKafkaConnection c = connect()) {
            long producerId = initProducerId(c).data().producerId();
            ProduceResponseData.PartitionProduceResponse epoch0 = send(c, partition,
                    idempotent(producerId, (short) 0, 0, 2, "epoch0"));
            assertEquals(Errors.NONE, Errors.forCode(epoch0.errorCode()), epoch0.toString());
            // a new epoch starts its sequences at 0
            ProduceResponseData.PartitionProduceResponse epoch1 = send(c, partition,
                    idempotent(producerId, (short) 1, 0, 2, "epoch1"));
            assertEquals(Errors.NONE, Errors.forCode(epoch1.errorCode()), epoch1.toString());
            long logEnd = latestOffset(c, TOPIC, partition);

            ProduceResponseData.PartitionProduceResponse stale = send(c, partition,
                    idempotent(producerId, (short) 0, 2, 1, "stale"));
            assertEquals(Errors.INVALID_PRODUCER_EPOCH, Errors.forCode(stale.errorCode()), stale.toString());
            assertEquals(logEnd, latestOffset(c, TOPIC, partition), "nothing written for the fenced batch");
        }
    }

    /**
     * A real idempotent producer with five requests in flight per connection and small batches, so many batches of
     * one partition are outstanding at once: every partition must hold its records once and in send order.
     */
    @Test
    void idempotentProducerWithFiveInFlightWritesEachRecordOnceInOrder() throws Exception {
        String topic = "idempotent-producer";
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
        }
        int count = 5_000;
        Map<String, Object> config = Map.of(
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5,
                ProducerConfig.RETRIES_CONFIG, Integer.MAX_VALUE,
                ProducerConfig.BATCH_SIZE_CONFIG, 1024,
                ProducerConfig.LINGER_MS_CONFIG, 0);
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(config)) {
            for (int i = 0; i < count; i++) {
                int partition = i % PARTITIONS;
                futures.add(producer.send(new ProducerRecord<>(topic, partition, null,
                        ("p" + partition + "-" + i).getBytes(StandardCharsets.UTF_8))));
            }
            producer.flush();
        }
        Map<Integer, Long> expectedOffset = new HashMap<>();
        for (int i = 0; i < count; i++) {
            RecordMetadata m = futures.get(i).get();
            long expected = expectedOffset.merge(m.partition(), 0L, (a, b) -> a + 1);
            assertEquals(expected, m.offset(), "record " + i + " acknowledged in send order on partition "
                    + m.partition());
        }

        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of())) {
            for (int p = 0; p < PARTITIONS; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                int expectedRecords = count / PARTITIONS + (p < count % PARTITIONS ? 1 : 0);
                List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
                Waits.waitFor(expectedRecords + " records read from " + tp + " (count so far)", () -> {
                    consumer.poll(Duration.ofMillis(200)).forEach(read::add);
                    return read.size();
                }, n -> n >= expectedRecords);
                assertEquals(expectedRecords, read.size(), "records on " + tp);
                // partition p received records p, p + 3, p + 6, ... in that order
                int expectedIndex = p;
                for (ConsumerRecord<byte[], byte[]> r : read) {
                    String value = new String(r.value(), StandardCharsets.UTF_8);
                    assertEquals("p" + p + "-" + expectedIndex, value, "record at offset " + r.offset() + " of " + tp
                            + " (a duplicate, a gap or a reordering)");
                    expectedIndex += PARTITIONS;
                }
            }
        }
    }

    private static MemoryRecords idempotent(long producerId, short epoch, int baseSequence, int count, String prefix) {
        return MemoryRecords.withIdempotentRecords(Compression.NONE, producerId, epoch, baseSequence,
                simpleRecords(count, prefix));
    }

    private static ProduceResponseData.PartitionProduceResponse send(RawKafkaConnection c, int partition,
                                                                     MemoryRecords records) throws IOException {
        ProduceResponse r = c.send(produce(ApiKeys.PRODUCE.latestVersion(), TOPIC, topicId, partition, (short) -1,
                records));
        ProduceResponseData.PartitionProduceResponse p = onlyPartition(r);
        assertEquals(partition, p.index());
        return p;
    }

    /** The values of a partition from {@code fromOffset} to its log end, read with raw fetches. */
    private static List<String> readValues(RawKafkaConnection c, int partition, long fromOffset) throws IOException {
        long logEnd = latestOffset(c, TOPIC, partition);
        List<String> values = new ArrayList<>();
        long offset = fromOffset;
        while (offset < logEnd) {
            FetchResponseData.PartitionData p = onlyPartition((FetchResponse) c.send(fetch(
                    ApiKeys.FETCH.latestVersion(), TOPIC, topicId, partition, offset, Optional.empty(), 0)));
            assertEquals(Errors.NONE, Errors.forCode(p.errorCode()), p.toString());
            Records records = (Records) p.records();
            long before = offset;
            for (RecordBatch batch : records.batches()) {
                for (Record record : batch) {
                    if (record.offset() >= offset) {
                        values.add(StandardCharsets.UTF_8.decode(record.value()).toString());
                        offset = record.offset() + 1;
                    }
                }
            }
            assertNotEquals(before, offset, "fetch at " + before + " made no progress below log end " + logEnd);
        }
        return values;
    }

    private static RawKafkaConnection connect() throws IOException {
        return RawKafkaConnection.to(cluster.bootstrapServers());
    }
}
