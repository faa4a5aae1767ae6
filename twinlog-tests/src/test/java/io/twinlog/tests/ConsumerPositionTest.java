package io.twinlog.tests;

import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Consumer positioning with assign(): seek, beginning/end offsets, offsetsForTimes, long polls. */
@Timeout(300)
class ConsumerPositionTest {
    private static final String TOPIC = "positions";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    // recent enough that time-based retention (7 days by default) keeps the records
    private static final long BASE_TIMESTAMP = System.currentTimeMillis() - 3_600_000L;
    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(1).build().start();
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
        }
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("linger.ms", 0))) {
            for (int i = 0; i < 100; i++) {
                // timestamps 0, 1000, 2000, ... ms after the base: offsetsForTimes has something to find
                p.send(new ProducerRecord<>(TOPIC, 0, BASE_TIMESTAMP + i * 1000L, null,
                        ("r" + i).getBytes(StandardCharsets.UTF_8))).get();
            }
        }
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Test
    void beginningAndEndOffsets() {
        try (KafkaConsumer<byte[], byte[]> c = cluster.consumer(Map.of())) {
            assertEquals(0L, c.beginningOffsets(List.of(TP)).get(TP));
            assertEquals(100L, c.endOffsets(List.of(TP)).get(TP));
        }
    }

    @Test
    void seekReadsFromTheChosenOffset() {
        try (KafkaConsumer<byte[], byte[]> c = cluster.consumer(Map.of())) {
            c.assign(List.of(TP));
            c.seek(TP, 42);
            List<ConsumerRecord<byte[], byte[]>> got = poll(c, 58);
            assertEquals(42L, got.get(0).offset());
            assertEquals("r42", new String(got.get(0).value(), StandardCharsets.UTF_8));
            assertEquals(99L, got.get(got.size() - 1).offset());
        }
    }

    @Test
    void offsetsForTimesFindsTheFirstRecordAtOrAfterTheTimestamp() {
        try (KafkaConsumer<byte[], byte[]> c = cluster.consumer(Map.of())) {
            Map<TopicPartition, Long> query = new HashMap<>();
            query.put(TP, BASE_TIMESTAMP + 10_500L);
            OffsetAndTimestamp found = c.offsetsForTimes(query).get(TP);
            assertEquals(11L, found.offset());
            assertEquals(BASE_TIMESTAMP + 11_000L, found.timestamp());
            query.put(TP, BASE_TIMESTAMP + 1_000_000L);
            assertNull(c.offsetsForTimes(query).get(TP), "no record at or after a future timestamp");
        }
    }

    @Test
    void longPollReturnsAsSoonAsDataArrives() throws Exception {
        TopicPartition tp = new TopicPartition("long-poll", 0);
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(tp.topic(), 1, (short) 1))).all().get();
        }
        try (KafkaConsumer<byte[], byte[]> c = cluster.consumer(Map.of("fetch.max.wait.ms", 10_000))) {
            c.assign(List.of(tp));
            c.seekToEnd(List.of(tp));
            long position = c.position(tp);
            long start = System.nanoTime();
            try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of())) {
                p.send(new ProducerRecord<>(tp.topic(), 0, null, "late".getBytes(StandardCharsets.UTF_8))).get();
            }
            List<ConsumerRecord<byte[], byte[]>> got = poll(c, 1);
            assertEquals(position, got.get(0).offset());
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(tookMs < 9_000, "a waiting fetch completes when data arrives, not at max.wait.ms: " + tookMs);
        }
    }

    @Test
    void smallFetchSizesStillMakeProgress() {
        try (KafkaConsumer<byte[], byte[]> c = cluster.consumer(Map.of("max.partition.fetch.bytes", 1,
                "fetch.max.bytes", 1))) {
            c.assign(List.of(TP));
            c.seekToBeginning(List.of(TP));
            assertEquals(0L, poll(c, 10).get(0).offset(), "at least one batch per fetch even above the limits");
        }
    }

    private static List<ConsumerRecord<byte[], byte[]>> poll(KafkaConsumer<byte[], byte[]> c, int atLeast) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        long deadline = System.currentTimeMillis() + 30_000;
        while (out.size() < atLeast && System.currentTimeMillis() < deadline) {
            c.poll(Duration.ofMillis(200)).forEach(out::add);
        }
        assertTrue(out.size() >= atLeast, "polled " + out.size() + " records, expected at least " + atLeast);
        return out;
    }
}
