package io.twinlog.server.dynamic;

import io.twinlog.common.BrokerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.server.config.DynamicBrokerConfig;
import org.apache.kafka.server.config.DynamicConfig;
import org.apache.kafka.storage.internals.log.LogConfig;

import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Which broker configs may be set with {@code kafka-configs --entity-type brokers --alter}, and at which level:
 * first Kafka 4.4's own rules, with Kafka's messages (Kafka's {@link DynamicBrokerConfig#validateConfigs}: keys Kafka
 * cannot change live, TLS keys without a listener prefix, per-broker keys at the cluster default, types and ranges),
 * then Twinlog's: only keys Twinlog applies live are stored, so that nothing is accepted and then ignored
 * (decision 101).
 *
 * <p>Stateless.
 */
public final class DynamicBrokerConfigPolicy {
    /** A listener-prefixed key: {@code listener.name.<listener>.<key>}. */
    private static final Pattern LISTENER_KEY = Pattern.compile("listener\\.name\\.([^.]+)\\.(.+)");
    private static final Set<String> THREAD_KEYS = Set.of("num.io.threads", "num.network.threads",
            "num.replica.fetchers");
    private static final Set<String> CLEANER_KEYS = Set.of("log.cleaner.threads", "log.cleaner.backoff.ms",
            "log.cleaner.dedupe.buffer.size", "log.cleaner.io.max.bytes.per.second", "log.cleaner.io.buffer.size",
            "log.cleaner.io.buffer.load.factor");
    /** A listener's TLS stores, reloaded live (Kafka's reconfigurable SSL configs). */
    private static final Set<String> LISTENER_SSL_KEYS = Set.of("ssl.keystore.type", "ssl.keystore.location",
            "ssl.keystore.password", "ssl.key.password", "ssl.keystore.key", "ssl.keystore.certificate.chain",
            "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
            "ssl.truststore.certificates");

    /** The broker keys that are defaults of topic configs: asked for every key of every change, so computed once. */
    private static final Set<String> LOG_DEFAULT_KEYS = LogConfig.configNames().stream()
            .map(BrokerConfig::brokerKeyForTopicKey).flatMap(Optional::stream).collect(Collectors.toUnmodifiableSet());

    private DynamicBrokerConfigPolicy() {
    }

    /** Whether Twinlog applies {@code key} live. */
    public static boolean isLive(String key) {
        Matcher listener = LISTENER_KEY.matcher(key);
        if (listener.matches()) {
            return LISTENER_SSL_KEYS.contains(listener.group(2));
        }
        return THREAD_KEYS.contains(key) || CLEANER_KEYS.contains(key) || isLogDefault(key);
    }

    /** A broker default of a topic config ({@code log.retention.ms}, {@code message.max.bytes}, ...). */
    public static boolean isLogDefault(String key) {
        return LOG_DEFAULT_KEYS.contains(key);
    }

    /** The listener a listener-prefixed key names; empty for other keys. */
    public static Optional<String> listenerOf(String key) {
        Matcher m = LISTENER_KEY.matcher(key);
        return m.matches() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /** Whether {@code key}'s value is a secret (Kafka's PASSWORD type, listener prefix taken off). */
    public static boolean isPassword(String key) {
        Matcher m = LISTENER_KEY.matcher(key);
        String base = m.matches() ? m.group(2) : key;
        ConfigDef.ConfigKey def = DynamicConfig.Broker.configKeys().get(base);
        return def != null && def.type == ConfigDef.Type.PASSWORD;
    }

    /**
     * Checks a whole set of dynamic configs for one level.
     *
     * @param perBroker  a broker's own configs ({@code --entity-name}), else the cluster default
     * @param canEncrypt whether {@code password.encoder.secret} is set, without which secrets are not stored
     * @throws InvalidRequestException with Kafka's message (or Twinlog's, for keys it does not apply live)
     */
    public static void validate(Map<String, String> configs, boolean perBroker, boolean canEncrypt) {
        Properties props = new Properties();
        props.putAll(configs);
        try {
            DynamicBrokerConfig.validateConfigs(props, props, perBroker);
        } catch (ConfigException e) {
            throw new InvalidRequestException(e.getMessage());
        }
        Set<String> notLive = new TreeSet<>();
        configs.keySet().stream().filter(k -> !isLive(k)).forEach(notLive::add);
        if (!notLive.isEmpty()) {
            throw new InvalidRequestException("Twinlog cannot update these configs dynamically: " + notLive);
        }
        if (!canEncrypt && configs.keySet().stream().anyMatch(DynamicBrokerConfigPolicy::isPassword)) {
            // ZooKeeper-mode Kafka's rule and words: a secret is never stored in clear
            throw new InvalidRequestException("Password encoder secret not configured");
        }
    }
}
