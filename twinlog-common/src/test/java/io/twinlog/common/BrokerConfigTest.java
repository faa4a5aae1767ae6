package io.twinlog.common;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.lang.reflect.Field;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
class BrokerConfigTest {

    private static BrokerConfig config(String... keyValues) {
        Properties p = new Properties();
        for (int i = 0; i < keyValues.length; i += 2) {
            p.put(keyValues[i], keyValues[i + 1]);
        }
        return new BrokerConfig(p);
    }

    private static String rejection(String key, String value) {
        String message = assertThrows(ConfigException.class, () -> config(key, value)).getMessage();
        assertFalse(message.contains("\n"), "one line: " + message);
        assertTrue(message.contains(key), "names the key: " + message);
        assertTrue(message.contains(value.trim()), "names the value: " + message);
        return message;
    }

    @Test
    void theLoggedConfigurationHidesEverySecret() {
        BrokerConfig c = config("listeners", "SASL_SSL://127.0.0.1:9093", "sasl.enabled.mechanisms", "PLAIN",
                "listener.name.sasl_ssl.plain.sasl.jaas.config", "PlainLoginModule required password=\"p1\";",
                "listener.name.sasl_ssl.ssl.keystore.password", "p2", "ssl.key.password", "p3",
                "password.encoder.secret", "p4", "listener.name.sasl_ssl.ssl.keystore.key", "p5",
                "log.dirs", "/data");
        Map<String, String> logged = c.loggable();
        assertEquals("/data", logged.get("log.dirs"));
        assertEquals("SASL_SSL://127.0.0.1:9093", logged.get("listeners"));
        for (String secret : List.of("p1", "p2", "p3", "p4", "p5")) {
            assertFalse(logged.toString().contains(secret), logged.toString());
        }
        assertEquals("[hidden]", logged.get("password.encoder.secret"));
    }

    @Test
    void kafkaDefaults() {
        BrokerConfig c = config();
        assertEquals(0, c.brokerId());
        assertEquals(List.of(new Endpoint("PLAINTEXT", "127.0.0.1", 9092)), c.listeners());
        assertEquals(c.listeners(), c.advertisedListeners());
        assertEquals(List.of(new File("/tmp/twinlog-logs")), c.logDirs());
        assertTrue(c.zookeeperConnect().isEmpty(), "no zookeeper.connect means embedded ZooKeeper");
        assertEquals(168L * 3_600_000L, c.logRetentionMs());
        assertEquals(1_048_588, c.messageMaxBytes());
        assertEquals(Long.MAX_VALUE, c.logFlushIntervalMs());
        assertEquals(10_000L, c.logInitialTaskDelayMs(), "Twinlog's default, not Kafka's 30 s");
        assertEquals(Map.of(), c.interBrokerEndpointOverrides());
        assertEquals(Map.of(), c.defaultTopicConfigs(), "nothing set: LogConfig's own defaults apply");
    }

    @Test
    void socketBuffersTakeKafkaDefaultsOrTheOsDefaultAndNothingElse() {
        BrokerConfig defaults = config();
        assertEquals(102_400, defaults.socketSendBufferBytes());
        assertEquals(102_400, defaults.socketReceiveBufferBytes());
        BrokerConfig os = config("socket.send.buffer.bytes", "-1", "socket.receive.buffer.bytes", "-1");
        assertEquals(-1, os.socketSendBufferBytes());
        assertEquals(-1, os.socketReceiveBufferBytes());
        assertTrue(rejection("socket.send.buffer.bytes", "0").contains("OS default"));
        assertTrue(rejection("socket.receive.buffer.bytes", "-2").contains("OS default"));
    }

    @Test
    void valuesAreTyped() {
        BrokerConfig c = config("num.io.threads", " 4 ", "replica.lag.time.max.ms", "12000",
                "controlled.shutdown.enable", "FALSE", "default.replication.factor", "3");
        assertEquals(4, c.numIoThreads());
        assertEquals(12_000L, c.replicaLagTimeMaxMs());
        assertFalse(c.controlledShutdownEnable());
        assertEquals((short) 3, c.defaultReplicationFactor());
    }

