package io.twinlog.tests;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.TestDirectories;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Apache Kafka's own command-line tools (kafka-tools 4.4.0) against a Twinlog broker: kafka-topics, the console
 * producer and consumer, and kafka-configs. Each tool runs in its own JVM on the test classpath, so its
 * {@code Exit.exit} cannot end the test JVM, and the test checks exit codes and output as an operator would see them.
 */
@Timeout(300)
class KafkaToolsTest {
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(60);
    private static TestCluster cluster;
    private static File workDir;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(1).build().start();
        workDir = TestDirectories.create("tools");
    }

    @AfterAll
    static void stop() {
        cluster.close();
        TestDirectories.delete(workDir);
    }

    @Test
    void topicCommandCreatesListsDescribesAltersAndDeletes() throws Exception {
        String topic = "tools-topic";
        ToolResult create = topics("--create", "--topic", topic, "--partitions", "2", "--replication-factor", "1",
                "--config", "retention.ms=3600000");
        create.assertSuccess();
        assertTrue(create.stdout().contains("Created topic " + topic + "."), create.toString());

        ToolResult list = topics("--list");
        list.assertSuccess();
        assertTrue(list.stdoutLines().contains(topic), list.toString());

        String topicId;
        try (Admin admin = cluster.admin()) {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            topicId = d.topicId().toString();
        }
        ToolResult describe = topics("--describe", "--topic", topic);
        describe.assertSuccess();
        String header = describe.stdoutLines().get(0);
        assertTrue(header.contains("Topic: " + topic) && header.contains("TopicId: " + topicId)
                && header.contains("PartitionCount: 2") && header.contains("ReplicationFactor: 1")
                && header.contains("retention.ms=3600000"), describe.toString());
        for (int p = 0; p < 2; p++) {
            String partition = "Partition: " + p + "\tLeader: 0\tReplicas: 0\tIsr: 0";
            assertTrue(describe.stdoutLines().stream().anyMatch(l -> l.contains(partition)),
                    "line with '" + partition + "' in " + describe);
        }

        topics("--alter", "--topic", topic, "--partitions", "3").assertSuccess();
        try (Admin admin = cluster.admin()) {
            assertEquals(3, admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size());
        }

        ToolResult createAgain = topics("--create", "--topic", topic, "--partitions", "1");
        assertEquals(1, createAgain.exitCode(), createAgain.toString());
        assertTrue(createAgain.all().contains("Topic '" + topic + "' already exists."), createAgain.toString());

        topics("--delete", "--topic", topic).assertSuccess();
        ToolResult listAfter = topics("--list");
        listAfter.assertSuccess();
        assertFalse(listAfter.stdoutLines().contains(topic), listAfter.toString());
        ToolResult describeMissing = topics("--describe", "--topic", topic);
        assertEquals(1, describeMissing.exitCode(), describeMissing.toString());
        assertTrue(describeMissing.all().contains("Topic '" + topic + "' does not exist"), describeMissing.toString());
    }

    @Test
    void consoleProducerThenConsoleConsumerWithoutAGroup() throws Exception {
        String topic = "tools-console";
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        int count = 50;
        List<String> lines = IntStream.range(0, count).mapToObj(i -> "key-" + i + ":value-" + i)
                .collect(Collectors.toList());
        ToolResult produce = runTool("org.apache.kafka.tools.ConsoleProducer", String.join("\n", lines) + "\n",
                "--bootstrap-server", cluster.bootstrapServers(), "--topic", topic,
                "--reader-property", "parse.key=true", "--reader-property", "key.separator=:");
        produce.assertSuccess();

        // No --group: the tool picks a random group.id with auto-commit off and assign()s the partition, so no
        // group coordinator is needed.
        ToolResult consume = runTool("org.apache.kafka.tools.consumer.ConsoleConsumer", null,
                "--bootstrap-server", cluster.bootstrapServers(), "--topic", topic, "--partition", "0",
                "--offset", "earliest", "--max-messages", Integer.toString(count),
                "--formatter-property", "print.key=true", "--formatter-property", "key.separator=:",
                "--formatter-property", "print.offset=true");
        consume.assertSuccess();
        // key.separator also separates the offset from the key
        List<String> expected = IntStream.range(0, count).mapToObj(i -> "Offset:" + i + ":key-" + i + ":value-" + i)
                .collect(Collectors.toList());
        assertEquals(expected, consume.stdoutLines(), consume.toString());
        assertTrue(consume.stderr().contains("Processed a total of " + count + " messages"), consume.toString());

        // The console producer's records are ordinary records to a Kafka client.
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of())) {
            consumer.assign(List.of(tp));
            assertEquals(count, consumer.endOffsets(List.of(tp)).get(tp));
            consumer.seekToBeginning(List.of(tp));
            List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
            long deadline = System.currentTimeMillis() + 30_000;
            while (read.size() < count && System.currentTimeMillis() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
            }
            assertEquals(count, read.size());
            assertEquals("key-7", new String(read.get(7).key(), StandardCharsets.UTF_8));
            assertEquals("value-7", new String(read.get(7).value(), StandardCharsets.UTF_8));
        }
    }

    @Test
    void configCommandAltersAndDescribesTopicConfigs() throws Exception {
        String topic = "tools-configs";
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        ToolResult alter = configs("--entity-type", "topics", "--entity-name", topic, "--alter",
                "--add-config", "retention.ms=1234,max.message.bytes=65536");
        alter.assertSuccess();
        assertTrue(alter.stdout().contains("Completed updating config for topic " + topic + "."), alter.toString());

        ToolResult describe = configs("--entity-type", "topics", "--entity-name", topic, "--describe");
        describe.assertSuccess();
        assertTrue(describe.stdout().contains("Dynamic configs for topic " + topic + " are:"), describe.toString());
        assertTrue(describe.stdoutLines().stream().anyMatch(l -> l.trim().startsWith("retention.ms=1234 ")
                && l.contains("DYNAMIC_TOPIC_CONFIG:retention.ms=1234")), describe.toString());
        assertTrue(describe.stdoutLines().stream().anyMatch(l -> l.trim().startsWith("max.message.bytes=65536 ")),
                describe.toString());

        configs("--entity-type", "topics", "--entity-name", topic, "--alter", "--delete-config", "max.message.bytes")
                .assertSuccess();
        try (Admin admin = cluster.admin()) {
            ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            Config config = admin.describeConfigs(List.of(r)).all().get().get(r);
            assertEquals("1234", config.get("retention.ms").value());
            assertEquals("1048588", config.get("max.message.bytes").value(), "back to the default");
        }
    }

    /**
     * An operator's reassignment runbook: --execute, then --verify until completed. Kafka's --verify also clears
     * every broker's replication throttle (an IncrementalAlterConfigs DELETE on the broker), which Twinlog, having
     * no dynamic broker configs then, once refused: the tool printed an error and exited 1 after a finished
     * reassignment. Setting a throttle is refused with the reason: Twinlog applies no replication throttle.
     */
    @Test
    void reassignPartitionsCommandExecutesAndVerifies() throws Exception {
        String topic = "tools-reassign";
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        Path plan = workDir.toPath().resolve("reassign.json");
        Files.writeString(plan, "{\"version\":1,\"partitions\":[{\"topic\":\"" + topic
                + "\",\"partition\":0,\"replicas\":[0]}]}");
        reassign("--execute", "--reassignment-json-file", plan.toString()).assertSuccess();
        ToolResult verify = reassign("--verify", "--reassignment-json-file", plan.toString());
        verify.assertSuccess();
        assertTrue(verify.stdout().contains("Reassignment of partition " + topic + "-0 is completed.")
                && verify.stdout().contains("Clearing broker-level throttles on broker 0"), verify.toString());

        ToolResult throttled = reassign("--execute", "--reassignment-json-file", plan.toString(), "--throttle",
                "1000000");
        assertTrue(throttled.exitCode() != 0 && throttled.all().contains(
                "Twinlog cannot update these configs dynamically: [follower.replication.throttled.rate, "
                        + "leader.replication.throttled.rate]"),
                "setting a broker throttle is refused with the reason: " + throttled);
    }

    /** kafka-transactions.sh describe-producers lists an idempotent producer that wrote to the partition. */
    @Test
    void transactionsCommandDescribesProducers() throws Exception {
        String topic = "tools-producers";
        long producerId;
        try (Admin admin = cluster.admin();
             KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of("enable.idempotence", true))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, new byte[] {(byte) i})).get();
            }
            producerId = admin.describeProducers(List.of(new TopicPartition(topic, 0))).partitionResult(
                    new TopicPartition(topic, 0)).get().activeProducers().get(0).producerId();
        }
        ToolResult described = runTool("org.apache.kafka.tools.TransactionsCommand", null, "--bootstrap-server",
                cluster.bootstrapServers(), "describe-producers", "--topic", topic, "--partition", "0");
        described.assertSuccess();
        // tab-separated columns: ProducerId, ProducerEpoch, LatestCoordinatorEpoch, LastSequence, LastTimestamp,
        // CurrentTransactionStartOffset
        assertTrue(described.stdoutLines().get(0).startsWith("ProducerId\tProducerEpoch"), described.toString());
        List<String> row = Arrays.stream(described.stdoutLines().get(1).split("\t")).map(String::trim).toList();
        assertEquals(List.of(Long.toString(producerId), "0", "-1", "2"), row.subList(0, 4), described.toString());
        assertEquals("None", row.get(5), "no open transaction: " + described);
    }

    /**
     * kafka-features.sh describe lists transaction.version with the levels every broker advertises (decisions 87,
     * 91: supported up to 2, finalized at 2 without a {@code /feature} node).
     */
    @Test
    void featuresCommandDescribesTheTransactionVersion() throws Exception {
        ToolResult described = runTool("org.apache.kafka.tools.FeatureCommand", null, "--bootstrap-server",
                cluster.bootstrapServers(), "describe");
        described.assertSuccess();
        String line = described.stdoutLines().stream().filter(l -> l.contains("transaction.version")).findFirst()
                .orElseThrow(() -> new AssertionError("no transaction.version: " + described));
        assertTrue(line.contains("SupportedMinVersion: 0") && line.contains("SupportedMaxVersion: 2")
                && line.contains("FinalizedVersionLevel: 2"), line);
    }

    // ---- running tools ----

    @Test
    void aclCommandIsToldSecurityIsDisabledAsByABrokerWithoutAuthorizer() throws Exception {
        ToolResult list = runTool("org.apache.kafka.tools.AclCommand", null, "--bootstrap-server",
                cluster.bootstrapServers(), "--list");
        assertTrue(list.all().contains("No Authorizer is configured."), list.toString());
        ToolResult add = runTool("org.apache.kafka.tools.AclCommand", null, "--bootstrap-server",
                cluster.bootstrapServers(), "--add", "--allow-principal", "User:alice", "--operation", "Read",
                "--topic", "anything");
        assertTrue(add.all().contains("No Authorizer is configured."), add.toString());
    }

    private static ToolResult topics(String... args) throws Exception {
        return runTool("org.apache.kafka.tools.TopicCommand", null,
                prepend(args, "--bootstrap-server", cluster.bootstrapServers()));
    }

    private static ToolResult reassign(String... args) throws Exception {
        return runTool("org.apache.kafka.tools.reassign.ReassignPartitionsCommand", null,
                prepend(args, "--bootstrap-server", cluster.bootstrapServers()));
    }

    private static ToolResult configs(String... args) throws Exception {
        return runTool("org.apache.kafka.tools.ConfigCommand", null,
                prepend(args, "--bootstrap-server", cluster.bootstrapServers()));
    }

    private static String[] prepend(String[] args, String... first) {
        String[] out = Arrays.copyOf(first, first.length + args.length);
        System.arraycopy(args, 0, out, first.length, args.length);
        return out;
    }

    private static ToolResult runTool(String mainClass, String stdin, String... args) throws Exception {
        return KafkaTools.run(workDir, TOOL_TIMEOUT, mainClass, stdin, args);
    }
}
