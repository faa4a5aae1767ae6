package io.twinlog.protocol;

import io.twinlog.common.BrokerConfig;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.ChannelBuilders;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.security.JaasContext;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.security.authenticator.CredentialCache;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.token.delegation.internals.DelegationTokenCache;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;

import java.util.function.Function;

/**
 * Kafka's own channel builders for a broker's connections (issue 13): server side per listener (TLS handshake,
 * SASL authentication including the SaslHandshake/SaslAuthenticate exchange, principal building), client side for
 * the connections brokers make to each other over the inter-broker listener. The configs are the broker's, with
 * Kafka's {@code listener.name.X.} overrides, read by the builders exactly as a Kafka broker's are; a bad keystore
 * or JAAS section fails here, at start-up, with Kafka's message.
 */
public final class ListenerChannels {
    private final BrokerConfig config;
    private final CredentialCache credentials;
    private final DelegationTokenCache tokens = new DelegationTokenCache(ScramMechanism.mechanismNames());
    private final Function<Short, ApiVersionsResponse> apiVersions;
    private final Time time;

    /**
     * @param credentials SCRAM credentials, by mechanism (the broker keeps them up to date)
     * @param apiVersions what ApiVersions answers while a SASL client has not authenticated yet
     */
    public ListenerChannels(BrokerConfig config, CredentialCache credentials,
                            Function<Short, ApiVersionsResponse> apiVersions, Time time) {
        this.config = config;
        this.credentials = credentials;
        this.apiVersions = apiVersions;
        this.time = time;
    }

    /**
     * An empty SCRAM credential cache with a cache per SCRAM mechanism, as Kafka's SASL server expects; the broker
     * fills it with the credentials it reads from ZooKeeper.
     */
    public static CredentialCache newCredentialCache() {
        CredentialCache cache = new CredentialCache();
        for (String mechanism : ScramMechanism.mechanismNames()) {
            cache.createCache(mechanism, ScramCredential.class);
        }
        return cache;
    }

    /** A configured server-side builder for one network thread of {@code listener}. */
    public ChannelBuilder server(String listener, int processor) {
        ListenerName name = new ListenerName(listener);
        SecurityProtocol protocol = config.listenerSecurity().protocol(listener);
        boolean interBroker = listener.equals(config.listenerSecurity().interBrokerListener());
        return ChannelBuilders.serverChannelBuilder(name, interBroker, protocol, config.values(), credentials,
                tokens, time, new LogContext("[" + listener + " processor " + processor + "] "), apiVersions);
    }

    /**
     * A configured client-side builder for connections to other brokers over the inter-broker listener, with its
     * security (the JAAS section of that listener's server context, as Kafka's brokers do); the caller closes it.
     */
    public ChannelBuilder interBroker(String clientId) {
        String listener = config.listenerSecurity().interBrokerListener();
        return ChannelBuilders.clientChannelBuilder(config.listenerSecurity().protocol(listener),
                JaasContext.Type.SERVER, config.values(), new ListenerName(listener),
                config.saslMechanismInterBrokerProtocol(), time, new LogContext("[" + clientId + "] "));
    }

    /** The security protocol of {@code listener}. */
    public SecurityProtocol protocol(String listener) {
        return config.listenerSecurity().protocol(listener);
    }
}
