package io.twinlog.protocol;

import io.twinlog.common.BrokerConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.ChannelBuilders;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.network.ListenerReconfigurable;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.security.JaasContext;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.security.authenticator.CredentialCache;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.token.delegation.internals.DelegationTokenCache;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
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
     * The TLS builders of inter-broker client connections made so far, so that a keystore reloaded on the
     * inter-broker listener reaches the connections this broker opens too (weakly held: their owners close them).
     */
    private final Set<ListenerReconfigurable> interBrokerBuilders =
            Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));
    /** The inter-broker listener's stores as last reconfigured, for builders made later; null until then. */
    private volatile Map<String, Object> reconfiguredInterBroker;

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
        ChannelBuilder builder = ChannelBuilders.clientChannelBuilder(config.listenerSecurity().protocol(listener),
                JaasContext.Type.SERVER, config.values(), new ListenerName(listener),
                config.saslMechanismInterBrokerProtocol(), time, new LogContext("[" + clientId + "] "));
        if (builder instanceof ListenerReconfigurable reconfigurable && usesTls(listener)) {
            synchronized (interBrokerBuilders) {
                Map<String, Object> reloaded = reconfiguredInterBroker;
                if (reloaded != null) {
                    reconfigurable.reconfigure(reloaded);
                }
                interBrokerBuilders.add(reconfigurable);
            }
        }
        return builder;
    }

    /**
     * The inter-broker listener's keystore or truststore changed live (its effective configs, prefix applied, as
     * {@link SocketServer#reconfigure} takes them): connections this broker opens to others from now on present the
     * new certificate and trust the new truststore, as Kafka's brokers do; open ones keep theirs. Call it after the
     * listener's own check passed; a no-op when the inter-broker listener has no TLS.
     *
     * @throws ConfigException if Kafka's SslFactory refuses the stores (nothing changed then)
     */
    public void reconfigureInterBroker(Map<String, ?> listenerConfigs) {
        if (!usesTls(config.listenerSecurity().interBrokerListener())) {
            return;
        }
        Map<String, Object> configs = SocketServer.parsedSslConfigs(listenerConfigs);
        synchronized (interBrokerBuilders) {
            List<ListenerReconfigurable> live = new ArrayList<>(interBrokerBuilders);
            for (ListenerReconfigurable builder : live) {
                builder.validateReconfiguration(configs);
            }
            for (ListenerReconfigurable builder : live) {
                builder.reconfigure(configs);
            }
            reconfiguredInterBroker = configs;
        }
    }

    private boolean usesTls(String listener) {
        SecurityProtocol protocol = config.listenerSecurity().protocol(listener);
        return protocol == SecurityProtocol.SSL || protocol == SecurityProtocol.SASL_SSL;
    }

    /** The security protocol of {@code listener}. */
    public SecurityProtocol protocol(String listener) {
        return config.listenerSecurity().protocol(listener);
    }
}
