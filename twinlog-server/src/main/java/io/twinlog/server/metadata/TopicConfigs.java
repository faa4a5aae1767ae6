package io.twinlog.server.metadata;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.mirror.MirrorTopicConfigs;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.storage.internals.log.LogConfig;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Topic configuration: validation with Kafka's own {@link LogConfig} rules and messages (and Twinlog's
 * {@link MirrorTopicConfigs}), and the effective value of every key with its source (topic override, static broker
 * default, Kafka default) for DescribeConfigs.
 */
public final class TopicConfigs {
    private final Supplier<BrokerConfig> brokerConfig;
    private final Function<String, DescribeConfigsResponse.ConfigSource> brokerKeySource;

    /** Broker defaults fixed at {@code brokerConfig}'s, all from the properties file. */
    public TopicConfigs(BrokerConfig brokerConfig) {
        this(() -> brokerConfig, key -> DescribeConfigsResponse.ConfigSource.STATIC_BROKER_CONFIG);
    }

    /**
     * @param brokerConfig    the broker's configuration now (dynamic broker configs change the defaults live)
     * @param brokerKeySource where a broker key's value comes from (a dynamic level or the properties file)
     */
    public TopicConfigs(Supplier<BrokerConfig> brokerConfig,
                        Function<String, DescribeConfigsResponse.ConfigSource> brokerKeySource) {
        this.brokerConfig = brokerConfig;
        this.brokerKeySource = brokerKeySource;
    }

    public Map<String, String> brokerDefaults() {
        return brokerConfig.get().defaultTopicConfigs();
    }

    /**
     * Validates a complete set of overrides for one topic.
     *
     * @throws InvalidConfigurationException with Kafka's message naming the key and the problem
     */
    public void validate(Map<String, String> overrides) {
        for (Map.Entry<String, String> e : overrides.entrySet()) {
            if (e.getValue() == null) {
                throw new InvalidConfigurationException("Null value not supported for topic configs: " + e.getKey());
            }
        }
        Map<String, String> kafkaKeys = new HashMap<>();
        overrides.forEach((k, v) -> {
            if (!MirrorTopicConfigs.isMirrorTopicConfig(k)) {
                kafkaKeys.put(k, v);
            }
        });
        try {
            MirrorTopicConfigs.validate(overrides);
            LogConfig.validate(brokerDefaults(), kafkaKeys, Map.of(), false);
        } catch (ConfigException e) {
            throw new InvalidConfigurationException(e.getMessage());
        }
    }

    /** Kafka's keys of {@code overrides}, for the logs ({@link MirrorTopicConfigs} keys are not log configs). */
    public Properties asProperties(Map<String, String> overrides) {
        Properties p = new Properties();
        overrides.forEach((k, v) -> {
            if (!MirrorTopicConfigs.isMirrorTopicConfig(k)) {
                p.put(k, v);
            }
        });
        return p;
    }

