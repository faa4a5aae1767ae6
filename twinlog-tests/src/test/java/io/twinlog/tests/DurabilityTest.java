package io.twinlog.tests;

import io.twinlog.testkit.BrokerProcess;
import io.twinlog.testkit.BrokerProcesses;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.FileLogInputStream;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Durability across process death: a broker in its own JVM ({@link BrokerProcess}) is killed with SIGKILL or
 * stopped with SIGTERM and restarted from the same data dir, and every acknowledged record must be readable at its
 * acknowledged offset afterwards.
 *
 * <p>SIGKILL keeps the OS page cache, so these tests check the broker's recovery logic (log recovery, high-watermark
 * and recovery-point checkpoints, topic metadata), not fsync; the torn-tail test stands in for the page cache being
 * lost mid-write.
 */
@Timeout(300)
class DurabilityTest {
    private static final int PARTITIONS = 3;

    /** Kills the broker after each test, and prints its log tail first when the test failed. */
    @RegisterExtension
    final BrokerProcesses processes = new BrokerProcesses("durability");
    private BrokerProcess broker;

    private void startBroker(Map<String, String> properties) throws IOException {
        Map<String, String> p = new HashMap<>();
        // A restart after SIGKILL waits for ZooKeeper to expire the dead broker's session; keep that short.
        p.put("zookeeper.session.timeout.ms", "3000");
        p.putAll(properties);
        broker = processes.start("broker", p);
    }

