package io.twinlog.tests.admin;

import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.tests.KafkaTools;
import io.twinlog.tests.ToolResult;
import io.twinlog.tests.ZooKeeperNodes;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Dynamic broker configs as a Kafka operator sets them (issue 28, point 5): Kafka's own {@code kafka-configs
 * --entity-type brokers} against a 2-broker cluster. Values are stored per broker and as the cluster default in
 * Kafka's ZooKeeper layout, described with Kafka's sources and synonyms, refused with Kafka's messages when Kafka
 * would refuse them (and with Twinlog's when Twinlog cannot apply them live), and in force after a restart.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class DynamicBrokerConfigsTest {
    @TempDir
    static File workDir;
    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(2).brokerProperty("log.retention.hours", "48").build().start();
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void perBrokerAndDefaultConfigsAreDescribedWithKafkasSourcesAndSynonyms() throws Exception {
        configs("--entity-type", "brokers", "--entity-default", "--alter", "--add-config",
                "log.retention.ms=600000").assertSuccess();
        configs("--entity-type", "brokers", "--entity-name", "1", "--alter", "--add-config",
                "log.retention.ms=300000").assertSuccess();
        ToolResult defaults = configs("--entity-type", "brokers", "--entity-default", "--describe");
        assertTrue(defaults.stdout().contains("Default configs for brokers in the cluster are:")
                && defaults.stdout().contains("log.retention.ms=600000 sensitive=false "
                + "synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=600000}"), defaults.all());
        ToolResult broker1 = configs("--entity-type", "brokers", "--entity-name", "1", "--describe");
        assertTrue(broker1.stdout().contains("Dynamic configs for broker 1 are:")
                && broker1.stdout().contains("log.retention.ms=300000 sensitive=false "
                + "synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=300000, "
                + "DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=600000, STATIC_BROKER_CONFIG:"
                + "log.retention.hours=48"), broker1.all());
        // broker 0 has only the default over its static value
        ConfigEntry retention = brokerEntry(0, "log.retention.ms");
        assertEquals("600000", retention.value());
        assertEquals(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, retention.source());
        assertTrue(node(ZkPaths.brokerConfig("<default>")).contains("\"log.retention.ms\":\"600000\""));
        assertTrue(node(ZkPaths.brokerConfig("1")).contains("\"log.retention.ms\":\"300000\""));

        configs("--entity-type", "brokers", "--entity-name", "1", "--alter", "--delete-config",
                "log.retention.ms").assertSuccess();
        configs("--entity-type", "brokers", "--entity-default", "--alter", "--delete-config", "log.retention.ms")
                .assertSuccess();
        assertEquals(ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG, brokerEntry(1, "log.retention.hours").source());
    }

    @Test
    void threadCountsChangeLiveOnTheBrokerNamedAndTheDefaultOnAll() throws Exception {
        int before = threads("twinlog-request-handler-0-");
        configs("--entity-type", "brokers", "--entity-name", "0", "--alter", "--add-config",
                "num.io.threads=" + (before + 2)).assertSuccess();
        Waits.waitUntil("broker 0 runs " + (before + 2) + " request handler threads",
                () -> threads("twinlog-request-handler-0-") == before + 2);
        assertEquals(before, threads("twinlog-request-handler-1-"), "broker 1 is not changed");
        // the cluster default reaches every broker; broker 0's own value stays above it
        configs("--entity-type", "brokers", "--entity-default", "--alter", "--add-config", "num.network.threads=4")
                .assertSuccess();
        for (int broker : List.of(0, 1)) {
            Waits.waitUntil("broker " + broker + " runs 4 network threads",
                    () -> threads("twinlog-network-" + broker + "-") == 4);
        }
        assertEquals(before + 2, threads("twinlog-request-handler-0-"));
        // Kafka's rule: at most double at a time, with Kafka's words
        assertRefused(List.of("--entity-name", "1", "--add-config", "num.io.threads=" + (before * 2 + 1)),
                "Dynamic thread count update validation failed for num.io.threads=" + (before * 2 + 1)
                        + ", value should not be greater than double the current value " + before);
        configs("--entity-type", "brokers", "--entity-default", "--alter", "--delete-config", "num.network.threads")
                .assertSuccess();
        configs("--entity-type", "brokers", "--entity-name", "0", "--alter", "--delete-config", "num.io.threads")
                .assertSuccess();
        Waits.waitUntil("broker 0 back to " + before + " request handler threads",
                () -> threads("twinlog-request-handler-0-") == before);
    }

    @Test
    void logDefaultsTheCleanerAndTheReplicaFetchersChangeLive() throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("limited", 1, (short) 2), new NewTopic("own-limit", 1, (short) 2)
                            .configs(Map.of("max.message.bytes", "100000")), new NewTopic("followed", 8, (short) 2)))
                    .all().get(30, TimeUnit.SECONDS);
        }
        byte[] twoKb = new byte[2_000];
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.RETRIES_CONFIG, 0))) {
            producer.send(new ProducerRecord<>("limited", twoKb)).get(30, TimeUnit.SECONDS);
            configs("--entity-type", "brokers", "--entity-default", "--alter", "--add-config",
                    "message.max.bytes=1000").assertSuccess();
            // a topic without its own limit takes the new default on every broker; one with its own keeps it
            Waits.waitUntil("a 2 KB record is too large for 'limited'", () -> tooLarge(producer, "limited", twoKb));
            producer.send(new ProducerRecord<>("own-limit", twoKb)).get(30, TimeUnit.SECONDS);
            configs("--entity-type", "brokers", "--entity-default", "--alter", "--delete-config",
                    "message.max.bytes").assertSuccess();
            Waits.waitUntil("a 2 KB record fits again", () -> !tooLarge(producer, "limited", twoKb));
        }

        int cleaners = threads("kafka-log-cleaner-thread-");
        int fetchers = threads("twinlog-replica-fetcher-");
        configs("--entity-type", "brokers", "--entity-default", "--alter", "--add-config",
                "log.cleaner.threads=2,num.replica.fetchers=2").assertSuccess();
        Waits.waitUntil("each broker runs 2 cleaner threads", () -> threads("kafka-log-cleaner-thread-")
                == cleaners * 2);
        // which fetcher a partition goes to is Kafka's hash of its name: with 8 partitions over 2 brokers, at least
        // one broker's followed partitions spread over both fetchers
        Waits.waitUntil("more replica fetcher threads", () -> threads("twinlog-replica-fetcher-") > fetchers);
        configs("--entity-type", "brokers", "--entity-default", "--alter", "--delete-config",
                "log.cleaner.threads,num.replica.fetchers").assertSuccess();
        Waits.waitUntil("back to 1 cleaner thread each", () -> threads("kafka-log-cleaner-thread-") == cleaners);
        Waits.waitUntil("back to 1 fetcher per leader", () -> threads("twinlog-replica-fetcher-") == fetchers);
    }

    /** Whether the broker refuses {@code value} on {@code topic} as too large (other outcomes: false). */
    private static boolean tooLarge(KafkaProducer<byte[], byte[]> producer, String topic, byte[] value)
            throws Exception {
        try {
            producer.send(new ProducerRecord<>(topic, value)).get(30, TimeUnit.SECONDS);
            return false;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RecordTooLargeException) {
                return true;
            }
            throw e;
        }
    }

    @Test
    void aBrokerRestartedStartsWithItsStoredConfigs() throws Exception {
        int before = threads("twinlog-request-handler-1-");
        configs("--entity-type", "brokers", "--entity-name", "1", "--alter", "--add-config",
                "num.io.threads=" + (before + 1)).assertSuccess();
        Waits.waitUntil("broker 1 runs " + (before + 1) + " request handler threads",
                () -> threads("twinlog-request-handler-1-") == before + 1);
        cluster.stopBroker(1);
        Waits.waitUntil("broker 1's request handler threads gone", () -> threads("twinlog-request-handler-1-") == 0);
        cluster.startBroker(1);
        // built with the stored value, not resized to it after the start
        assertEquals(before + 1, threads("twinlog-request-handler-1-"));
        assertEquals(ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG, brokerEntry(1, "num.io.threads").source());
        configs("--entity-type", "brokers", "--entity-name", "1", "--alter", "--delete-config", "num.io.threads")
                .assertSuccess();
        Waits.waitUntil("back to " + before, () -> threads("twinlog-request-handler-1-") == before);
    }

    /** Live threads of this JVM (the in-process brokers) whose name starts with {@code prefix}. */
    private static int threads(String prefix) {
        return (int) Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
    }

    @Test
    void keysThatCannotChangeLiveAreRefusedWithTheReason() throws Exception {
        assertRefused(List.of("--entity-name", "0", "--add-config", "log.dirs=/elsewhere"),
                "Cannot update these configs dynamically: [log.dirs]");
        assertRefused(List.of("--entity-name", "0", "--add-config", "ssl.keystore.location=/k.jks"),
                "These security configs can be dynamically updated only per-listener using the listener prefix: "
                        + "[ssl.keystore.location]");
        assertRefused(List.of("--entity-default", "--add-config",
                        "listener.name.ssl.ssl.keystore.location=/k.jks"),
                "Cannot update these configs at default cluster level, broker id must be specified: "
                        + "[listener.name.ssl.ssl.keystore.location]");
        assertRefused(List.of("--entity-name", "0", "--add-config", "num.io.threads=0"),
                "Invalid value 0 for configuration num.io.threads: Value must be at least 1");
        // dynamic in Kafka, not applied by Twinlog: refused rather than stored and ignored
        assertRefused(List.of("--entity-name", "0", "--add-config", "max.connections=100"),
                "Twinlog cannot update these configs dynamically: [max.connections]");
        assertEquals(null, node(ZkPaths.brokerConfig("0")), "nothing stored for a refused change");
    }

    private static void assertRefused(List<String> args, String message) throws Exception {
        List<String> all = new ArrayList<>(List.of("--entity-type", "brokers", "--alter"));
        all.addAll(args);
        ToolResult refused = configs(all.toArray(String[]::new));
        assertNotEquals(0, refused.exitCode(), refused.all());
        assertTrue(refused.all().contains(message), "expected '" + message + "' in\n" + refused.all());
    }

    private static ConfigEntry brokerEntry(int broker, String name) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                "127.0.0.1:" + cluster.broker(broker).boundPort("PLAINTEXT")))) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(broker));
            return Waits.waitFor("broker " + broker + "'s " + name, () -> {
                Config config = admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS)
                        .get(resource);
                return config.get(name);
            }, e -> e != null);
        }
    }

    /** The node's data as text, null when it does not exist. */
    private static String node(String path) throws Exception {
        return ZooKeeperNodes.read(cluster.zookeeperConnect(), path);
    }

    private static ToolResult configs(String... args) throws Exception {
        return KafkaTools.configs(workDir, cluster.bootstrapServers(), args);
    }
}
