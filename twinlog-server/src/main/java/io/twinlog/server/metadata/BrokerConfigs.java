package io.twinlog.server.metadata;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.Endpoint;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsSynonym;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.apache.kafka.server.config.AbstractKafkaConfig;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The broker's configuration as DescribeConfigs shows it: every non-internal key of Kafka's own broker definition
 * ({@link AbstractKafkaConfig#CONFIG_DEF}, the union of Kafka's server, log, replication, socket, group, quota, ...
 * definitions), so tools and web UIs see the same ~350 keys a Kafka 4.4 broker lists, plus Twinlog's own keys
 * ({@link BrokerConfig#CONFIG_DEF}, such as {@code zookeeper.connect}) and any other key of the properties file.
 *
 * <p>Values: what the operator set ({@code STATIC_BROKER_CONFIG}); otherwise what Twinlog actually uses where its
 * default differs from Kafka's (broker id, listeners, log dirs, coordinator threads), otherwise Kafka's default
 * ({@code DEFAULT_CONFIG}). Every entry is read-only: Twinlog has no dynamic broker configs yet, so IncrementalAlter
 * of a broker config cannot succeed and a tool should not offer it. Sensitive entries (Kafka's PASSWORD type, and
 * keys nobody defines, which Kafka also treats as possibly secret) are answered with a null value.
 *
 * <p>Immutable after construction; thread-safe.
 */
public final class BrokerConfigs {
    private final List<DescribeConfigsResourceResult> entries;

    public BrokerConfigs(BrokerConfig config) {
        this.entries = List.copyOf(build(config));
    }

    /** All entries, or only {@code keys} when not null; synonyms and documentation only when asked for. */
    public List<DescribeConfigsResourceResult> describe(List<String> keys, boolean includeSynonyms,
                                                        boolean includeDocumentation) {
        List<DescribeConfigsResourceResult> out = new ArrayList<>();
        for (DescribeConfigsResourceResult entry : entries) {
            if (keys != null && !keys.contains(entry.name())) {
                continue;
            }
            DescribeConfigsResourceResult copy = entry.duplicate();
            if (!includeSynonyms) {
                copy.setSynonyms(new ArrayList<>());
            }
            if (!includeDocumentation) {
                copy.setDocumentation(null);
            }
            out.add(copy);
        }
        return out;
    }

    private static List<DescribeConfigsResourceResult> build(BrokerConfig config) {
        Map<String, ConfigDef.ConfigKey> defs = AbstractKafkaConfig.CONFIG_DEF.configKeys();
        Map<String, String> originals = config.originals();
        Map<String, String> twinlogDefaults = twinlogDefaults(config);
        // Kafka's definition order is its grouping; a name order is what kafka-configs prints anyway.
        Map<String, DescribeConfigsResourceResult> byName = new TreeMap<>();
        for (ConfigDef.ConfigKey def : defs.values()) {
            if (def.internalConfig) {
                continue;
            }
            byName.put(def.name, entry(def.name, def, originals, twinlogDefaults));
        }
        // Twinlog's own keys (zookeeper.connect, mirror.state.timeout.ms, ...) with Twinlog's definition
        for (ConfigDef.ConfigKey def : BrokerConfig.CONFIG_DEF.configKeys().values()) {
            byName.putIfAbsent(def.name, entry(def.name, def, originals, twinlogDefaults));
        }
        // what nobody defines is shown as set, and hidden as Kafka hides values of unknown type (possibly secret)
        for (String name : originals.keySet()) {
            byName.putIfAbsent(name, entry(name, null, originals, twinlogDefaults));
        }
        return new ArrayList<>(byName.values());
    }

    private static DescribeConfigsResourceResult entry(String name, ConfigDef.ConfigKey def,
                                                      Map<String, String> originals,
                                                      Map<String, String> twinlogDefaults) {
        boolean sensitive = def == null || def.type == ConfigDef.Type.PASSWORD;
        String staticValue = originals.get(name);
        String defaultValue = twinlogDefaults.containsKey(name) ? twinlogDefaults.get(name) : kafkaDefault(def);
        boolean isStatic = staticValue != null;
        String value = isStatic ? normalized(staticValue, def) : defaultValue;
        List<DescribeConfigsSynonym> synonyms = new ArrayList<>();
        if (isStatic) {
            synonyms.add(new DescribeConfigsSynonym().setName(name).setValue(sensitive ? null : value)
                    .setSource(ConfigSource.STATIC_BROKER_CONFIG.id()));
        }
        if (def != null) {
            synonyms.add(new DescribeConfigsSynonym().setName(name).setValue(sensitive ? null : defaultValue)
                    .setSource(ConfigSource.DEFAULT_CONFIG.id()));
        }
        return new DescribeConfigsResourceResult()
                .setName(name)
                .setValue(sensitive ? null : value)
                .setReadOnly(true)
                .setConfigSource((isStatic ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG).id())
                .setIsSensitive(sensitive)
                .setConfigType(def == null ? (byte) 0 : TopicConfigs.configType(def.type).id())
                .setDocumentation(def == null ? null : def.documentation)
                .setSynonyms(synonyms);
    }

    /** The operator's value in Kafka's canonical form ("5000 " → "5000", lists without blanks); as given if invalid. */
    private static String normalized(String value, ConfigDef.ConfigKey def) {
        if (def == null) {
            return value;
        }
        try {
            return ConfigDef.convertToString(ConfigDef.parseType(def.name, value, def.type), def.type);
        } catch (ConfigException e) {
            return value;
        }
    }

    private static String kafkaDefault(ConfigDef.ConfigKey def) {
        if (def == null || !def.hasDefault() || def.defaultValue == null) {
            return null;
        }
        return ConfigDef.convertToString(def.defaultValue, def.type);
    }

    /** Where Twinlog's behaviour without the key differs from Kafka's default, the value Twinlog actually uses. */
    private static Map<String, String> twinlogDefaults(BrokerConfig config) {
        Map<String, String> out = new LinkedHashMap<>();
        out.put(BrokerConfig.BROKER_ID, Integer.toString(config.brokerId()));
        out.put("node.id", Integer.toString(config.brokerId()));
        out.put(BrokerConfig.LISTENERS, endpoints(config.listeners()));
        out.put(BrokerConfig.ADVERTISED_LISTENERS, endpoints(config.advertisedListeners()));
        String logDirs = config.logDirs().stream().map(Object::toString).collect(Collectors.joining(","));
        out.put(BrokerConfig.LOG_DIRS, logDirs);
        out.put(BrokerConfig.LOG_DIR, config.logDirs().get(0).toString());
        // The hosted group coordinator runs one thread by default on Twinlog (docs/decisions.md, decision 18).
        out.put(GroupCoordinatorConfig.GROUP_COORDINATOR_NUM_THREADS_CONFIG, "1");
        return out;
    }

    private static String endpoints(List<Endpoint> endpoints) {
        return endpoints.stream().map(Endpoint::toString).collect(Collectors.joining(","));
    }
}
