package io.twinlog.server.security;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.Endpoint;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.auth.SecurityProtocol;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The kafka-clients configs with which a broker's own clients reach its cluster (the quarantine's producer, the
 * mirror's group offset sync): the inter-broker listener of every registered broker (this one first), with that
 * listener's security as this broker uses it towards the others — its truststore and keystore, and for SASL the
 * inter-broker mechanism with the listener's JAAS section (whose {@code username}/{@code password} are this
 * broker's own login, as on Kafka).
 */
public final class LocalClientConfigs {
    private LocalClientConfigs() {
    }

    /** Empty while no broker has registered the inter-broker listener yet. */
    public static Optional<Map<String, Object>> of(BrokerConfig config, MetadataImage image, int brokerId) {
        String listener = config.listenerSecurity().interBrokerListener();
        List<BrokerRegistration> candidates = new ArrayList<>();
        Optional.ofNullable(image.brokers().get(brokerId)).ifPresent(candidates::add);
        image.brokers().values().stream().filter(b -> b.id() != brokerId).forEach(candidates::add);
        List<String> addresses = new ArrayList<>();
        for (BrokerRegistration b : candidates) {
            for (Endpoint ep : b.endpoints()) {
                if (ep.listenerName().equals(listener)) {
                    addresses.add((ep.host().contains(":") ? "[" + ep.host() + "]" : ep.host()) + ":" + ep.port());
                }
            }
        }
        if (addresses.isEmpty()) {
            return Optional.empty();
        }
        Map<String, Object> out = new HashMap<>();
        out.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, String.join(",", addresses));
        SecurityProtocol protocol = config.listenerSecurity().protocol(listener);
        out.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, protocol.name);
        Map<String, Object> values = config.values().valuesWithPrefixOverride(new ListenerName(listener).configPrefix());
        if (protocol == SecurityProtocol.SSL || protocol == SecurityProtocol.SASL_SSL) {
            for (String key : SslConfigs.RECONFIGURABLE_CONFIGS) {
                copy(values, out, key);
            }
            for (String key : List.of(SslConfigs.SSL_PROTOCOL_CONFIG, SslConfigs.SSL_ENABLED_PROTOCOLS_CONFIG,
                    SslConfigs.SSL_ENDPOINT_IDENTIFICATION_ALGORITHM_CONFIG, SslConfigs.SSL_CIPHER_SUITES_CONFIG)) {
                copy(values, out, key);
            }
        }
        if (protocol == SecurityProtocol.SASL_PLAINTEXT || protocol == SecurityProtocol.SASL_SSL) {
            String mechanism = config.saslMechanismInterBrokerProtocol();
            out.put(SaslConfigs.SASL_MECHANISM, mechanism);
            String jaasKey = new ListenerName(listener).configPrefix() + mechanism.toLowerCase(Locale.ROOT) + "."
                    + SaslConfigs.SASL_JAAS_CONFIG;
            Object jaas = config.values().originals().get(jaasKey);
            if (jaas == null) {
                jaas = values.get(SaslConfigs.SASL_JAAS_CONFIG);
            }
            if (jaas != null) {
                out.put(SaslConfigs.SASL_JAAS_CONFIG, jaas);
            }
        }
        return Optional.of(out);
    }

    private static void copy(Map<String, Object> from, Map<String, Object> to, String key) {
        Object value = from.get(key);
        if (value != null) {
            to.put(key, value);
        }
    }
}