    @Test
    void retentionFollowsKafkasPrecedence() {
        assertEquals(5L, config("log.retention.ms", "5", "log.retention.hours", "1").logRetentionMs());
        assertEquals(120_000L, config("log.retention.minutes", "2", "log.retention.hours", "1").logRetentionMs());
        assertEquals(3_600_000L, config("log.retention.hours", "1").logRetentionMs());
    }

    @Test
    void brokerKeysBecomeTopicDefaults() {
        Map<String, String> d = config("log.segment.bytes", "2097152", "log.flush.interval.messages", "1",
                "message.max.bytes", "5000", "log.cleanup.policy", "compact, delete").defaultTopicConfigs();
        assertEquals("2097152", d.get("segment.bytes"));
        assertEquals("1", d.get("flush.messages"));
        assertEquals("5000", d.get("max.message.bytes"));
        assertEquals("compact,delete", d.get("cleanup.policy"), "Kafka's canonical list form");
        assertEquals(null, d.get("retention.ms"), "not set by the operator: Kafka's default applies");
        assertEquals("60000", config("log.retention.minutes", "1").defaultTopicConfigs().get("retention.ms"));
    }

    @Test
    void cleanerKeysHaveKafkasDefinitionsAndTwinlogsDedupeBuffer() {
        BrokerConfig defaults = config();
        assertEquals(1, defaults.logCleanerThreads());
        assertEquals(16L << 20, defaults.logCleanerDedupeBufferSize(), "Twinlog's default, not Kafka's 128 MiB");
        assertEquals(0.9, defaults.logCleanerDedupeBufferLoadFactor());
        assertEquals(512 * 1024, defaults.logCleanerIoBufferSize());
        assertEquals(Double.MAX_VALUE, defaults.logCleanerIoMaxBytesPerSecond());
        BrokerConfig set = config("log.cleaner.threads", "4", "log.cleaner.dedupe.buffer.size", "67108864",
                "log.cleaner.io.buffer.load.factor", "0.5", "log.cleaner.io.buffer.size", "1048576",
                "log.cleaner.io.max.bytes.per.second", "1000000");
        assertEquals(4, set.logCleanerThreads());
        assertEquals(64L << 20, set.logCleanerDedupeBufferSize());
        assertEquals(0.5, set.logCleanerDedupeBufferLoadFactor());
        assertEquals(1 << 20, set.logCleanerIoBufferSize());
        assertEquals(1_000_000d, set.logCleanerIoMaxBytesPerSecond());
        rejection("log.cleaner.threads", "-1");
        rejection("log.cleaner.io.buffer.size", "-1");
    }

    @Test
    void topicKeysMapToKafkasBrokerSynonyms() {
        assertEquals("log.roll.ms", BrokerConfig.brokerKeyForTopicKey("segment.ms").orElseThrow());
        assertEquals("log.cleaner.min.cleanable.ratio",
                BrokerConfig.brokerKeyForTopicKey("min.cleanable.dirty.ratio").orElseThrow());
        assertEquals("log.retention.ms", BrokerConfig.brokerKeyForTopicKey("retention.ms").orElseThrow());
        assertTrue(BrokerConfig.brokerKeyForTopicKey("no.such.key").isEmpty());
    }

    @Test
    void listenersAndDirsParse() {
        BrokerConfig c = config("listeners", "PLAINTEXT://0.0.0.0:9093", "advertised.listeners",
                "plaintext://broker1.example.com:19093", "log.dirs", "/a, /b", "zookeeper.connect", "zk:2181/twinlog");
        assertEquals(9093, c.listeners().get(0).port());
        assertEquals(new Endpoint("PLAINTEXT", "broker1.example.com", 19093), c.advertisedListeners().get(0));
        assertEquals(List.of(new File("/a"), new File("/b")), c.logDirs());
        assertEquals("zk:2181/twinlog", c.zookeeperConnect().get());
        assertEquals(List.of(new File("/c")), config("log.dir", "/c").logDirs(), "log.dir when log.dirs is absent");
    }

