package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

@Timeout(10)
class BrokerConfigCheckTest {

    @Test
    void groupCoordinatorKeysAreValidatedByKafkasDefinition() {
        BrokerConfigCheck.validateHostedKeys(new BrokerConfig(Map.of("offsets.topic.replication.factor", "1")));
        ConfigException e = assertThrows(ConfigException.class, () -> BrokerConfigCheck.validateHostedKeys(
                new BrokerConfig(Map.of("offsets.topic.replication.factor", "0"))));
        assertEquals("Invalid value 0 for configuration offsets.topic.replication.factor: Value must be at least 1",
                e.getMessage());
    }

    @Test
    void undefinedKeysAreNamedOnceAndSorted() {
        BrokerConfig config = new BrokerConfig(Map.of("num.partitions", "2", "group.initial.rebalance.delay.ms", "0",
                "ssl.keystore.location", "/k", "listener.name.ssl.ssl.keystore.location", "/k",
                "background.threads", "4", "nmu.partitions", "3", "delegation.token.expiry.time.ms", "1000"));
        assertEquals(Optional.of("Ignoring Kafka broker configs Twinlog does not use: [background.threads, "
                        + "delegation.token.expiry.time.ms]; configs neither Twinlog nor Kafka defines (a typo?): "
                        + "[nmu.partitions] (documented keys: docs/configuration.md)"),
                BrokerConfigCheck.undefinedKeysWarning(config));
    }

    @Test
    void noWarningWhenEveryKeyIsDefined() {
        assertEquals(Optional.empty(), BrokerConfigCheck.undefinedKeysWarning(new BrokerConfig(Map.of(
                "broker.id", "3", "offsets.topic.num.partitions", "5"))));
    }
}
