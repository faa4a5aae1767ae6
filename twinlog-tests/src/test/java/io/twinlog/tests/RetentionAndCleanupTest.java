package io.twinlog.tests;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.function.IntFunction;
import java.util.function.IntToLongFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Retention (by size and by time) and compaction, run by Kafka's LogManager and LogCleaner inside the broker, seen
 * through real clients: the log start offset moves up as old segments go, and a compacted topic keeps only the
 * latest value of each key at its original offset.
 *
 * <p>Segments are tiny (4 KiB) so that a few hundred records span many: the topic config
 * {@code internal.segment.bytes} (Kafka's testing override of the 1 MiB minimum of {@code segment.bytes}) is
 * accepted by CreateTopics.
 */
@Timeout(300)
class RetentionAndCleanupTest {
    private static final String SMALL_SEGMENTS = "internal.segment.bytes";
    private static final String SEGMENT_BYTES = "4096";
    /** Producer batches must fit a segment (Kafka refuses larger ones with RecordBatchTooLargeException). */
    private static final Map<String, Object> SMALL_BATCHES = Map.of(ProducerConfig.BATCH_SIZE_CONFIG, 1024);
    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(1)
                .brokerProperty("log.retention.check.interval.ms", "100")
                .brokerProperty("log.cleaner.backoff.ms", "100")
                .brokerProperty("log.segment.delete.delay.ms", "0")
                .build().start();
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Test
    void sizeRetentionDeletesTheOldestSegments() throws Exception {
        String topic = "retention-size";
        TopicPartition tp = new TopicPartition(topic, 0);
        int retentionBytes = 8 * 1024;
        createTopic(topic, Map.of(SMALL_SEGMENTS, SEGMENT_BYTES, "retention.bytes", Integer.toString(retentionBytes)));
        Map<Long, String> acked = produce(topic, 300, i -> null, i -> System.currentTimeMillis());

        // Kafka's rule: delete the oldest segment while the rest still holds retention.bytes. A retention pass
        // may also have run while the records were being written, so wait for the final state, not the first move.
        UnifiedLog log = cluster.broker(0).logStore().log(tp).orElseThrow();
        Waits.waitFor("size retention to bring " + tp + " under retention.bytes plus one segment",
                () -> "log start " + log.logStartOffset() + ", size " + log.size() + ", first segment "
                        + log.logSegments().get(0).size(),
                state -> log.logStartOffset() > 0 && log.size() < retentionBytes + log.logSegments().get(0).size());
        assertTrue(log.size() >= retentionBytes, "retention keeps at least retention.bytes: " + log.size());
        long logStart = beginningOffset(tp);
        assertEquals(log.logStartOffset(), logStart, "ListOffsets(earliest) is the log start offset");
        assertRecordsFrom(tp, logStart, acked);
    }

    @Test
    void timeRetentionDeletesSegmentsOlderThanRetentionMsOnceConfigured() throws Exception {
        String topic = "retention-time";
        TopicPartition tp = new TopicPartition(topic, 0);
        createTopic(topic, Map.of(SMALL_SEGMENTS, SEGMENT_BYTES));
        long now = System.currentTimeMillis();
        long twoHoursAgo = now - Duration.ofHours(2).toMillis();
        Map<Long, String> acked = new TreeMap<>(produce(topic, 150, i -> null, i -> twoHoursAgo));
        acked.putAll(produce(topic, 50, i -> null, i -> System.currentTimeMillis()));
        long firstRecent = 150;
        assertEquals(0, beginningOffset(tp), "the default retention (7 days) keeps two-hour-old records");

        // Shorten retention on the live topic: the change reaches the log through the metadata image.
        try (Admin admin = cluster.admin()) {
            ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            admin.incrementalAlterConfigs(Map.of(r, List.of(new AlterConfigOp(
                    new ConfigEntry("retention.ms", Long.toString(Duration.ofHours(1).toMillis())),
                    AlterConfigOp.OpType.SET)))).all().get();
        }
        long logStart = Waits.waitFor("time retention to delete the two-hour-old segments of " + tp,
                () -> beginningOffset(tp), start -> start > 0);
        // Only segments whose newest record is older than retention.ms go: the one holding the first recent record
        // stays, so nothing recent is lost.
        assertTrue(logStart <= firstRecent, "log start " + logStart + " <= first recent offset " + firstRecent);
        UnifiedLog log = cluster.broker(0).logStore().log(tp).orElseThrow();
        assertTrue(log.logSegments().iterator().next().largestTimestamp() >= now,
                "the first remaining segment holds a recent record");
        assertRecordsFrom(tp, logStart, acked);
    }

    @Test
    void compactionKeepsTheLatestValuePerKeyAtItsOffsetAndDropsTombstones() throws Exception {
        String topic = "compacted";
        TopicPartition tp = new TopicPartition(topic, 0);
        long deleteRetentionMs = 1_000;
        createTopic(topic, Map.of("cleanup.policy", "compact", SMALL_SEGMENTS, SEGMENT_BYTES,
                "min.cleanable.dirty.ratio", "0.01", "delete.retention.ms", Long.toString(deleteRetentionMs)));
        int keys = 10;
        int rounds = 8;
        Map<Long, String> acked = produce(topic, keys * rounds, i -> "key-" + (i % keys),
                i -> System.currentTimeMillis());
        Map<String, Long> latestOffset = new HashMap<>();
        acked.forEach((offset, value) -> latestOffset.merge(keyOf(value), offset, Math::max));
        // Tombstones for two keys.
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(SMALL_BATCHES)) {
            for (String key : List.of("key-0", "key-1")) {
                producer.send(new ProducerRecord<>(topic, 0, bytes(key), null)).get();
            }
        }

        // Only segments behind the active one are cleaned: keep writing another key so the active segment moves
        // past everything above, and so later cleanings have dirty data to start them.
        Map<String, String> latest = Waits.waitFor("the cleaner to keep one record per key",
                () -> {
                    produceFiller(topic);
                    return latestValues(tp);
                },
                read -> read.entrySet().stream().filter(e -> !e.getKey().equals("filler"))
                        .allMatch(e -> e.getValue().split(",").length == 1)
                        && !read.containsKey("key-0:value") && !read.containsKey("key-1:value"),
                Duration.ofSeconds(30));
        for (int k = 2; k < keys; k++) {
            String key = "key-" + k;
            long offset = latestOffset.get(key);
            assertEquals(offset + "=" + acked.get(offset), latest.get(key), "latest value of " + key + " at its offset");
        }

        // Tombstones stay for delete.retention.ms after their first cleaning, then a later cleaning drops them.
        Waits.waitFor("the cleaner to drop the tombstones of key-0 and key-1", () -> {
            produceFiller(topic);
            return latestValues(tp);
        }, read -> !read.containsKey("key-0") && !read.containsKey("key-1"), Duration.ofSeconds(30));

        // Offsets are preserved: what is left sits at its original offsets, with gaps between.
        List<ConsumerRecord<byte[], byte[]>> remaining = readFrom(tp, beginningOffset(tp));
        long previous = -1;
        boolean gap = false;
        for (ConsumerRecord<byte[], byte[]> r : remaining) {
            gap |= previous >= 0 && r.offset() > previous + 1;
            previous = r.offset();
            String key = new String(r.key(), StandardCharsets.UTF_8);
            if (!key.equals("filler")) {
                assertNotNull(r.value(), "no tombstone left at offset " + r.offset());
                assertEquals(latestOffset.get(key), r.offset(), "offset of the latest value of " + key);
            }
        }
        assertTrue(gap, "the compacted log has offset gaps");
    }

    // ---- helpers ----

    private static void createTopic(String topic, Map<String, String> configs) throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(configs))).all().get();
        }
    }

    /** Produces values "topic-i-xxx…" (about 100 bytes) to partition 0; returns offset -> value as acknowledged. */
    private static Map<Long, String> produce(String topic, int count, IntFunction<String> key,
                                             IntToLongFunction timestamp) throws Exception {
        Map<Long, String> acked = new TreeMap<>();
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(SMALL_BATCHES)) {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            List<String> values = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String k = key.apply(i);
                String value = (k == null ? topic : k) + "-" + i + "-" + "x".repeat(80);
                values.add(value);
                futures.add(producer.send(new ProducerRecord<>(topic, 0, timestamp.applyAsLong(i),
                        k == null ? null : bytes(k), bytes(value))));
            }
            for (int i = 0; i < count; i++) {
                acked.put(futures.get(i).get().offset(), values.get(i));
            }
        }
        return acked;
    }

    private static void produceFiller(String topic) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(SMALL_BATCHES)) {
            for (int i = 0; i < 12; i++) {
                producer.send(new ProducerRecord<>(topic, 0, bytes("filler"), bytes("f".repeat(100))));
            }
            producer.flush();
        }
    }

    private static String keyOf(String value) {
        return value.substring(0, value.indexOf('-', "key-".length()));
    }

    /**
     * Key -> "offset=value" of each record in the partition, comma-joined when a key occurs more than once; a
     * tombstone shows as "offset=null", and "key:value" entries mark keys that still have a non-null value.
     */
    private static Map<String, String> latestValues(TopicPartition tp) {
        Map<String, String> out = new LinkedHashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : readFrom(tp, beginningOffset(tp))) {
            String key = new String(r.key(), StandardCharsets.UTF_8);
            String value = r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8);
            out.merge(key, r.offset() + "=" + value, (a, b) -> a + "," + b);
            if (value != null) {
                out.put(key + ":value", "present");
            }
        }
        return out;
    }

    private static long beginningOffset(TopicPartition tp) {
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of())) {
            return consumer.beginningOffsets(List.of(tp)).get(tp);
        }
    }

    /** Every record from {@code from} to the current end offset. */
    private static List<ConsumerRecord<byte[], byte[]>> readFrom(TopicPartition tp, long from) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of())) {
            consumer.assign(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            consumer.seek(tp, from);
            Waits.waitFor("to read " + tp + " from " + from + " to " + end, () -> {
                consumer.poll(Duration.ofMillis(100)).forEach(r -> {
                    if (r.offset() < end) {
                        out.add(r);
                    }
                });
                return consumer.position(tp);
            }, position -> position >= end);
        }
        return out;
    }

    /** The records from {@code logStart} on are exactly the acknowledged ones at those offsets, without gaps. */
    private static void assertRecordsFrom(TopicPartition tp, long logStart, Map<Long, String> acked) {
        Map<Long, String> expected = new TreeMap<>(((TreeMap<Long, String>) acked).tailMap(logStart));
        Map<Long, String> read = new TreeMap<>();
        readFrom(tp, logStart).forEach(r -> read.put(r.offset(), new String(r.value(), StandardCharsets.UTF_8)));
        assertEquals(expected, read, "records of " + tp + " from the log start " + logStart);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
