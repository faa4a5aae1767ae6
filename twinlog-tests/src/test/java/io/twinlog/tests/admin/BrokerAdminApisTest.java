package io.twinlog.tests.admin;

import io.twinlog.replication.Partition;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.TestDirectories;
import io.twinlog.testkit.Waits;
import io.twinlog.tests.KafkaTools;
import io.twinlog.tests.ToolResult;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The broker-level admin APIs operators and web UIs use, with the Admin client and Kafka's own tools against a
 * 3-broker cluster: broker DescribeConfigs (Kafka's full key set, values, sources, flags), DeleteRecords (log start
 * moved on every replica, Kafka's errors) and DescribeLogDirs.
 */
@Timeout(180)
class BrokerAdminApisTest {
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(60);
    private static TestCluster cluster;
    private static File workDir;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(3).brokerProperty("background.threads", "7").build().start();
        workDir = TestDirectories.create("broker-admin");
    }

    @AfterAll
    static void stop() {
        cluster.close();
        TestDirectories.delete(workDir);
    }

    @Test
    void describeConfigsListsKafkasBrokerKeysWithSourcesAndHiddenSecrets() throws Exception {
        try (Admin admin = cluster.admin()) {
            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "1");
            Config config = admin.describeConfigs(List.of(broker), new DescribeConfigsOptions().includeSynonyms(true)
                    .includeDocumentation(true)).all().get().get(broker);
            assertTrue(config.entries().size() > 300, "Kafka 4.4 lists about 350 keys, got " + config.entries().size());

            ConfigEntry set = config.get("background.threads");
            assertEquals("7", set.value());
            assertEquals(ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG, set.source());
            assertEquals(ConfigEntry.ConfigType.INT, set.type());
            assertTrue(set.isReadOnly());
            assertEquals(List.of(ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG, ConfigEntry.ConfigSource.DEFAULT_CONFIG),
                    set.synonyms().stream().map(ConfigEntry.ConfigSynonym::source).toList());

            ConfigEntry kafkaDefault = config.get("num.replica.fetchers");
            assertEquals("1", kafkaDefault.value());
            assertEquals(ConfigEntry.ConfigSource.DEFAULT_CONFIG, kafkaDefault.source());
            assertFalse(kafkaDefault.documentation() == null || kafkaDefault.documentation().isEmpty());

            assertEquals("1", config.get("broker.id").value(), "Twinlog's own broker id, not Kafka's default -1");

            ConfigEntry secret = config.get("ssl.keystore.password");
            assertTrue(secret.isSensitive());
            assertNull(secret.value());
            assertEquals(ConfigEntry.ConfigType.PASSWORD, secret.type());

            ConfigResource cluster = new ConfigResource(ConfigResource.Type.BROKER, "");
            assertTrue(admin.describeConfigs(List.of(cluster)).all().get().get(cluster).entries().isEmpty(),
                    "no dynamic cluster-wide defaults");
        }
        ToolResult describe = tool("org.apache.kafka.tools.ConfigCommand", "--describe", "--entity-type", "brokers",
                "--entity-name", "1", "--all");
        describe.assertSuccess();
        assertTrue(describe.stdout().contains("background.threads=7 sensitive=false synonyms={STATIC_BROKER_CONFIG:"
                + "background.threads=7, DEFAULT_CONFIG:background.threads=10}"), describe.toString());
        assertTrue(describe.stdout().contains("ssl.keystore.password=null sensitive=true"), describe.toString());
    }

    @Test
    void deleteRecordsMovesTheLogStartOnEveryReplicaAndAnswersKafkasErrors() throws Exception {
        String topic = "delete-records";
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 3))).all().get();
            produce(topic, 1, 100);

            long low = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(40))).lowWatermarks().get(tp).get()
                    .lowWatermark();
            assertEquals(40, low);
            // the answer came after every in-sync replica moved: no wait needed
            for (int id : cluster.runningBrokerIds()) {
                assertEquals(40, logStartOffset(id, tp), "log start on broker " + id);
            }

            ExecutionException beyond = assertThrows(ExecutionException.class, () -> admin.deleteRecords(
                    Map.of(tp, RecordsToDelete.beforeOffset(101))).lowWatermarks().get(tp).get());
            assertInstanceOf(OffsetOutOfRangeException.class, beyond.getCause());

            // -1 means the high watermark, as kafka-delete-records writes it for "offset": -1
            Path json = workDir.toPath().resolve("delete.json");
            Files.writeString(json, "{\"partitions\":[{\"topic\":\"" + topic + "\",\"partition\":0,\"offset\":-1}],"
                    + "\"version\":1}");
            ToolResult tool = tool("org.apache.kafka.tools.DeleteRecordsCommand", "--offset-json-file",
                    json.toString());
            tool.assertSuccess();
            assertTrue(tool.stdout().contains("partition: " + tp + "\tlow_watermark: 100"), tool.toString());
            for (int id : cluster.runningBrokerIds()) {
                assertEquals(100, logStartOffset(id, tp), "log start on broker " + id);
            }
        }
    }

    @Test
    void deleteRecordsRefusesInternalTopics() throws Exception {
        try (Admin admin = cluster.admin()) {
            // FindCoordinator creates __consumer_offsets
            admin.listConsumerGroupOffsets("any").partitionsToOffsetAndMetadata().get();
            TopicPartition offsets = new TopicPartition("__consumer_offsets", 0);
            ExecutionException e = assertThrows(ExecutionException.class, () -> admin.deleteRecords(
                    Map.of(offsets, RecordsToDelete.beforeOffset(0))).all().get());
            assertInstanceOf(InvalidTopicException.class, e.getCause());
        }
    }

    @Test
    void describeLogDirsShowsPartitionsWithSizesAndSpace() throws Exception {
        String topic = "log-dirs";
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 3))).all().get();
            produce(topic, 2, 50);
            Map<String, LogDirDescription> dirs = Waits.waitFor("both partitions of " + topic + " replicated to broker 2",
                    () -> admin.describeLogDirs(List.of(2)).allDescriptions().get().get(2),
                    d -> d.values().stream().mapToLong(dir -> dir.replicaInfos().entrySet().stream()
                            .filter(e -> e.getKey().topic().equals(topic)).mapToLong(e -> e.getValue().size() > 0
                                    ? 1 : 0).sum()).sum() == 2);
            assertEquals(1, dirs.size());
            Map.Entry<String, LogDirDescription> dir = dirs.entrySet().iterator().next();
            assertEquals(cluster.logDir(2).getAbsolutePath(), dir.getKey());
            assertTrue(dir.getValue().totalBytes().orElse(0) > 0 && dir.getValue().usableBytes().orElse(0) > 0);
            ReplicaInfo info = dir.getValue().replicaInfos().get(new TopicPartition(topic, 0));
            assertFalse(info.isFuture());
            assertEquals(0, info.offsetLag());
        }
        ToolResult tool = tool("org.apache.kafka.tools.LogDirsCommand", "--describe", "--broker-list", "0,1,2",
                "--topic-list", topic);
        tool.assertSuccess();
        assertTrue(tool.stdout().contains("\"partition\":\"" + topic + "-1\""), tool.toString());
        assertTrue(tool.stdout().contains("\"isFuture\":false"), tool.toString());
    }

    /** {@code count} records to each of the topic's {@code partitions}, acknowledged by every in-sync replica. */
    private static void produce(String topic, int partitions, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
            for (int p = 0; p < partitions; p++) {
                for (int i = 0; i < count; i++) {
                    producer.send(new ProducerRecord<>(topic, p, null, ("record-" + i).getBytes()));
                }
            }
            producer.flush();
        }
    }

    private static long logStartOffset(int brokerId, TopicPartition tp) {
        return cluster.broker(brokerId).replicaManager().partition(tp).map(Partition::log).orElseThrow()
                .logStartOffset();
    }

    private static ToolResult tool(String mainClass, String... args) throws Exception {
        String[] all = new String[args.length + 2];
        all[0] = "--bootstrap-server";
        all[1] = cluster.bootstrapServers();
        System.arraycopy(args, 0, all, 2, args.length);
        return KafkaTools.run(workDir, TOOL_TIMEOUT, mainClass, null, all);
    }
}
