package io.twinlog.protocol;

import io.twinlog.common.Endpoint;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.KafkaChannel;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.network.ListenerReconfigurable;
import org.apache.kafka.common.network.NetworkReceive;
import org.apache.kafka.common.network.NetworkSend;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.network.ByteBufferSend;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.RequestAndSize;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.server.network.ConnectionDisconnectListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Predicate;

/**
 * One network thread: owns a Kafka {@link Selector} and every connection assigned
 * to it.
 *
 * <p>Threading: only this thread touches the selector. Other threads hand it new sockets and responses through
 * lock-free queues and wake it up. A connection is muted from the moment a request is read until its response has
 * been written (or dropped, for acks=0), so each connection has at most one request in flight and responses come
 * back in order.
 *
 * <p>Bad input closes only the offending connection, with one log line: frames above
 * {@code socket.request.max.bytes} (rejected by the selector before any allocation), frames whose header or body
 * do not parse, and clients that vanish mid-request. An unknown API key or an API version kafka-clients cannot
 * parse is answered with a minimal UNSUPPORTED_VERSION frame (correlation id + error code) and then the connection
 * is closed, because no response schema exists to say more; Produce v0-2, advertised but removed from the protocol,
 * close the connection without a frame, as in Kafka 4.4.
 *
 * <p>A processor removed by a shrink of {@code num.network.threads} is closed with its connections, as Kafka does;
 * responses handed to it afterwards (its requests still being handled) are dropped, and a connection handed to it
 * afterwards is refused back to the acceptor.
 */
final class Processor implements Request.ResponseSink {
    private static final Logger log = LoggerFactory.getLogger(Processor.class);

    private final int brokerId;
    private final int id;
    private final RequestChannel requestChannel;
    private final Selector selector;
    private final ListenerName listenerName;
    private final Time time;
    private final ConcurrentLinkedQueue<SocketChannel> newConnections = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Action> actions = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean running = true;
    private long connectionIndex;

    private final Predicate<Short> customApis;
    private final RequestMetrics requestMetrics;
    /** The request whose response is being written, per connection (one at a time: the connection is muted). */
    private final Map<String, Request> sending = new HashMap<>();
    private final SecurityProtocol securityProtocol;
    private final ResponseThrottling throttling;
    /** The selector's builder, kept to reload its keystore; the selector owns (closes) it. */
    private final ChannelBuilder channelBuilder;
    /**
     * Held to reload the keystore and to register connections: the reload runs on the caller's thread and Kafka's
     * SslFactory keeps its engine factory in a plain field, so the lock is what makes new connections see the new
     * keystore (and never a half-made one).
     */
    private final Object channelBuilderLock = new Object();
    /**
     * Told the id of every connection that closed, whichever side closed it (Kafka's Processor tells only of those
     * the client closed; a connection this broker closes holds sessions just the same). Called on this thread:
     * implementations only hand the news on.
     */
    private final ConnectionDisconnectListener disconnectListener;

