package io.twinlog.server.controller;

import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.protocol.client.InterBrokerClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;
import java.util.Optional;
import java.util.function.Function;

/**
 * Requests from this broker to the current controller (AlterPartition, forwarded ElectLeaders), over the
 * inter-broker listener. The controller is looked up in the metadata image on every call, so a controller
 * failover is followed without extra state. Calls are serialized: one request in flight.
 */
public final class ControllerChannel implements AutoCloseable {
    private final MetadataWatcher metadata;
    private final Function<Integer, Optional<Node>> brokerNodes;
    private final InterBrokerClient client;

    /** @param channels a configured channel builder for the inter-broker listener's security, by client id */
    public ControllerChannel(int brokerId, MetadataWatcher metadata, Function<Integer, Optional<Node>> brokerNodes,
                             int requestTimeoutMs, Function<String, ChannelBuilder> channels, Time time) {
        this.metadata = metadata;
        this.brokerNodes = brokerNodes;
        String clientId = "controller-channel-" + brokerId;
        this.client = new InterBrokerClient(clientId, channels.apply(clientId), requestTimeoutMs, 1 << 20, 50, 1_000,
                time);
    }

    public synchronized <T extends AbstractResponse> T send(AbstractRequest.Builder<?> request) throws IOException {
        return client.send(controllerNode().orElseThrow(() ->
                new NotControllerException("No controller is known at the moment")), request);
    }

    public Optional<Node> controllerNode() {
        int id = metadata.image().controllerId();
        return id < 0 ? Optional.empty() : brokerNodes.apply(id);
    }

    @Override
    public void close() {
        client.wakeup();
        client.close();
    }
}
