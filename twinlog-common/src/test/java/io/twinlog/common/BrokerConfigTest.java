package io.twinlog.common;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BrokerConfigTest {

    private static BrokerConfig config(String... keyValues) {
        Properties p = new Properties();
        for (int i = 0; i < keyValues.length; i += 2) {
            p.put(keyValues[i], keyValues[i + 1]);
        }
        return new BrokerConfig(p);
    }

    @Test
    void kafkaDefaults() {
        BrokerConfig c = config();
        assertEquals(0, c.brokerId());
        assertEquals(List.of(new Endpoint("PLAINTEXT", "127.0.0.1", 9092)), c.listeners());
        assertEquals(c.listeners(), c.advertisedListeners());
        assertTrue(c.zookeeperConnect().isEmpty(), "no zookeeper.connect means embedded ZooKeeper");
        assertEquals(168L * 3_600_000L, c.logRetentionMs());
        assertEquals(1_048_588, c.messageMaxBytes());
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
                "message.max.bytes", "5000").defaultTopicConfigs();
        assertEquals("2097152", d.get("segment.bytes"));
        assertEquals("1", d.get("flush.messages"));
        assertEquals("5000", d.get("max.message.bytes"));
        assertEquals(null, d.get("retention.ms"), "not set by the operator: Kafka's default applies");
        assertEquals("60000", config("log.retention.minutes", "1").defaultTopicConfigs().get("retention.ms"));
    }

    @Test
    void listenersAndDirsParse() {
        BrokerConfig c = config("listeners", "PLAINTEXT://0.0.0.0:9093", "advertised.listeners",
                "plaintext://broker1.example.com:19093", "log.dirs", "/a, /b", "zookeeper.connect", "zk:2181/twinlog");
        assertEquals(9093, c.listeners().get(0).port());
        assertEquals(new Endpoint("PLAINTEXT", "broker1.example.com", 19093), c.advertisedListeners().get(0));
        assertEquals(List.of(new File("/a"), new File("/b")), c.logDirs());
        assertEquals("zk:2181/twinlog", c.zookeeperConnect().get());
    }

    @Test
    void badValuesNameTheKey() {
        assertEquals("num.partitions must be an integer, got 'three'",
                assertThrows(ConfigException.class, () -> config("num.partitions", "three")).getMessage());
        assertEquals("num.partitions must be > 0, got 0",
                assertThrows(ConfigException.class, () -> config("num.partitions", "0")).getMessage());
        assertTrue(assertThrows(ConfigException.class, () -> config("listeners", "127.0.0.1:9092"))
                .getMessage().startsWith("listeners: expected NAME://host:port"));
        assertEquals("auto.create.topics.enable must be true or false, got 'yes'",
                assertThrows(ConfigException.class, () -> config("auto.create.topics.enable", "yes")
                        .autoCreateTopicsEnable()).getMessage());
    }
}
