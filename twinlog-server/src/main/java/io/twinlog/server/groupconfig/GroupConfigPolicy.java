package io.twinlog.server.groupconfig;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.coordinator.group.GroupConfig;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfig;
import org.apache.kafka.server.config.AbstractKafkaConfig;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * The rules for per-group configs (KIP-848 {@code consumer.*}, KIP-932 {@code share.*}): Kafka 4.4's own check,
 * {@link GroupConfig#validate}, bounded by this broker's {@code group.consumer.*} and {@code group.share.*} ranges, so
 * its messages and error codes are Kafka's; then the keys Twinlog refuses because it has not the feature they
 * configure (decision 105): {@code errors.deadletterqueue.*} (share groups' dead-letter queue, {@code share.version}
 * 2; Twinlog supports 1) and {@code streams.*} (Kafka Streams groups, KIP-1071, not served). Those are refused
 * rather than stored and ignored, as decision 101 refuses broker keys Twinlog does not apply.
 *
 * <p>Also the defaults a group falls back to, which Kafka takes from the broker's {@code group.*} keys
 * ({@code consumer.session.timeout.ms} from {@code group.consumer.session.timeout.ms}, ...).
 *
 * <p>Immutable; thread-safe.
 */
public final class GroupConfigPolicy {
    /** Key prefixes Kafka accepts and Twinlog refuses, with the reason given to the client. */
    private static final Map<String, String> UNSUPPORTED = Map.of(
            "errors.deadletterqueue.", "Twinlog has no dead-letter queue for share groups (share.version 2, "
                    + "KIP-1191); it supports share.version 1",
            "streams.", "Twinlog has no Kafka Streams groups (KIP-1071)");

    private final GroupCoordinatorConfig coordinatorConfig;
    private final ShareGroupConfig shareGroupConfig;
    private final Map<String, Object> defaults;

    /**
     * @param brokerProperties the broker's configuration, which the group coordinator was built with
     */
    public GroupConfigPolicy(GroupCoordinatorConfig coordinatorConfig, Map<String, ?> brokerProperties) {
        this.coordinatorConfig = coordinatorConfig;
        this.shareGroupConfig = ShareGroupConfig.fromProps(brokerProperties);
        this.defaults = Map.copyOf(brokerDefaults(coordinatorConfig, brokerProperties));
    }

    /** Kafka's answer to an alter of the empty group name (the "default group", which Kafka does not have). */
    public static void checkAlterable(String groupId) {
        if (groupId.isEmpty()) {
            throw new InvalidRequestException("Default group resources are not allowed.");
        }
    }

    /**
     * Checks the complete set of configs a group would have, as Kafka's controller does (the change applied to what
     * is stored, not the change alone).
     *
     * @throws InvalidConfigurationException with Kafka's message, or Twinlog's for a key it refuses
     */
    public void validate(Map<String, String> configs) {
        List<String> nulls = new ArrayList<>();
        configs.forEach((key, value) -> {
            if (value == null) {
                nulls.add(key);
            }
        });
        if (!nulls.isEmpty()) {
            throw new InvalidConfigurationException("Null value not supported for group configs: "
                    + String.join(",", nulls));
        }
        try {
            GroupConfig.validate(configs, coordinatorConfig, shareGroupConfig);
        } catch (ConfigException e) {
            // Kafka's controller answers a value its definition refuses with INVALID_CONFIG and this message
            throw new InvalidConfigurationException(e.getMessage());
        }
        for (String key : configs.keySet()) {
            Optional<String> reason = unsupported(key);
            if (reason.isPresent()) {
                throw new InvalidConfigurationException("Group config " + key + " is not supported: "
                        + reason.get());
            }
        }
    }

    /** Why Twinlog refuses a key Kafka accepts, if it does. */
    public static Optional<String> unsupported(String key) {
        return UNSUPPORTED.entrySet().stream().filter(e -> key.startsWith(e.getKey())).map(Map.Entry::getValue)
                .findFirst();
    }

    /** A group's effective configs: its overrides over the broker's defaults, as Kafka's describe builds them. */
    public GroupConfig effective(Map<String, String> overrides) {
        Properties props = new Properties();
        props.putAll(overrides);
        return GroupConfig.fromProps(defaults, props);
    }

    /**
     * The broker's values of the keys group configs override, by group config name: each group key with a broker
     * synonym, internal ones only when the broker sets them, and the first streams assignor (Kafka's
     * {@code AbstractKafkaConfig.extractGroupConfigMap}).
     */
    private static Map<String, Object> brokerDefaults(GroupCoordinatorConfig coordinatorConfig,
                                                      Map<String, ?> brokerProperties) {
        Map<String, Object> out = new HashMap<>();
        Map<String, ConfigDef.ConfigKey> definitions = AbstractKafkaConfig.CONFIG_DEF.configKeys();
        for (String name : GroupConfig.configNames()) {
            Optional<String> brokerKey = GroupConfig.brokerSynonym(name);
            if (brokerKey.isEmpty() || (GroupConfig.isInternal(name)
                    && !brokerProperties.containsKey(brokerKey.get()))) {
                continue;
            }
            ConfigDef.ConfigKey definition = definitions.get(brokerKey.get());
            if (definition == null) {
                continue;
            }
            Object set = brokerProperties.get(brokerKey.get());
            out.put(name, set == null ? definition.defaultValue
                    : ConfigDef.parseType(definition.name, set, definition.type));
        }
        out.computeIfPresent(GroupConfig.STREAMS_ASSIGNOR_NAME_CONFIG,
                (name, value) -> coordinatorConfig.streamsGroupAssignorNames().get(0));
        return out;
    }
}