    /** DescribeConfigs entries for a topic; {@code keys} null means all. */
    public List<DescribeConfigsResponseData.DescribeConfigsResourceResult> describe(
            Map<String, String> overrides, List<String> keys, boolean includeSynonyms, boolean includeDocumentation) {
        Map<String, ConfigDef.ConfigKey> defs = LogConfig.configKeys();
        Map<String, String> brokerDefaults = brokerDefaults();
        Map<String, Object> merged = new HashMap<>(brokerDefaults);
        merged.putAll(overrides);
        LogConfig effective = new LogConfig(merged, overrides.keySet());
        Map<String, ?> values = effective.values();
        List<DescribeConfigsResponseData.DescribeConfigsResourceResult> out = new ArrayList<>();
        for (String name : LogConfig.nonInternalConfigNames()) {
            if (keys != null && !keys.contains(name)) {
                continue;
            }
            ConfigDef.ConfigKey def = defs.get(name);
            if (def == null) {
                continue;
            }
            Object value = values.get(name);
            String stringValue = value == null ? null : ConfigDef.convertToString(value, def.type);
            DescribeConfigsResponse.ConfigSource source;
            if (overrides.containsKey(name)) {
                source = DescribeConfigsResponse.ConfigSource.TOPIC_CONFIG;
            } else if (brokerDefaults.containsKey(name)) {
                source = BrokerConfig.brokerKeyForTopicKey(name).map(brokerKeySource)
                        .orElse(DescribeConfigsResponse.ConfigSource.STATIC_BROKER_CONFIG);
            } else {
                source = DescribeConfigsResponse.ConfigSource.DEFAULT_CONFIG;
            }
            DescribeConfigsResponseData.DescribeConfigsResourceResult r =
                    new DescribeConfigsResponseData.DescribeConfigsResourceResult()
                            .setName(name).setValue(stringValue).setReadOnly(false)
                            .setConfigSource(source.id()).setIsSensitive(false)
                            .setConfigType(configType(def.type).id());
            if (includeDocumentation) {
                r.setDocumentation(def.documentation);
            }
            if (includeSynonyms) {
                List<DescribeConfigsResponseData.DescribeConfigsSynonym> synonyms = new ArrayList<>();
                if (overrides.containsKey(name)) {
                    synonyms.add(new DescribeConfigsResponseData.DescribeConfigsSynonym().setName(name)
                            .setValue(overrides.get(name))
                            .setSource(DescribeConfigsResponse.ConfigSource.TOPIC_CONFIG.id()));
                }
                BrokerConfig.brokerKeyForTopicKey(name).ifPresent(brokerKey -> {
                    if (brokerDefaults.containsKey(name)) {
                        synonyms.add(new DescribeConfigsResponseData.DescribeConfigsSynonym().setName(brokerKey)
                                .setValue(brokerDefaults.get(name))
                                .setSource(brokerKeySource.apply(brokerKey).id()));
                    }
                });
                r.setSynonyms(synonyms);
            }
            out.add(r);
        }
        for (ConfigDef.ConfigKey def : MirrorTopicConfigs.definition().configKeys().values()) {
            if (keys != null && !keys.contains(def.name)) {
                continue;
            }
            boolean overridden = overrides.containsKey(def.name);
            String value = overridden ? overrides.get(def.name) : ConfigDef.convertToString(def.defaultValue, def.type);
            DescribeConfigsResponse.ConfigSource source = overridden ? DescribeConfigsResponse.ConfigSource.TOPIC_CONFIG
                    : DescribeConfigsResponse.ConfigSource.DEFAULT_CONFIG;
            DescribeConfigsResponseData.DescribeConfigsResourceResult r =
                    new DescribeConfigsResponseData.DescribeConfigsResourceResult()
                            .setName(def.name).setValue(value).setReadOnly(false)
                            .setConfigSource(source.id()).setIsSensitive(false)
                            .setConfigType(configType(def.type).id());
            if (includeDocumentation) {
                r.setDocumentation(def.documentation);
            }
            if (includeSynonyms) {
                r.setSynonyms(overridden ? List.of(new DescribeConfigsResponseData.DescribeConfigsSynonym()
                        .setName(def.name).setValue(value).setSource(source.id())) : List.of());
            }
            out.add(r);
        }
        return out;
    }

    /** A config definition's type as DescribeConfigs answers it. */
    public static DescribeConfigsResponse.ConfigType configType(ConfigDef.Type type) {
        return switch (type) {
            case BOOLEAN -> DescribeConfigsResponse.ConfigType.BOOLEAN;
            case STRING -> DescribeConfigsResponse.ConfigType.STRING;
            case INT -> DescribeConfigsResponse.ConfigType.INT;
            case SHORT -> DescribeConfigsResponse.ConfigType.SHORT;
            case LONG -> DescribeConfigsResponse.ConfigType.LONG;
            case DOUBLE -> DescribeConfigsResponse.ConfigType.DOUBLE;
            case LIST -> DescribeConfigsResponse.ConfigType.LIST;
            case CLASS -> DescribeConfigsResponse.ConfigType.CLASS;
            case PASSWORD -> DescribeConfigsResponse.ConfigType.PASSWORD;
        };
    }
}
