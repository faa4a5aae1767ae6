package io.twinlog.tests;

import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Produce/consume round trips through real kafka-clients: every codec, every acks level, several partitions. */
@Timeout(300)
class ProduceConsumeTest {
    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(1).build().start();
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @ParameterizedTest(name = "compression={0}")
    @ValueSource(strings = {"none", "gzip", "snappy", "lz4", "zstd"})
    void roundTripEachCompressionCodec(String codec) throws Exception {
        String topic = "codec-" + codec;
        createTopic(topic, 1);
        int count = 2_000;
        List<RecordMetadata> acked = produce(topic, count, Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec,
                ProducerConfig.LINGER_MS_CONFIG, 5));
        for (int i = 0; i < count; i++) {
            assertEquals(i, acked.get(i).offset(), "record " + i + " acked at its position");
        }
        List<ConsumerRecord<byte[], byte[]>> read = readAll(new TopicPartition(topic, 0), count);
        for (int i = 0; i < count; i++) {
            ConsumerRecord<byte[], byte[]> r = read.get(i);
            assertEquals(i, r.offset());
            assertEquals("key-" + i, new String(r.key(), StandardCharsets.UTF_8));
            assertEquals(value(i), new String(r.value(), StandardCharsets.UTF_8));
            assertArrayEquals(("h" + i).getBytes(StandardCharsets.UTF_8), r.headers().lastHeader("h").value());
        }
    }

    @ParameterizedTest(name = "acks={0}")
    @ValueSource(strings = {"0", "1", "all"})
    void everyAcksLevelDelivers(String acks) throws Exception {
        String topic = "acks-" + acks;
        createTopic(topic, 3);
        int count = 900;
        Map<String, Object> cfg = Map.of(ProducerConfig.ACKS_CONFIG, acks,
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, acks.equals("all"));
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(cfg)) {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                futures.add(producer.send(new ProducerRecord<>(topic, i % 3, bytes("key-" + i), bytes(value(i)))));
            }
            for (Future<RecordMetadata> f : futures) {
                f.get();
            }
        }
        int total = 0;
        for (int p = 0; p < 3; p++) {
            List<ConsumerRecord<byte[], byte[]>> read = readAll(new TopicPartition(topic, p), count / 3);
            for (int i = 0; i < read.size(); i++) {
                assertEquals(i, read.get(i).offset());
                int n = Integer.parseInt(new String(read.get(i).key(), StandardCharsets.UTF_8).substring(4));
                assertEquals(p, n % 3, "record " + n + " on its partition");
            }
            total += read.size();
        }
        assertEquals(count, total);
    }

    @Test
    void autoCreatedTopicIsUsable() throws Exception {
        List<RecordMetadata> acked = produce("auto-created", 10, Map.of());
        assertEquals(9, acked.get(9).offset());
        assertEquals(10, readAll(new TopicPartition("auto-created", 0), 10).size());
    }

    /**
     * As Kafka does, the Metadata request that triggers an auto-creation is answered at once with
     * LEADER_NOT_AVAILABLE (the topic is written on an admin thread, not while a request thread waits), and the
     * topic is served soon after.
     */
    @Test
    void autoCreationAnswersAtOnceAndTheTopicFollows() throws Exception {
        String topic = "auto-created-async";
        try (RawKafkaConnection c = RawKafkaConnection.to(cluster.bootstrapServers())) {
            MetadataResponse first = c.send(new MetadataRequest.Builder(List.of(topic), true)
                    .build(ApiKeys.METADATA.latestVersion()));
            assertEquals(Errors.LEADER_NOT_AVAILABLE.code(), first.data().topics().find(topic).errorCode(),
                    "first answer: " + first.data());
        }
        Waits.waitUntil(topic + " served", () -> {
            try {
                KafkaRequests.assertServes(cluster.bootstrapServers(), topic, "after auto-creation");
                return true;
            } catch (AssertionError e) {
                return false;
            }
        });
    }

    static void createTopic(String topic, int partitions) throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
    }

    static List<RecordMetadata> produce(String topic, int count, Map<String, Object> overrides) throws Exception {
        List<RecordMetadata> out = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(overrides)) {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, 0, bytes("key-" + i), bytes(value(i)));
                r.headers().add(new RecordHeader("h", bytes("h" + i)));
                futures.add(producer.send(r));
            }
            for (Future<RecordMetadata> f : futures) {
                out.add(f.get());
            }
        }
        return out;
    }

    static List<ConsumerRecord<byte[], byte[]>> readAll(TopicPartition tp, int expected) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + 30_000;
            while (out.size() < expected && System.currentTimeMillis() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        assertEquals(expected, out.size(), "records read back from " + tp);
        return out;
    }

    static String value(int i) {
        return "value-" + i + "-" + "x".repeat(i % 50);
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