    /** @param channelBuilder configured for the listener's security; the selector closes it */
    Processor(int brokerId, int id, Endpoint endpoint, SecurityProtocol securityProtocol, ChannelBuilder channelBuilder,
              int maxRequestSize, long connectionsMaxIdleMs, RequestChannel requestChannel, Metrics metrics,
              RequestMetrics requestMetrics, Time time, Predicate<Short> customApis, ResponseThrottling throttling,
              ConnectionDisconnectListener disconnectListener) {
        this.disconnectListener = disconnectListener;
        this.requestMetrics = requestMetrics;
        this.throttling = throttling;
        this.customApis = customApis;
        this.brokerId = brokerId;
        this.id = id;
        this.requestChannel = requestChannel;
        this.time = time;
        this.listenerName = new ListenerName(endpoint.listenerName());
        this.securityProtocol = securityProtocol;
        this.channelBuilder = channelBuilder;
        this.selector = new Selector(maxRequestSize, connectionsMaxIdleMs, metrics,
                time, "socket-server", Map.of("listener", endpoint.listenerName(), "networkProcessor",
                        Integer.toString(id)), false,
                channelBuilder, new LogContext("[Processor broker=" + brokerId + " id=" + id + "] "));
        // the listener is in the name: every listener numbers its network threads from 0
        this.thread = new Thread(this::runLoop,
                "twinlog-network-" + brokerId + "-" + endpoint.listenerName() + "-" + id);
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /**
     * Hands a new connection to this thread.
     *
     * @return false if this processor is closed and the connection was not taken (the caller gives it to another)
     */
    boolean accept(SocketChannel channel) {
        if (!running) {
            return false;
        }
        newConnections.add(channel);
        if (!running && newConnections.remove(channel)) {
            return false; // closed between the check and the add, and its thread has not taken it
        }
        selector.wakeup();
        return true;
    }

    /** The channel builder as Kafka's reconfigurable (SSL and SASL builders are), or null. */
    ListenerReconfigurable reconfigurableChannels() {
        return channelBuilder instanceof ListenerReconfigurable r ? r : null;
    }

    /** Reloads this thread's keystore and truststore (connections already open keep theirs). */
    void reconfigureChannels(Map<String, ?> configs) {
        ListenerReconfigurable reconfigurable = reconfigurableChannels();
        if (reconfigurable != null) {
            synchronized (channelBuilderLock) {
                reconfigurable.reconfigure(configs);
            }
        }
    }

    @Override
    public void send(Request request, Send send) {
        enqueue(new Action(ActionKind.SEND, request, send));
    }

    @Override
    public void noResponse(Request request) {
        enqueue(new Action(ActionKind.NO_RESPONSE, request, null));
    }

    @Override
    public void close(Request request) {
        enqueue(new Action(ActionKind.CLOSE, request, null));
    }

    @Override
    public void throttleStarted(Request request) {
        enqueue(new Action(ActionKind.THROTTLE_START, request, null));
    }

    @Override
    public void throttleEnded(Request request) {
        enqueue(new Action(ActionKind.THROTTLE_END, request, null));
    }

    @Override
    public ResponseThrottling throttling() {
        return throttling;
    }

    /** After {@link #close()} the action is dropped: its connection is gone with this processor's selector. */
    private void enqueue(Action action) {
        if (!running) {
            return;
        }
        actions.add(action);
        if (!running) {
            actions.clear(); // closed meanwhile: nothing will ever drain the queue
            return;
        }
        selector.wakeup();
    }

    private void runLoop() {
        try {
            while (running) {
                try {
                    registerNewConnections();
                    processActions();
                    selector.poll(300);
                    processCompletedReceives();
                    processCompletedSends();
                    processDisconnected();
                } catch (InterruptedException e) {
                    return;
                } catch (Throwable t) {
                    // broad: the network thread must outlive any single failure; its connections depend on it
                    log.error("Unexpected error in network processor {} of broker {}", id, brokerId, t);
                }
            }
        } finally {
            closeSelector();
        }
    }

    /** Closes every connection, the channel builder and the selector's metrics, and drops what is still queued. */
    private void closeSelector() {
        selector.close();
        SocketChannel pending;
        while ((pending = newConnections.poll()) != null) {
            closeQuietly(pending);
        }
        actions.clear();
    }

    private void registerNewConnections() {
        SocketChannel ch;
        while ((ch = newConnections.poll()) != null) {
            Socket s = ch.socket();
            String connectionId = s.getLocalAddress().getHostAddress() + ":" + s.getLocalPort() + "-"
                    + s.getInetAddress().getHostAddress() + ":" + s.getPort() + "-" + id + "-" + (connectionIndex++);
            try {
                synchronized (channelBuilderLock) {
                    selector.register(connectionId, ch); // builds the channel, with the keystore of now
                }
            } catch (IOException e) {
                log.info("Could not register connection {}: {}", connectionId, e.toString());
                closeQuietly(ch);
            }
        }
    }

    private void processActions() {
        Action a;
        while ((a = actions.poll()) != null) {
            String connectionId = a.request.connectionId();
            KafkaChannel channel = selector.channel(connectionId);
            if (channel == null) {
                continue; // the client went away while its request was being handled
            }
            if (a.kind == ActionKind.THROTTLE_START) {
                muteEvent(channel, KafkaChannel.ChannelMuteEvent.THROTTLE_STARTED);
                continue;
            }
            if (a.kind == ActionKind.THROTTLE_END) {
                if (muteEvent(channel, KafkaChannel.ChannelMuteEvent.THROTTLE_ENDED)) {
                    selector.unmute(connectionId); // reads again only if its response is written too
                }
                continue;
            }
            a.request.markResponseDequeued();
            if (a.kind == ActionKind.CLOSE) {
                requestMetrics.record(a.request, System.nanoTime());
                closeConnection(connectionId);
            } else if (a.kind == ActionKind.NO_RESPONSE) {
                requestMetrics.record(a.request, System.nanoTime());
                responseDone(connectionId);
            } else {
                try {
                    sending.put(connectionId, a.request);
                    selector.send(new NetworkSend(connectionId, a.send));
                } catch (RuntimeException e) {
                    // the channel cannot take it (e.g. a send still in progress): the client must not wait forever
                    sending.remove(connectionId);
                    a.request.closeAfterUnwritableResponse(e);
                }
            }
        }
    }

    private void processCompletedReceives() throws InterruptedException {
        for (NetworkReceive receive : selector.completedReceives()) {
            String connectionId = receive.source();
            KafkaChannel channel = selector.channel(connectionId);
            if (channel == null) {
                continue;
            }
            ByteBuffer payload = receive.payload();
            Request request = parse(connectionId, channel, payload, receive.size());
            if (request != null) {
                // muted until its response is written and any throttle of the client is over (KIP-219)
                selector.mute(connectionId);
                if (muteEvent(channel, KafkaChannel.ChannelMuteEvent.REQUEST_RECEIVED)) {
                    requestChannel.put(request);
                }
            }
        }
        selector.clearCompletedReceives();
    }

    private Request parse(String connectionId, KafkaChannel channel, ByteBuffer payload, int size) {
        if (payload.remaining() >= 2 && customApis.test(payload.getShort(payload.position()))) {
            try {
                ByteBuffer body = payload.duplicate();
                CustomApiHeader header = CustomApiHeader.parse(body);
                CustomRequestContext sender = new CustomRequestContext(header, channel.principal(),
                        channel.socketAddress(), listenerName, securityProtocol);
                return new Request(header, body.slice(), connectionId, sender, System.nanoTime(), size, this);
            } catch (InvalidRequestException e) {
                log.info("Closing connection {}: {}", connectionId, e.getMessage());
                closeConnection(connectionId);
                return null;
            }
        }
        // Read before parsing: a failed parse leaves the buffer's position wherever it stopped, and a truncated
        // header of a known API must not pass for an unknown key (that would answer instead of closing).
        int start = payload.position();
        short apiKey = payload.remaining() >= 2 ? payload.getShort(start) : -1;
        int correlationId = payload.remaining() >= 8 ? payload.getInt(start + 4) : -1;
        RequestHeader header;
        try {
            header = RequestHeader.parse(payload);
        } catch (InvalidRequestException | IllegalArgumentException e) {
            if (correlationId >= 0 && !ApiKeys.hasId(apiKey)) {
                log.info("Closing connection {}: unknown API key {} (answered UNSUPPORTED_VERSION)", connectionId, apiKey);
                sendRawErrorThenClose(connectionId, correlationId);
            } else {
                log.info("Closing connection {}: malformed request header: {}", connectionId, e.getMessage());
                closeConnection(connectionId);
            }
            return null;
        } catch (RuntimeException e) {
            // broad: a header of any malformed shape closes only that connection
            log.info("Closing connection {}: malformed request header: {}", connectionId, e.toString());
            log.debug("The malformed request header on connection {}", connectionId, e); // the client's, so DEBUG
            closeConnection(connectionId);
            return null;
        }
        RequestContext context = new RequestContext(header, connectionId, channel.socketAddress(),
                Optional.of(channel.socketPort()), channel.principal(), listenerName, securityProtocol,
                ClientInformation.EMPTY, false);
        if (isAdvertisedButRemoved(header)) {
            log.info("Closing connection {}: {} version {} is advertised for librdkafka (KAFKA-18659) but no longer "
                    + "exists in the protocol; closed without an answer, as Kafka 4.4 does", connectionId,
                    header.apiKey(), header.apiVersion());
            closeConnection(connectionId);
            return null;
        }
        if (header.apiKey() != ApiKeys.API_VERSIONS && !header.apiKey().isVersionSupported(header.apiVersion())) {
            log.info("Closing connection {}: {} version {} is not supported (answered UNSUPPORTED_VERSION)",
                    connectionId, header.apiKey(), header.apiVersion());
            sendRawErrorThenClose(connectionId, correlationId);
            return null;
        }
        try {
            RequestAndSize parsed = context.parseRequest(payload);
            return new Request(context, parsed.request, System.nanoTime(), size, this);
        } catch (RuntimeException e) {
            // broad: a body of any malformed shape closes only that connection
            log.info("Closing connection {}: malformed {} v{} request: {}", connectionId, header.apiKey(),
                    header.apiVersion(), e.getMessage());
            log.debug("The malformed request on connection {}", connectionId, e); // the client's, so DEBUG
            closeConnection(connectionId);
            return null;
        }
    }

    /**
     * Produce v0-2: removed in Kafka 4.0, yet ApiVersions lists Produce from v0 because librdkafka otherwise turns
     * compression off (KAFKA-18659). Kafka 4.4 closes the connection when one arrives; so does Twinlog.
     */
    private static boolean isAdvertisedButRemoved(RequestHeader header) {
        return header.apiKey() == ApiKeys.PRODUCE && header.apiVersion() >= 0
                && header.apiVersion() < ApiKeys.PRODUCE.oldestVersion();
    }

    /** A frame Kafka clients and raw peers can read: [size][correlationId][errorCode=UNSUPPORTED_VERSION]. */
    private void sendRawErrorThenClose(String connectionId, int correlationId) {
        ByteBuffer buf = ByteBuffer.allocate(10);
        buf.putInt(6).putInt(correlationId).putShort(Errors.UNSUPPORTED_VERSION.code()).flip();
        selector.mute(connectionId);
        selector.send(new NetworkSend(connectionId, new ByteBufferSend(buf)));
        closeAfterSend.add(connectionId);
    }

    private final Set<String> closeAfterSend = new HashSet<>();

    private void processCompletedSends() {
        for (NetworkSend send : selector.completedSends()) {
            String connectionId = send.destinationId();
            Request request = sending.remove(connectionId);
            if (request != null) {
                requestMetrics.record(request, System.nanoTime());
            }
            if (closeAfterSend.remove(connectionId)) {
                closeConnection(connectionId);
            } else {
                responseDone(connectionId);
            }
        }
        selector.clearCompletedSends();
    }

    /** The response is written (or none was due): the connection reads again, unless its client is throttled. */
    private void responseDone(String connectionId) {
        KafkaChannel channel = selector.channel(connectionId);
        if (channel != null && muteEvent(channel, KafkaChannel.ChannelMuteEvent.RESPONSE_SENT)) {
            selector.unmute(connectionId);
        }
    }

    /**
     * Drives Kafka's mute state of a channel. A transition the state machine refuses would be a bug here; the
     * connection is then closed with the reason logged, since a connection left muted for ever is the worst outcome
     * of such a bug and a client simply reconnects.
     */
    private boolean muteEvent(KafkaChannel channel, KafkaChannel.ChannelMuteEvent event) {
        try {
            channel.handleChannelMuteEvent(event);
            return true;
        } catch (IllegalStateException e) {
            log.error("Closing connection {}: its mute state {} cannot take {}", channel.id(), channel.muteState(),
                    event, e);
            closeConnection(channel.id());
            return false;
        }
    }

    private void processDisconnected() {
        for (String connectionId : selector.disconnected().keySet()) {
            closeAfterSend.remove(connectionId);
            sending.remove(connectionId);
            log.debug("Connection {} closed", connectionId);
            notifyDisconnected(connectionId);
        }
    }

    /** Closes a connection from this side; the selector lists only connections the other side closed. */
    private void closeConnection(String connectionId) {
        boolean open = selector.channel(connectionId) != null || selector.closingChannel(connectionId) != null;
        selector.close(connectionId);
        if (open) {
            notifyDisconnected(connectionId);
        }
    }

    private void notifyDisconnected(String connectionId) {
        try {
            disconnectListener.onDisconnect(connectionId);
        } catch (RuntimeException e) {
            // broad: one listener's failure must not stop the connection's cleanup
            log.error("A disconnect listener failed on connection {}", connectionId, e);
        }
    }

    /**
     * Stops this thread and closes its connections, waiting up to 5 s. Not thread-safe against {@link #start()}:
     * the socket server calls both under its lock.
     */
    void close() {
        running = false;
        if (thread.getState() == Thread.State.NEW) {
            closeSelector(); // never started: no thread of its own to do it
            return;
        }
        selector.wakeup();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            log.warn("Network thread {} did not stop within 5 s (blocked on a full request queue?); its "
                    + "connections close when it does", thread.getName());
        }
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // closing a socket we failed to register; nothing else to do
        }
    }

    private enum ActionKind { SEND, NO_RESPONSE, CLOSE, THROTTLE_START, THROTTLE_END }

    private record Action(ActionKind kind, Request request, Send send) {
    }
}
