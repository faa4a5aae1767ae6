package io.twinlog.tests.kafka.clients;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import io.twinlog.tests.kafka.clients.ClientScripts.Script;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The most common non-Java clients — librdkafka through confluent-kafka-python and kcat, and kafkajs — run their
 * scripts ({@code src/test/clients}) against Twinlog and against Apache Kafka 4.4 in the same class, so a failure on
 * Twinlog alone is Twinlog's and a failure on both is the client's. Records are checked one by one by the scripts,
 * and the batches are checked compressed on disk here.
 */
@Timeout(300)
class NonJavaClientsTest {
    private static final Duration SCRIPT_TIMEOUT = Duration.ofSeconds(120);
    private static final int RECORDS = 10_000;
    private static final AtomicInteger TOPICS = new AtomicInteger();
    private static KafkaClusterTestKit kafka;
    private static TestCluster twinlog;

    /** Which broker a script talks to. */
    enum Target { TWINLOG, KAFKA }

    @BeforeAll
    static void start() throws Exception {
        kafka = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
                .setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1).build())
                .setConfigProp("offsets.topic.replication.factor", "1")
                .setConfigProp("offsets.topic.num.partitions", "1")
                .setConfigProp("transaction.state.log.replication.factor", "1")
                .setConfigProp("transaction.state.log.min.isr", "1")
                .setConfigProp("group.initial.rebalance.delay.ms", "0").build();
        kafka.format();
        kafka.startup();
        kafka.waitForReadyBrokers();
        twinlog = TestCluster.builder().brokers(1)
                .brokerProperty("offsets.topic.num.partitions", "1")
                .brokerProperty("group.initial.rebalance.delay.ms", "0").build().start();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (twinlog != null) {
                twinlog.close();
            }
        } finally {
            if (kafka != null) {
                kafka.close();
            }
        }
    }

    static Stream<Arguments> librdkafkaCodecs() {
        return withTargets(List.of(List.of("none"), List.of("gzip"), List.of("snappy"), List.of("lz4"),
                List.of("zstd")));
    }

    static Stream<Arguments> scripts() {
        return withTargets(List.of(List.of(Script.PYTHON), List.of(Script.NODE)));
    }

    /** Every codec each client has: librdkafka's five, kafkajs's four (no zstd). */
    static Stream<Arguments> scriptCodecs() {
        List<List<Object>> cases = new ArrayList<>();
        for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) {
            cases.add(List.of(Script.PYTHON, codec));
        }
        for (String codec : List.of("none", "gzip", "snappy", "lz4")) {
            cases.add(List.of(Script.NODE, codec));
        }
        return withTargets(cases);
    }

    /** librdkafka's range and cooperative-sticky assignors; kafkajs's default (its script takes no assignor). */
    static Stream<Arguments> scriptAssignors() {
        return withTargets(List.of(List.of(Script.PYTHON, "range"), List.of(Script.PYTHON, "cooperative-sticky"),
                List.of(Script.NODE, "default")));
    }

    /** Each case once against Twinlog and once against Kafka: (target, case...). */
    private static Stream<Arguments> withTargets(List<? extends List<?>> cases) {
        List<Arguments> out = new ArrayList<>();
        for (Target target : Target.values()) {
            for (List<?> c : cases) {
                List<Object> args = new ArrayList<>();
                args.add(target);
                args.addAll(c);
                out.add(Arguments.of(args.toArray()));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{arguments}")
    @MethodSource("scripts")
    void metadataAndAdmin(Target target, Script script) throws Exception {
        script.assumeInstalled();
        String out = script.run(SCRIPT_TIMEOUT, bootstrap(target), "admin", newTopicName(script.prefix() + "-admin"));
        assertTrue(out.startsWith("OK admin"), out);
    }

    @ParameterizedTest(name = "{arguments}")
    @MethodSource("scriptCodecs")
    void producesAndConsumesEveryCodec(Target target, Script script, String codec) throws Exception {
        script.assumeInstalled();
        String topic = createTopic(target, script.prefix() + "-" + codec, 1);
        String out = script.run(SCRIPT_TIMEOUT, bootstrap(target), "roundtrip", topic, codec,
                Integer.toString(RECORDS));
        assertTrue(out.startsWith("OK roundtrip"), out);
        assertCompressedOnDisk(target, topic, codec);
    }

    @ParameterizedTest(name = "{arguments}")
    @MethodSource("scripts")
    void startsFromBeginningEndAndTimestampWithWatermarks(Target target, Script script) throws Exception {
        script.assumeInstalled();
        String out = script.run(SCRIPT_TIMEOUT, bootstrap(target), "positions",
                createTopic(target, script.prefix() + "-positions", 1));
        assertTrue(out.startsWith("OK positions"), out);
    }

    @ParameterizedTest(name = "{arguments}")
    @MethodSource("scripts")
    void idempotentProducer(Target target, Script script) throws Exception {
        script.assumeInstalled();
        String out = script.run(SCRIPT_TIMEOUT, bootstrap(target), "idempotent",
                createTopic(target, script.prefix() + "-idempotent", 1), "2000");
        assertTrue(out.startsWith("OK idempotent"), out);
    }

    @ParameterizedTest(name = "{arguments}")
    @MethodSource("scriptAssignors")
    void consumerGroupCommitsResumesAndLeavesCleanly(Target target, Script script, String assignor)
            throws Exception {
        script.assumeInstalled();
        String out = script.run(SCRIPT_TIMEOUT, bootstrap(target), "group", newTopicName(script.prefix() + "-group"),
                newTopicName(script.prefix() + "-group-" + assignor), assignor);
        assertTrue(out.startsWith("OK group"), out);
    }

    @ParameterizedTest(name = "{arguments}")
    @EnumSource(Target.class)
    void kcatListsMetadata(Target target) throws Exception {
        ClientScripts.assumeKcat();
        String topic = createTopic(target, "kcat-metadata", 2);
        String json = kcat("-L", "-J", "-b", bootstrap(target), "-t", topic);
        assertTrue(json.contains("\"topic\":\"" + topic + "\"") && json.contains("\"partition\":1"), json);
    }

    /**
     * A committed, an aborted and a committed transaction from each client: its read_committed consumer sees the
     * committed records only (the scripts check them one by one); after librdkafka's, kcat reading read_committed
     * sees the same.
     */
    @ParameterizedTest(name = "{arguments}")
    @MethodSource("scripts")
    void transactionsCommitAndAbort(Target target, Script script) throws Exception {
        script.assumeInstalled();
        String topic = createTopic(target, script.prefix() + "-transactions", 1);
        String out = script.run(SCRIPT_TIMEOUT, bootstrap(target), "transactions", topic, "500");
        assertTrue(out.startsWith("OK transactions"), out);
        if (script == Script.PYTHON && ClientScripts.hasKcat()) {
            List<String> committed = kcat("-C", "-b", bootstrap(target), "-t", topic, "-p", "0", "-o", "beginning",
                    "-e", "-X", "isolation.level=read_committed", "-f", "%s\n").lines().toList();
            assertEquals(501, committed.size(), committed.subList(0, Math.min(3, committed.size())).toString());
            assertTrue(committed.stream().noneMatch(v -> v.startsWith("a")), "an aborted record was read");
        }
    }

    @ParameterizedTest(name = "{arguments}")
    @MethodSource("librdkafkaCodecs")
    void kcatProducesAndConsumesEveryCodec(Target target, String codec) throws Exception {
        ClientScripts.assumeKcat();
        String topic = createTopic(target, "kcat-" + codec, 1);
        StringBuilder input = new StringBuilder();
        for (int i = 0; i < RECORDS; i++) {
            input.append('k').append(i).append(":v").append(i).append('\n');
        }
        ClientScripts.run(List.of("kcat", "-P", "-b", bootstrap(target), "-t", topic, "-p", "0", "-K", ":", "-z", codec,
                "-X", "linger.ms=20"), input.toString(), ClientScripts.SCRIPTS.toFile(), SCRIPT_TIMEOUT);
        List<String> lines = kcat("-C", "-b", bootstrap(target), "-t", topic, "-p", "0", "-o", "beginning", "-e",
                "-f", "%o %k %s\n").lines().toList();
        assertEquals(RECORDS, lines.size());
        for (int i = 0; i < RECORDS; i++) {
            assertEquals(i + " k" + i + " v" + i, lines.get(i));
        }
        assertCompressedOnDisk(target, topic, codec);
    }

    @ParameterizedTest(name = "{arguments}")
    @EnumSource(Target.class)
    void kcatStartsFromBeginningEndAndTimestampWithWatermarks(Target target) throws Exception {
        ClientScripts.assumeKcat();
        String topic = createTopic(target, "kcat-positions", 1);
        long base = System.currentTimeMillis() - 3_600_000L;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers",
                bootstrap(target)), new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < 100; i++) {
                producer.send(new ProducerRecord<>(topic, 0, base + i * 1000L, null, ("v" + i).getBytes()));
            }
        }
        String b = bootstrap(target);
        assertEquals("0 v0", kcat("-C", "-b", b, "-t", topic, "-p", "0", "-o", "beginning", "-c", "1", "-e",
                "-f", "%o %s\n").strip());
        assertEquals("99 v99", kcat("-C", "-b", b, "-t", topic, "-p", "0", "-o", "-1", "-e", "-f", "%o %s\n")
                .strip(), "one before the end");
        assertEquals("", kcat("-C", "-b", b, "-t", topic, "-p", "0", "-o", "end", "-e", "-f", "%o %s\n").strip());
        assertEquals("50 v50", kcat("-C", "-b", b, "-t", topic, "-p", "0", "-o", "s@" + (base + 50_000), "-c", "1",
                "-e", "-f", "%o %s\n").strip());
        assertTrue(kcat("-Q", "-b", b, "-t", topic + ":0:" + (base + 50_000)).contains("offset 50"), "query by time");
        assertTrue(kcat("-Q", "-b", b, "-t", topic + ":0:-1").contains("offset 100"), "high watermark");
        assertTrue(kcat("-Q", "-b", b, "-t", topic + ":0:-2").contains("offset 0"), "low watermark");
    }

    private static String kcat(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("kcat"));
        cmd.addAll(List.of(args));
        return ClientScripts.run(cmd, null, ClientScripts.SCRIPTS.toFile(), SCRIPT_TIMEOUT);
    }

    /**
     * The client's codec is on disk: every batch is compressed with it, except that librdkafka writes its first
     * batches uncompressed until it has learnt the broker's Produce versions (against Kafka too), so those may be
     * uncompressed; most records must be in compressed batches.
     */
    private static void assertCompressedOnDisk(Target target, String topic, String codec) throws Exception {
        List<SegmentBatches.Batch> batches = SegmentBatches.read(logDir(target), new TopicPartition(topic, 0));
        CompressionType expected = CompressionType.forName(codec);
        long total = batches.stream().mapToLong(SegmentBatches.Batch::records).sum();
        long compressed = batches.stream().filter(b -> b.compressionType() == expected)
                .mapToLong(SegmentBatches.Batch::records).sum();
        assertEquals(RECORDS, total, "records on disk of " + target);
        assertTrue(batches.stream().allMatch(b -> b.compressionType() == expected
                || b.compressionType() == CompressionType.NONE), "batches on disk of " + target + ": " + batches);
        assertTrue(compressed * 2 > total, "most records " + codec + "-compressed on disk of " + target + ": "
                + batches);
    }

    static String bootstrap(Target target) {
        return target == Target.TWINLOG ? twinlog.bootstrapServers() : kafka.bootstrapServers();
    }

    private static File logDir(Target target) {
        if (target == Target.TWINLOG) {
            return twinlog.logDir(0);
        }
        return new File(kafka.nodes().brokerNodes().values().iterator().next().logDataDirectories().iterator().next());
    }

    static String newTopicName(String prefix) {
        return prefix + "-" + TOPICS.incrementAndGet();
    }

    /** A new topic on the target (created here, so each script starts on an empty, led partition). */
    static String createTopic(Target target, String prefix, int partitions) throws Exception {
        String topic = newTopicName(prefix);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap(target)))) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
            Waits.waitUntil(topic + " led on " + target, () -> admin.describeTopics(List.of(topic))
                    .allTopicNames().get().get(topic).partitions().stream().allMatch(p -> p.leader() != null));
        }
        return topic;
    }
}
