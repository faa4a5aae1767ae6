package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import io.twinlog.group.GroupCoordinatorInternalConfigs;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfig;
import org.apache.kafka.coordinator.share.ShareCoordinatorConfig;
import org.apache.kafka.server.config.AbstractKafkaConfig;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Start-up checks of the keys of a broker's configuration that {@link BrokerConfig} does not define itself.
 *
 * <p>Kafka's group coordinator runs inside the broker (decision 18) and reads its own keys ({@code offsets.*},
 * {@code group.*}) from the broker's configuration, and so do Kafka's share-group classes ({@code group.share.*},
 * {@code share.coordinator.*}, {@code share.fetch.*}; KIP-932): they are checked against Kafka's definitions of them
 * ({@link GroupCoordinatorConfig#CONFIG_DEF}, {@link ShareGroupConfig#CONFIG_DEF},
 * {@link ShareCoordinatorConfig#CONFIG_DEF}) and the rules between them (a default within its min and max) before
 * the broker starts, so a bad one fails with the same one line as any other key instead of surfacing half-way
 * through start-up. Every other key that neither defines is ignored and
 * named once in a WARN, as Kafka does with keys it does not know; Kafka broker keys Twinlog does not implement
 * ({@code background.threads}, {@code ssl.*}) are told apart from keys nobody defines, which are likely typos.
 *
 * <p>Stateless.
 */
public final class BrokerConfigCheck {
    /** Definitions of the keys Kafka's code hosted by the broker reads from its configuration. */
    static final ConfigDef HOSTED_DEFINITIONS = hostedDefinitions();

    private BrokerConfigCheck() {
    }

    private static ConfigDef hostedDefinitions() {
        ConfigDef all = new ConfigDef(GroupCoordinatorConfig.CONFIG_DEF);
        // and Twinlog's internal keys of the hosted group coordinator (decision 121), typed and checked the same way
        for (ConfigDef more : List.of(ShareGroupConfig.CONFIG_DEF, ShareCoordinatorConfig.CONFIG_DEF,
                GroupCoordinatorInternalConfigs.CONFIG_DEF)) {
            more.configKeys().values().forEach(all::define);
        }
        return all;
    }

    /**
     * @throws ConfigException naming the key, the value and why, if a key of Kafka's
     *                                                        hosted group or share coordinator has an invalid
     *                                                        value
     */
    public static void validateHostedKeys(BrokerConfig config) {
        Map<String, String> hosted = new HashMap<>();
        config.originals().forEach((key, value) -> {
            if (HOSTED_DEFINITIONS.names().contains(key)) {
                hosted.put(key, value);
            }
        });
        AbstractConfig parsed = new AbstractConfig(HOSTED_DEFINITIONS, hosted, false);
        try {
            // Kafka's own cross-key rules (group.share.record.lock.duration.ms within its min and max, and so on)
            new ShareGroupConfig(parsed);
            new ShareCoordinatorConfig(parsed);
        } catch (IllegalArgumentException e) {
            // Kafka states these rules with Utils.require; the start-up path reports configuration errors by type
            throw new ConfigException(e.getMessage());
        }
    }

    /** The WARN to log at start-up for keys no definition covers, or empty if every key is defined. */
    public static Optional<String> undefinedKeysWarning(BrokerConfig config) {
        Set<String> kafkaOnly = new TreeSet<>();
        Set<String> unknown = new TreeSet<>();
        for (String key : config.undefinedKeys()) {
            if (HOSTED_DEFINITIONS.names().contains(key)) {
                continue;
            }
            (AbstractKafkaConfig.CONFIG_DEF.names().contains(key) ? kafkaOnly : unknown).add(key);
        }
        List<String> parts = new ArrayList<>();
        if (!kafkaOnly.isEmpty()) {
            parts.add("Kafka broker configs Twinlog does not use: " + kafkaOnly);
        }
        if (!unknown.isEmpty()) {
            parts.add("configs neither Twinlog nor Kafka defines (a typo?): " + unknown);
        }
        return parts.isEmpty() ? Optional.empty()
                : Optional.of("Ignoring " + String.join("; ", parts) + " (documented keys: docs/configuration.md)");
    }
}
