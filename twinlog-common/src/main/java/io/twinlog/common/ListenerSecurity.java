package io.twinlog.common;

import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.internals.BrokerSecurityConfigs;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.network.SocketServerConfigs;
import org.apache.kafka.server.config.ReplicationConfigs;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The security of a broker's listeners, from Kafka's broker configs (issue 13): each listener's security protocol
 * ({@code listener.security.protocol.map}), which listener brokers use among themselves
 * ({@code inter.broker.listener.name}, else the one named by {@code security.inter.broker.protocol}, else the first),
 * and, for SASL listeners, that every enabled mechanism ({@code sasl.enabled.mechanisms}, or its
 * {@code listener.name.X.} override) is one Twinlog serves. Everything else (keystores, JAAS, client auth) is read
 * by Kafka's own channel builders from the broker's configs, listener prefixes included.
 */
public final class ListenerSecurity {
    /** The SASL mechanisms Twinlog serves; GSSAPI (Kafka's default) and OAUTHBEARER are refused at start-up. */
    public static final Set<String> SUPPORTED_MECHANISMS = Set.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512");

    private final Map<String, SecurityProtocol> protocols;
    private final String interBrokerListener;

    /** @throws ConfigException one line naming the key and what is wrong */
    ListenerSecurity(AbstractConfig values, List<Endpoint> listeners, List<Endpoint> advertised) {
        Map<String, SecurityProtocol> map = parseMap(values.getString(
                SocketServerConfigs.LISTENER_SECURITY_PROTOCOL_MAP_CONFIG));
        this.protocols = new LinkedHashMap<>();
        for (Endpoint ep : listeners) {
            SecurityProtocol protocol = map.get(ep.listenerName());
            if (protocol == null) {
                throw new ConfigException(SocketServerConfigs.LISTENER_SECURITY_PROTOCOL_MAP_CONFIG + " has no "
                        + "security protocol for listener " + ep.listenerName() + " (add " + ep.listenerName()
                        + ":PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)");
            }
            protocols.put(ep.listenerName(), protocol);
        }
        for (Endpoint ep : advertised) {
            if (!protocols.containsKey(ep.listenerName())) {
                throw new ConfigException(SocketServerConfigs.ADVERTISED_LISTENERS_CONFIG + " names listener "
                        + ep.listenerName() + ", which is not in " + SocketServerConfigs.LISTENERS_CONFIG);
            }
        }
        this.interBrokerListener = interBrokerListener(values, listeners);
        for (Map.Entry<String, SecurityProtocol> e : protocols.entrySet()) {
            if (e.getValue() == SecurityProtocol.SASL_PLAINTEXT || e.getValue() == SecurityProtocol.SASL_SSL) {
                checkMechanisms(values, e.getKey());
            }
        }
    }

    private static Map<String, SecurityProtocol> parseMap(String value) {
        Map<String, SecurityProtocol> out = new LinkedHashMap<>();
        for (String entry : value.split(",")) {
            if (entry.isBlank()) {
                continue;
            }
            String[] parts = entry.trim().split(":");
            if (parts.length != 2) {
                throw new ConfigException(SocketServerConfigs.LISTENER_SECURITY_PROTOCOL_MAP_CONFIG, value,
                        "expected LISTENER:PROTOCOL,... but found '" + entry.trim() + "'");
            }
            try {
                out.put(parts[0].trim().toUpperCase(Locale.ROOT),
                        SecurityProtocol.forName(parts[1].trim().toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new ConfigException(SocketServerConfigs.LISTENER_SECURITY_PROTOCOL_MAP_CONFIG, value,
                        "unknown security protocol '" + parts[1].trim() + "' (PLAINTEXT, SSL, SASL_PLAINTEXT or "
                                + "SASL_SSL)");
            }
        }
        return out;
    }

    private String interBrokerListener(AbstractConfig values, List<Endpoint> listeners) {
        String named = values.getString(ReplicationConfigs.INTER_BROKER_LISTENER_NAME_CONFIG);
        if (named != null) {
            String name = named.trim().toUpperCase(Locale.ROOT);
            if (!protocols.containsKey(name)) {
                throw new ConfigException(ReplicationConfigs.INTER_BROKER_LISTENER_NAME_CONFIG, named,
                        "not one of the listeners " + protocols.keySet());
            }
            return name;
        }
        String byProtocol = values.getString(ReplicationConfigs.INTER_BROKER_SECURITY_PROTOCOL_CONFIG);
        if (byProtocol != null && protocols.containsKey(byProtocol.toUpperCase(Locale.ROOT))) {
            return byProtocol.toUpperCase(Locale.ROOT);
        }
        // Kafka would refuse a broker without a listener of that name; Twinlog has always used its first one
        return listeners.get(0).listenerName();
    }

    private static void checkMechanisms(AbstractConfig values, String listener) {
        String prefix = new ListenerName(listener).configPrefix();
        Object mechanisms = values.valuesWithPrefixOverride(prefix)
                .get(BrokerSecurityConfigs.SASL_ENABLED_MECHANISMS_CONFIG);
        List<?> enabled = mechanisms instanceof List<?> l ? l : List.of();
        if (enabled.isEmpty()) {
            throw new ConfigException(BrokerSecurityConfigs.SASL_ENABLED_MECHANISMS_CONFIG + " is empty for SASL "
                    + "listener " + listener);
        }
        for (Object m : enabled) {
            if (!SUPPORTED_MECHANISMS.contains(String.valueOf(m))) {
                throw new ConfigException(BrokerSecurityConfigs.SASL_ENABLED_MECHANISMS_CONFIG + " of listener "
                        + listener + " enables " + m + ", which Twinlog does not serve (it serves "
                        + String.join(", ", SUPPORTED_MECHANISMS.stream().sorted().toList()) + ")");
            }
        }
    }

    /** The security protocol of listener {@code name} (one of {@code listeners}). */
    public SecurityProtocol protocol(String name) {
        SecurityProtocol p = protocols.get(name);
        if (p == null) {
            throw new IllegalArgumentException("No listener " + name + " (listeners " + protocols.keySet() + ")");
        }
        return p;
    }

    /** The listener brokers connect to each other on. */
    public String interBrokerListener() {
        return interBrokerListener;
    }
}
