package io.twinlog.server.dynamic;

import io.twinlog.common.BrokerConfig;
import io.twinlog.protocol.ListenerChannels;
import io.twinlog.protocol.SocketServer;
import org.apache.kafka.common.network.ListenerName;

import java.util.Map;

/**
 * One listener's live configs: its number of network threads ({@code num.network.threads}) and its TLS stores
 * ({@code listener.name.<listener>.ssl.keystore.*}, {@code ...truststore.*}), which Kafka's own SslFactory checks
 * (same certificate names, a working handshake) and reloads for new connections; open ones keep theirs. The stores
 * go first, so that network threads added by the same change already use the new ones. On the inter-broker
 * listener the stores also serve the connections this broker opens to the others (replica fetchers, the mirror's
 * and coordinators' clients), as on a Kafka broker.
 */
public final class ListenerReconfiguration implements BrokerReconfigurable {
    private final String listener;
    private final SocketServer server;
    private final String prefix;
    private final ListenerChannels channels;

    public ListenerReconfiguration(String listener, SocketServer server, ListenerChannels channels) {
        this.listener = listener;
        this.server = server;
        this.channels = channels;
        this.prefix = new ListenerName(listener).configPrefix();
    }

    @Override
    public String name() {
        return "listener " + listener;
    }

    @Override
    public boolean reconfigures(String key) {
        return key.equals(BrokerConfig.NUM_NETWORK_THREADS) || key.startsWith(prefix);
    }

    @Override
    public boolean reloadsFiles() {
        return true;
    }

    @Override
    public void validateReconfiguration(BrokerConfig current, BrokerConfig next) {
        if (next.numNetworkThreads() != current.numNetworkThreads()) {
            ThreadCountRule.validate(BrokerConfig.NUM_NETWORK_THREADS, server.processorCount(),
                    next.numNetworkThreads());
        }
        server.validateReconfiguration(listenerConfigs(next));
    }

    @Override
    public void reconfigure(BrokerConfig previous, BrokerConfig next) {
        server.reconfigure(listenerConfigs(next));
        if (listener.equals(next.listenerSecurity().interBrokerListener())) {
            channels.reconfigureInterBroker(listenerConfigs(next));
        }
        if (next.numNetworkThreads() != server.processorCount()) {
            server.resizeProcessors(next.numNetworkThreads());
        }
    }

    /** The listener's configs as its channel builders read them: {@code listener.name.<l>.} keys over the plain ones. */
    private Map<String, Object> listenerConfigs(BrokerConfig config) {
        return config.values().valuesWithPrefixOverride(prefix);
    }
}
