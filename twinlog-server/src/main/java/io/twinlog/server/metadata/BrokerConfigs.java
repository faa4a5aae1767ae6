package io.twinlog.server.metadata;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.Endpoint;
import io.twinlog.group.GroupCoordinatorHost;
import io.twinlog.server.dynamic.DynamicBrokerConfigPolicy;
import io.twinlog.server.dynamic.DynamicBrokerConfigs;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsSynonym;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;
import org.apache.kafka.server.config.AbstractKafkaConfig;
import org.apache.kafka.server.config.DynamicBrokerConfig;

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
 * ({@link BrokerConfig#CONFIG_DEF}, such as {@code zookeeper.connect}), any other key of the properties file, and
 * every dynamic broker config set.
 *
 * <p>Values and sources in Kafka's order of precedence: the broker's own dynamic configs
 * ({@code DYNAMIC_BROKER_CONFIG}), the cluster default ({@code DYNAMIC_DEFAULT_BROKER_CONFIG}), the properties file
 * ({@code STATIC_BROKER_CONFIG}), and otherwise what Twinlog actually uses where its default differs from Kafka's
 * (broker id, listeners, log dirs, coordinator threads), else Kafka's default ({@code DEFAULT_CONFIG}); synonyms
 * ({@code log.retention.ms} / {@code .minutes} / {@code .hours}, a listener-prefixed key and its plain key) listed as
 * Kafka lists them. An entry is writable only if Twinlog applies it live ({@link DynamicBrokerConfigPolicy}).
 * Sensitive entries (Kafka's PASSWORD type, and keys nobody defines, which Kafka also treats as possibly secret) are
 * answered with a null value.
 *
 * <p>Immutable after construction; thread-safe.
 */
public final class BrokerConfigs {
    private final List<DescribeConfigsResourceResult> entries;
    private final List<DescribeConfigsResourceResult> clusterDefaults;

    public BrokerConfigs(BrokerConfig config) {
        this(config, DynamicBrokerConfigs.Layers.NONE);
    }

    public BrokerConfigs(BrokerConfig staticConfig, DynamicBrokerConfigs.Layers layers) {
        this.entries = List.copyOf(build(staticConfig, layers));
        this.clusterDefaults = List.copyOf(buildDefaults(layers));
    }

    /** All entries, or only {@code keys} when not null; synonyms and documentation only when asked for. */
    public List<DescribeConfigsResourceResult> describe(List<String> keys, boolean includeSynonyms,
                                                        boolean includeDocumentation) {
        return select(entries, keys, includeSynonyms, includeDocumentation);
    }

    /** The cluster default's dynamic configs (the resource name {@code ""}), as Kafka describes them. */
    public List<DescribeConfigsResourceResult> describeClusterDefaults(List<String> keys, boolean includeSynonyms,
                                                                       boolean includeDocumentation) {
        return select(clusterDefaults, keys, includeSynonyms, includeDocumentation);
    }

    private static List<DescribeConfigsResourceResult> select(List<DescribeConfigsResourceResult> from,
                                                              List<String> keys, boolean includeSynonyms,
                                                              boolean includeDocumentation) {
        List<DescribeConfigsResourceResult> out = new ArrayList<>();
        for (DescribeConfigsResourceResult entry : from) {
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

    private static List<DescribeConfigsResourceResult> build(BrokerConfig config, DynamicBrokerConfigs.Layers layers) {
        Map<String, ConfigDef.ConfigKey> defs = AbstractKafkaConfig.CONFIG_DEF.configKeys();
        Sources sources = new Sources(layers.perBroker(), layers.clusterDefault(), config.originals(),
                twinlogDefaults(config));
        // Kafka's definition order is its grouping; a name order is what kafka-configs prints anyway.
        Map<String, DescribeConfigsResourceResult> byName = new TreeMap<>();
        for (ConfigDef.ConfigKey def : defs.values()) {
            if (def.internalConfig) {
                continue;
            }
            byName.put(def.name, entry(def.name, sources));
        }
        // Twinlog's own keys (zookeeper.connect, mirror.state.timeout.ms, ...) with Twinlog's definition
        for (ConfigDef.ConfigKey def : BrokerConfig.CONFIG_DEF.configKeys().values()) {
            byName.putIfAbsent(def.name, entry(def.name, sources));
        }
        // what nobody defines is shown as set, and hidden as Kafka hides values of unknown type (possibly secret);
        // a listener-prefixed key takes its plain key's type
        for (Map<String, String> layer : List.of(config.originals(), layers.clusterDefault(), layers.perBroker())) {
            for (String name : layer.keySet()) {
                byName.putIfAbsent(name, entry(name, sources));
            }
        }
        return new ArrayList<>(byName.values());
    }

    private static List<DescribeConfigsResourceResult> buildDefaults(DynamicBrokerConfigs.Layers layers) {
        Sources onlyDefaults = new Sources(Map.of(), layers.clusterDefault(), Map.of(), Map.of());
        List<DescribeConfigsResourceResult> out = new ArrayList<>();
        for (String name : new TreeMap<>(layers.clusterDefault()).keySet()) {
            DescribeConfigsResourceResult entry = entry(name, onlyDefaults);
            entry.setSynonyms(new ArrayList<>(entry.synonyms().stream()
                    .filter(s -> s.source() == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.id()).toList()));
            out.add(entry);
        }
        return out;
    }

    /** Where a value can come from, highest first. */
    private record Sources(Map<String, String> perBroker, Map<String, String> clusterDefault,
                           Map<String, String> staticConfigs, Map<String, String> twinlogDefaults) {
    }

    private static DescribeConfigsResourceResult entry(String name, Sources sources) {
        ConfigDef.ConfigKey def = definition(name);
        boolean sensitive = def == null || def.type == ConfigDef.Type.PASSWORD;
        // Kafka's synonym listing: layer by layer, each layer's synonyms in order, then from the described name on
        List<String> names = DynamicBrokerConfig.brokerConfigSynonyms(name, true);
        List<DescribeConfigsSynonym> synonyms = new ArrayList<>();
        addSynonyms(synonyms, names, sources.perBroker(), ConfigSource.DYNAMIC_BROKER_CONFIG, sensitive);
        addSynonyms(synonyms, names, sources.clusterDefault(), ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, sensitive);
        addSynonyms(synonyms, names, sources.staticConfigs(), ConfigSource.STATIC_BROKER_CONFIG, sensitive);
        String defaultValue = sources.twinlogDefaults().containsKey(name) ? sources.twinlogDefaults().get(name)
                : kafkaDefault(def);
        if (def != null) {
            synonyms.add(new DescribeConfigsSynonym().setName(name).setValue(sensitive ? null : defaultValue)
                    .setSource(ConfigSource.DEFAULT_CONFIG.id()));
        }
        int from = 0;
        while (from < synonyms.size() && !synonyms.get(from).name().equals(name)) {
            from++;
        }
        List<DescribeConfigsSynonym> kept = new ArrayList<>(synonyms.subList(from, synonyms.size()));
        ConfigSource source = ConfigSource.DEFAULT_CONFIG;
        String value = defaultValue;
        String own = firstOf(name, sources);
        if (own != null) {
            value = normalized(own, def);
            source = sourceOf(name, sources);
        }
        return new DescribeConfigsResourceResult()
                .setName(name)
                .setValue(sensitive ? null : value)
                .setReadOnly(!DynamicBrokerConfigPolicy.isLive(name))
                .setConfigSource(source.id())
                .setIsSensitive(sensitive)
                .setConfigType(def == null ? (byte) 0 : TopicConfigs.configType(def.type).id())
                .setDocumentation(def == null ? null : def.documentation)
                .setSynonyms(kept);
    }

    private static void addSynonyms(List<DescribeConfigsSynonym> out, List<String> names, Map<String, String> layer,
                                    ConfigSource source, boolean sensitive) {
        for (String n : names) {
            String v = layer.get(n);
            if (v != null) {
                out.add(new DescribeConfigsSynonym().setName(n).setValue(sensitive ? null : normalized(v,
                        definition(n))).setSource(source.id()));
            }
        }
    }

    private static String firstOf(String name, Sources sources) {
        for (Map<String, String> layer : List.of(sources.perBroker(), sources.clusterDefault(),
                sources.staticConfigs())) {
            if (layer.containsKey(name)) {
                return layer.get(name);
            }
        }
        return null;
    }

    private static ConfigSource sourceOf(String name, Sources sources) {
        if (sources.perBroker().containsKey(name)) {
            return ConfigSource.DYNAMIC_BROKER_CONFIG;
        }
        return sources.clusterDefault().containsKey(name) ? ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
                : ConfigSource.STATIC_BROKER_CONFIG;
    }

    /** Kafka's or Twinlog's definition of a key; a listener-prefixed key has its plain key's. */
    private static ConfigDef.ConfigKey definition(String name) {
        ConfigDef.ConfigKey def = AbstractKafkaConfig.CONFIG_DEF.configKeys().get(name);
        if (def == null) {
            def = BrokerConfig.CONFIG_DEF.configKeys().get(name);
        }
        if (def == null && DynamicBrokerConfigPolicy.listenerOf(name).isPresent()) {
            List<String> synonyms = DynamicBrokerConfig.brokerConfigSynonyms(name, true);
            return synonyms.size() > 1 ? definition(synonyms.get(synonyms.size() - 1)) : null;
        }
        return def;
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
        // the hosted group coordinator's threads (decision 18)
        out.putAll(GroupCoordinatorHost.TWINLOG_DEFAULTS);
        return out;
    }

    private static String endpoints(List<Endpoint> endpoints) {
        return endpoints.stream().map(Endpoint::toString).collect(Collectors.joining(","));
    }
}