    @Test
    void ackedRecordsAndHighWatermarkSurviveKillNine() throws Exception {
        startBroker(Map.of());
        Map<String, Uuid> topicIds;
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic("acks-one", PARTITIONS, (short) 1),
                    new NewTopic("acks-all", PARTITIONS, (short) 1).configs(Map.of("retention.ms", "123456789"))))
                    .all().get();
            topicIds = topicIds(admin, List.of("acks-one", "acks-all"));
        }
        Map<TopicPartition, TreeMap<Long, String>> acked = new HashMap<>();
        produce("acks-one", 1_500, Map.of(ProducerConfig.ACKS_CONFIG, "1",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false), acked);
        produce("acks-all", 1_500, Map.of(ProducerConfig.ACKS_CONFIG, "all"), acked);

        broker.kill();
        broker.start();

        assertAckedRecordsReadable(acked);
        try (Admin admin = admin()) {
            assertEquals(topicIds, topicIds(admin, List.of("acks-one", "acks-all")), "topic IDs after kill -9");
            assertEquals("123456789", topicConfig(admin, "acks-all").get("retention.ms").value());
        }
        // The log continues at the acknowledged end, not at a recovered-but-unacknowledged offset.
        Map<TopicPartition, TreeMap<Long, String>> more = new HashMap<>();
        produce("acks-all", 30, Map.of(ProducerConfig.ACKS_CONFIG, "all"), more);
        for (Map.Entry<TopicPartition, TreeMap<Long, String>> e : more.entrySet()) {
            assertEquals(lastOffset(acked.get(e.getKey())) + 1, first(e.getValue()),
                    "first offset after restart on " + e.getKey());
            acked.get(e.getKey()).putAll(e.getValue());
        }

        // A clean stop writes the high-watermark checkpoint with every partition's high watermark.
        assertEquals(0, broker.terminate(), "exit code after SIGTERM");
        Map<TopicPartition, Long> highWatermarks = readCheckpoint(LogStoreFiles.HIGH_WATERMARK);
        assertEquals(expectedEndOffsets(acked), highWatermarks, "replication-offset-checkpoint after SIGTERM");
    }

    @Test
    void tornTailIsTruncatedToTheLastCompleteBatch() throws Exception {
        startBroker(Map.of());
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic("torn", 2, (short) 1))).all().get();
        }
        Map<TopicPartition, TreeMap<Long, String>> acked = new HashMap<>();
        produce("torn", 1_000, Map.of(ProducerConfig.ACKS_CONFIG, "all"), acked);
        // A second, small produce so the last batch of each partition holds only part of its records.
        produce("torn", 20, Map.of(ProducerConfig.ACKS_CONFIG, "all"), acked);
        broker.kill();

        // Partition 0: garbage after the last batch (a write that reached the file but not as a whole batch).
        TopicPartition garbage = new TopicPartition("torn", 0);
        File segment0 = activeSegment(garbage);
        long completeLength0 = segment0.length();
        byte[] junk = new byte[100];
        Arrays.fill(junk, (byte) 0x5A);
        try (RandomAccessFile f = new RandomAccessFile(segment0, "rw")) {
            f.seek(f.length());
            f.write(junk);
        }
        // Partition 1: the last batch cut short by a few bytes (a torn write of the final batch).
        TopicPartition torn = new TopicPartition("torn", 1);
        File segment1 = activeSegment(torn);
        long lastBatchBaseOffset;
        long lastBatchPosition;
        try (FileRecords records = FileRecords.open(segment1)) {
            FileLogInputStream.FileChannelRecordBatch last = null;
            for (FileLogInputStream.FileChannelRecordBatch b : records.batches()) {
                last = b;
            }
            lastBatchBaseOffset = last.baseOffset();
            lastBatchPosition = last.position();
        }
        try (RandomAccessFile f = new RandomAccessFile(segment1, "rw")) {
            f.setLength(f.length() - 7);
        }
        TreeMap<Long, String> survivors = new TreeMap<>(acked.get(torn).headMap(lastBatchBaseOffset));
        assertTrue(survivors.size() > 0 && survivors.size() < acked.get(torn).size(),
                "the torn batch holds some but not all records of " + torn);
        acked.put(torn, survivors);

        broker.start();

        assertAckedRecordsReadable(acked);
        // Recovery cut the files themselves back to the end of their last complete batch.
        assertEquals(completeLength0, segment0.length(), "length of " + segment0 + " after recovery");
        assertEquals(lastBatchPosition, segment1.length(), "length of " + segment1 + " after recovery");
        Map<TopicPartition, TreeMap<Long, String>> more = new HashMap<>();
        produce("torn", 40, Map.of(ProducerConfig.ACKS_CONFIG, "all"), more);
        assertEquals(lastOffset(acked.get(garbage)) + 1, first(more.get(garbage)),
                "next offset after garbage was cut from " + garbage);
        assertEquals(lastBatchBaseOffset, first(more.get(torn)), "next offset after the torn batch of " + torn);
        more.forEach((tp, records) -> acked.get(tp).putAll(records));
        assertAckedRecordsReadable(acked);
    }

    @Test
    void flushEveryMessageLosesNothingAckedOnKillNine() throws Exception {
        startBroker(Map.of("log.flush.interval.messages", "1"));
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic("flushed", PARTITIONS, (short) 1))).all().get();
        }
        Map<TopicPartition, TreeMap<Long, String>> acked = new HashMap<>();
        produce("flushed", 600, Map.of(ProducerConfig.ACKS_CONFIG, "1"), acked);
        broker.kill(); // right after the last acknowledgement

        broker.start();
        assertAckedRecordsReadable(acked);
    }

    @Test
    void sigtermShutsDownCleanlyAndRestartNeedsNoRecovery() throws Exception {
        startBroker(Map.of());
        Map<String, Uuid> topicIds;
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic("clean", PARTITIONS, (short) 1)
                    .configs(Map.of("retention.bytes", "1073741824", "max.message.bytes", "500000")))).all().get();
            topicIds = topicIds(admin, List.of("clean"));
        }
        Map<TopicPartition, TreeMap<Long, String>> acked = new HashMap<>();
        produce("clean", 900, Map.of(ProducerConfig.ACKS_CONFIG, "all"), acked);

        assertEquals(0, broker.terminate(), "exit code after SIGTERM");
        Map<TopicPartition, Long> logEndOffsets = expectedEndOffsets(acked);
        File logDir = broker.logDir();
        assertTrue(new File(logDir, ".kafka_cleanshutdown").isFile(), "clean shutdown marker in " + logDir);
        assertEquals(logEndOffsets, readCheckpoint(LogStoreFiles.RECOVERY_POINT),
                "recovery points equal the log end offsets, so nothing is left to recover");
        assertEquals(logEndOffsets, readCheckpoint(LogStoreFiles.HIGH_WATERMARK), "high watermarks");

        broker.start();
        assertTrue(!new File(logDir, ".kafka_cleanshutdown").exists(),
                "the clean shutdown marker is consumed at start-up");
        assertAckedRecordsReadable(acked);
        try (Admin admin = admin()) {
            assertEquals(topicIds, topicIds(admin, List.of("clean")), "topic IDs after a clean restart");
            Config config = topicConfig(admin, "clean");
            assertEquals("1073741824", config.get("retention.bytes").value());
            assertEquals("500000", config.get("max.message.bytes").value());
            assertEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, config.get("retention.bytes").source());
        }
    }

    // ---- scenario helpers ----

    /** Checkpoint files in a log dir, written in Kafka's format. */
    private enum LogStoreFiles {
        HIGH_WATERMARK("replication-offset-checkpoint"),
        RECOVERY_POINT("recovery-point-offset-checkpoint");

        final String fileName;

        LogStoreFiles(String fileName) {
            this.fileName = fileName;
        }
    }

    private Map<TopicPartition, Long> readCheckpoint(LogStoreFiles which) throws IOException {
        File f = new File(broker.logDir(), which.fileName);
        assertTrue(f.isFile(), f + " exists");
        return new HashMap<>(new OffsetCheckpointFile(f, new LogDirFailureChannel(1)).read());
    }

    private File activeSegment(TopicPartition tp) {
        File dir = new File(broker.logDir(), tp.topic() + "-" + tp.partition());
        File[] logs = dir.listFiles((d, name) -> name.endsWith(".log"));
        assertTrue(logs != null && logs.length > 0, "segments in " + dir);
        return Arrays.stream(logs).max((a, b) -> a.getName().compareTo(b.getName())).orElseThrow();
    }

    private Admin admin() {
        return broker.admin();
    }

    private static Map<String, Uuid> topicIds(Admin admin, Collection<String> topics) throws Exception {
        Map<String, Uuid> out = new TreeMap<>();
        for (TopicDescription d : admin.describeTopics(topics).allTopicNames().get().values()) {
            out.put(d.name(), d.topicId());
        }
        return out;
    }

    private static Config topicConfig(Admin admin, String topic) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        return admin.describeConfigs(List.of(r)).all().get().get(r);
    }

    /** Produces {@code count} records round-robin over the partitions and records each acknowledged offset. */
    private void produce(String topic, int count, Map<String, Object> overrides,
                         Map<TopicPartition, TreeMap<Long, String>> acked) throws Exception {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 20_000);
        p.putAll(overrides);
        int partitions;
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        List<String> values = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            partitions = producer.partitionsFor(topic).size();
            for (int i = 0; i < count; i++) {
                String value = topic + "-" + System.nanoTime() + "-" + i;
                values.add(value);
                futures.add(producer.send(new ProducerRecord<>(topic, i % partitions, null,
                        value.getBytes(StandardCharsets.UTF_8))));
            }
            for (int i = 0; i < count; i++) {
                RecordMetadata m = futures.get(i).get();
                acked.computeIfAbsent(new TopicPartition(topic, m.partition()), tp -> new TreeMap<>())
                        .put(m.offset(), values.get(i));
            }
        }
    }

    /**
     * Reads every given partition from the beginning and checks that each acknowledged record is there at its
     * offset, nothing else is, and that ListOffsets(latest) equals the acknowledged end.
     */
    private void assertAckedRecordsReadable(Map<TopicPartition, TreeMap<Long, String>> acked) {
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        Map<TopicPartition, Long> expectedEnd = expectedEndOffsets(acked);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            Map<TopicPartition, Long> end = Waits.waitFor("ListOffsets(latest) after restart",
                    () -> consumer.endOffsets(acked.keySet(), Duration.ofSeconds(5)), e -> e.equals(expectedEnd));
            assertEquals(expectedEnd, end, "latest offsets equal the acknowledged ends");
            consumer.assign(acked.keySet());
            consumer.seekToBeginning(acked.keySet());
            Map<TopicPartition, TreeMap<Long, String>> read = new HashMap<>();
            acked.keySet().forEach(tp -> read.put(tp, new TreeMap<>()));
            Waits.waitFor("consumer to reach the acknowledged ends " + expectedEnd, () -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    read.get(new TopicPartition(r.topic(), r.partition()))
                            .put(r.offset(), new String(r.value(), StandardCharsets.UTF_8));
                }
                Map<TopicPartition, Long> positions = new HashMap<>();
                acked.keySet().forEach(tp -> positions.put(tp, consumer.position(tp)));
                return positions;
            }, positions -> positions.equals(expectedEnd));
            for (TopicPartition tp : acked.keySet()) {
                assertEquals(acked.get(tp), read.get(tp), "records of " + tp);
            }
        }
    }

    private static Map<TopicPartition, Long> expectedEndOffsets(Map<TopicPartition, TreeMap<Long, String>> acked) {
        Map<TopicPartition, Long> out = new HashMap<>();
        acked.forEach((tp, records) -> out.put(tp, lastOffset(records) + 1));
        return out;
    }

    private static long lastOffset(TreeMap<Long, String> records) {
        return records.lastKey();
    }

    private static long first(TreeMap<Long, String> records) {
        return records.firstKey();
    }
}
