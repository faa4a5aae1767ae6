package io.twinlog.tests.kafka.protocol;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.server.config.AbstractKafkaConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Broker DescribeConfigs of Twinlog against Apache Kafka 4.4's: every key Kafka lists, Twinlog lists too, with the
 * same type and sensitivity (values differ where the brokers are set up differently: ports, dirs, ids).
 */
@Timeout(180)
class BrokerConfigsParityTest {
    private static SideBySideClusters clusters;

    @BeforeAll
    static void start() throws Exception {
        clusters = SideBySideClusters.start();
    }

    @AfterAll
    static void stop() throws Exception {
        clusters.close();
    }

    @Test
    void twinlogListsEveryBrokerConfigKafkaListsWithItsTypeAndSensitivity() throws Exception {
        Map<String, ConfigEntry> kafka = describe(clusters.kafka());
        Map<String, ConfigEntry> twinlog = describe(clusters.twinlog());
        TreeSet<String> missing = new TreeSet<>(kafka.keySet());
        missing.removeAll(twinlog.keySet());
        // Kafka lists internal keys only when its properties set them (its test kit sets a few); so does Twinlog
        missing.removeIf(BrokerConfigsParityTest::internal);
        assertEquals(new TreeSet<>(), missing, "keys Kafka lists and Twinlog does not");
        for (ConfigEntry k : kafka.values()) {
            ConfigEntry t = twinlog.get(k.name());
            if (t == null) {
                continue; // an internal key, see above
            }
            assertEquals(k.type(), t.type(), k.name());
            assertEquals(k.isSensitive(), t.isSensitive(), k.name());
            if (t.isSensitive()) {
                assertEquals(null, t.value(), k.name());
            }
        }
        assertTrue(kafka.size() > 300, "Kafka lists " + kafka.size());
    }

    private static boolean internal(String name) {
        ConfigDef.ConfigKey key = AbstractKafkaConfig.CONFIG_DEF.configKeys().get(name);
        return key != null && key.internalConfig;
    }

    private static Map<String, ConfigEntry> describe(SideBySideClusters.Target target) throws Exception {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", target.bootstrap()))) {
            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(target.brokerId()));
            Config config = admin.describeConfigs(List.of(broker)).all().get().get(broker);
            return config.entries().stream().collect(Collectors.toMap(ConfigEntry::name, Function.identity(),
                    (a, b) -> a, TreeMap::new));
        }
    }
}
