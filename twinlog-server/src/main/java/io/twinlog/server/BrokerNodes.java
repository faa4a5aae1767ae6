package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.Endpoint;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.zk.MetadataWatcher;
import org.apache.kafka.common.Node;

import java.util.Optional;

/**
 * Where the other brokers are, from the metadata image: each broker's node on the inter-broker listener (or the
 * configured override), and this broker's own epoch. Every inter-broker client of the broker asks here.
 */
final class BrokerNodes {
    private final BrokerConfig config;
    private final MetadataWatcher watcher;
    private final String interBrokerListener;

    BrokerNodes(BrokerConfig config, MetadataWatcher watcher) {
        this.config = config;
        this.watcher = watcher;
        this.interBrokerListener = config.listenerSecurity().interBrokerListener();
    }

    /** Broker {@code id}'s inter-broker endpoint; empty while it is not registered. */
    Optional<Node> node(int id) {
        Endpoint override = config.interBrokerEndpointOverrides().get(id);
        if (override != null) {
            return Optional.of(new Node(id, override.host(), override.port()));
        }
        BrokerRegistration b = watcher.image().brokers().get(id);
        if (b == null) {
            return Optional.empty();
        }
        return b.endpoint(interBrokerListener).map(e -> new Node(id, e.host(), e.port()));
    }

    /** This broker's epoch: the creation zxid of its registration (-1 before it is registered). */
    long brokerEpoch() {
        BrokerRegistration b = watcher.image().brokers().get(config.brokerId());
        return b == null ? -1L : b.brokerEpoch();
    }
}
