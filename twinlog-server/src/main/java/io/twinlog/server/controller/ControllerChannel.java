package io.twinlog.server.controller;

import io.twinlog.protocol.AdminDeadline;
import io.twinlog.protocol.client.InterBrokerClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.errors.NotControllerException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;

/**
 * One connection from this broker to the current controller, over the inter-broker listener, for one purpose. The
 * controller is looked up in the metadata image on every call, so a controller failover is followed without extra
 * state. Calls are serialized: one request in flight, and the caller's thread waits for its answer.
 *
 * <p>Since a call holds the channel until its answer, each purpose has a channel of its own, as Kafka's brokers
 * have a channel manager per purpose: {@link #ALTER_PARTITION} carries only the ISR changes acks=all produce waits
 * for, {@link #FORWARDING} the admin requests forwarded to the controller (ElectLeaders, reassignments), whose
 * answers may take as long as the election or the metadata they wait for. A slow forwarded election then never
 * holds back an ISR change.
 */
public final class ControllerChannel implements AutoCloseable {
    /** ISR changes from this broker's leaders (the {@code AlterPartitionManager}'s thread). */
    public static final String ALTER_PARTITION = "alter-partition";
    /** Admin requests forwarded to the controller, from the admin threads. */
    public static final String FORWARDING = "forwarding";

    private final IntSupplier controllerId;
    private final Function<Integer, Optional<Node>> brokerNodes;
    private final InterBrokerClient client;

    /**
     * @param purpose      {@link #ALTER_PARTITION} or {@link #FORWARDING}: names the client id and the thread's log lines
     * @param controllerId the controller's broker id in the latest metadata image, -1 when none is known
     * @param channels     a configured channel builder for the inter-broker listener's security, by client id
     */
    public ControllerChannel(String purpose, int brokerId, IntSupplier controllerId,
                             Function<Integer, Optional<Node>> brokerNodes, int requestTimeoutMs,
                             Function<String, ChannelBuilder> channels, Time time) {
        this.controllerId = controllerId;
        this.brokerNodes = brokerNodes;
        String clientId = "controller-" + purpose + "-channel-" + brokerId;
        this.client = new InterBrokerClient(clientId, channels.apply(clientId), requestTimeoutMs, 1 << 20, 50, 1_000,
                time);
    }

    public synchronized <T extends AbstractResponse> T send(AbstractRequest.Builder<?> request) throws IOException {
        return client.send(controllerNode().orElseThrow(() ->
                new NotControllerException("No controller is known at the moment")), request);
    }

    /**
     * Forwards an admin request with the time its client has left, measured once this channel is free (a forwarded
     * election holds it until its leaders are visible): the controller then expires it on the same deadline, and a
     * request whose client gave up while it waited here is not sent at all (issue 25, point 7).
     *
     * @param request the request to send, given the time left in milliseconds (its {@code timeoutMs})
     * @throws TimeoutException when the deadline passed before the request could be sent (REQUEST_TIMED_OUT)
     */
    public synchronized <T extends AbstractResponse> T send(AdminDeadline deadline,
                                                            IntFunction<AbstractRequest.Builder<?>> request)
            throws IOException {
        long now = System.nanoTime();
        long left = deadline.remainingMs(now);
        if (left <= 0) {
            throw deadline.exception(now);
        }
        return client.send(controllerNode().orElseThrow(() ->
                new NotControllerException("No controller is known at the moment")), request.apply((int) left));
    }

    public Optional<Node> controllerNode() {
        int id = controllerId.getAsInt();
        return id < 0 ? Optional.empty() : brokerNodes.apply(id);
    }

    @Override
    public void close() {
        client.wakeup();
        client.close();
    }
}
