package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
    void shareGroupKeysAreValidatedByKafkasDefinitionsAndRules() {
        BrokerConfigCheck.validateHostedKeys(new BrokerConfig(Map.of("group.share.record.lock.duration.ms", "20000",
                "share.coordinator.state.topic.replication.factor", "1", "group.share.max.size", "10")));
        ConfigException range = assertThrows(ConfigException.class, () -> BrokerConfigCheck.validateHostedKeys(
                new BrokerConfig(Map.of("share.coordinator.state.topic.num.partitions", "0"))));
        assertEquals("Invalid value 0 for configuration share.coordinator.state.topic.num.partitions: Value must be "
                + "at least 1", range.getMessage());
        // within the key's own bounds but below its minimum key: Kafka's cross-key rule, Kafka's words
        ConfigException rule = assertThrows(ConfigException.class, () -> BrokerConfigCheck.validateHostedKeys(
                new BrokerConfig(Map.of("group.share.record.lock.duration.ms", "16000",
                        "group.share.min.record.lock.duration.ms", "20000"))));
        assertTrue(rule.getMessage().contains("group.share.record.lock.duration.ms"), rule.getMessage());
        assertEquals(Optional.empty(), BrokerConfigCheck.undefinedKeysWarning(new BrokerConfig(Map.of(
                "group.share.delivery.count.limit", "4", "share.coordinator.threads", "1",
                "share.fetch.purgatory.purge.interval.requests", "100"))));
    }

    @Test
    void internalOffsetsRetentionIsTypedCheckedAndNotWarnedAbout() {
        BrokerConfig valid = new BrokerConfig(Map.of("internal.offsets.retention.ms", "5000"));
        BrokerConfigCheck.validateHostedKeys(valid);
        assertEquals(Optional.empty(), BrokerConfigCheck.undefinedKeysWarning(valid));
        ConfigException zero = assertThrows(ConfigException.class, () -> BrokerConfigCheck.validateHostedKeys(
                new BrokerConfig(Map.of("internal.offsets.retention.ms", "0"))));
        assertEquals("Invalid value 0 for configuration internal.offsets.retention.ms: must be at least 1",
                zero.getMessage());
        ConfigException text = assertThrows(ConfigException.class, () -> BrokerConfigCheck.validateHostedKeys(
                new BrokerConfig(Map.of("internal.offsets.retention.ms", "5s"))));
        assertTrue(text.getMessage().contains("internal.offsets.retention.ms"), text.getMessage());
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