    @Test
    void brokerEndpointOverridesParse() {
        assertEquals(Map.of(2, new Endpoint("PLAINTEXT", "127.0.0.1", 4000), 3, new Endpoint("PLAINTEXT", "h", 5)),
                config("inter.broker.endpoint.overrides", "2=127.0.0.1:4000, 3=h:5").interBrokerEndpointOverrides());
        assertTrue(rejection("inter.broker.endpoint.overrides", "2:127.0.0.1:4000")
                .endsWith("expected broker.id=host:port"));
        assertTrue(rejection("inter.broker.endpoint.overrides", "x=h:1").endsWith("the broker id is not an integer"));
    }

    @Test
    void badValuesNameTheKeyTheValueAndWhy() {
        assertEquals("Invalid value three for configuration num.partitions: Not a number of type INT",
                rejection("num.partitions", "three"));
        assertEquals("Invalid value 0 for configuration num.partitions: Value must be at least 1",
                rejection("num.partitions", "0"));
        assertEquals("Invalid value yes for configuration auto.create.topics.enable: Expected value to be either "
                + "true or false", rejection("auto.create.topics.enable", "yes"));
        assertTrue(rejection("listeners", "127.0.0.1:9092").startsWith("listeners: expected NAME://host:port"));
        assertTrue(rejection("advertised.listeners", "PLAINTEXT://h:99999").contains("port out of range"));
        rejection("broker.id", "-1");
        rejection("log.cleanup.policy", "shred");
        rejection("compression.type", "brotli");
        rejection("log.segment.bytes", "1000");
        rejection("zookeeper.embedded.port", "70000");
        rejection("replica.fetch.wait.max.ms", "0");
        rejection("default.replication.factor", "40000");
        rejection("mirror.state.timeout.ms", "soon");
    }

    @Test
    void anEmptyLogDirListIsRejected() {
        String message = assertThrows(ConfigException.class, () -> config("log.dirs", " , ")).getMessage();
        assertTrue(message.contains("log.dirs") && message.contains("at least one"), message);
    }

    @Test
    void undefinedKeysAreKeptAndListed() {
        BrokerConfig c = config("num.partitions", "2", "background.threads", "4", "nmu.partitions", "3");
        assertEquals(Set.of("background.threads", "nmu.partitions"), c.undefinedKeys());
        assertEquals("4", c.get("background.threads").orElseThrow(), "kept for Kafka's own code to read");
        assertEquals(2, c.numPartitions());
    }

    @Test
    void everyDefinitionIsDocumented() {
        for (ConfigDef.ConfigKey key : BrokerConfig.CONFIG_DEF.configKeys().values()) {
            assertNotNull(key.documentation, key.name);
            assertTrue(key.documentation.strip().length() > 20, key.name + " has a real description");
            assertNotNull(key.importance, key.name);
        }
    }

    @Test
    void everyPublicKeyConstantIsDefined() throws IllegalAccessException {
        for (Field f : BrokerConfig.class.getFields()) {
            if (f.getType() == String.class) {
                String key = (String) f.get(null);
                assertTrue(BrokerConfig.CONFIG_DEF.names().contains(key), f.getName() + " = " + key);
            }
        }
    }

    @Test
    void transactionKeysHaveKafkasDefaultsAndBoundsAndTwoPhaseCommitIsRefused() {
        BrokerConfig c = config();
        assertEquals(50, c.transactionLogConfig().transactionTopicPartitions());
        assertEquals(3, c.transactionLogConfig().transactionTopicReplicationFactor());
        assertEquals(2, c.transactionLogConfig().transactionTopicMinISR());
        assertTrue(c.transactionLogConfig().transactionPartitionVerificationEnable());
        assertEquals(900_000, c.transactionMaxTimeoutMs());
        assertEquals(604_800_000, c.transactionStateManagerConfig().transactionalIdExpirationMs());
        assertEquals(10_000, c.transactionStateManagerConfig().transactionAbortTimedOutTransactionCleanupIntervalMs());
        assertEquals(20, c.addPartitionsToTxnConfig().addPartitionsToTxnRetryBackoffMs());
        rejection("transaction.state.log.num.partitions", "0");
        rejection("transaction.max.timeout.ms", "0");
        assertTrue(rejection("transaction.two.phase.commit.enable", "true").contains("not served"));
    }
}
