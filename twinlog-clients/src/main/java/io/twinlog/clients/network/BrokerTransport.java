package io.twinlog.clients.network;

import io.twinlog.clients.network.TransportException.Kind;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ByteBufferSend;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.ChannelState;
import org.apache.kafka.common.network.NetworkReceive;
import org.apache.kafka.common.network.NetworkSend;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.security.authenticator.SaslClientAuthenticator;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.ExponentialBackoff;
import org.apache.kafka.common.utils.internals.LogContext;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * Twinlog's one client transport to brokers, for Kafka's APIs and the mirror APIs alike: blocking request/response
 * exchanges, one at a time per connection, over Kafka's {@link Selector}, whose channels come from the caller's
 * {@link ChannelBuilder} (PLAINTEXT, TLS, SASL, built from a broker's or a client's configs as Kafka's clients build
 * them). It is what Kafka's {@code NetworkClient} would be here if it could carry the mirror APIs, which it cannot:
 * its requests, headers, version negotiation and response parsing all go through the {@code ApiKeys} enum, and the
 * mirror APIs' keys (7000+) are not in it (decision 120). The frames are the callers' (a request header and body
 * without the size prefix; the answer's header and body): {@code InterBrokerClient} frames Kafka's APIs and
 * negotiates their versions with ApiVersions, {@code MirrorNetworkClient} frames the mirror APIs.
 *
 * <p>Connections are named by the caller (a broker id, an attempt of a bootstrap round) and, as in
 * {@code NetworkClient}: a connection counts as ready once its TCP connection is made and its channel is ready
 * (TLS handshake, SASL authentication done); one that is not set up within the connection setup timeout
 * ({@code socket.connection.setup.timeout.ms}, doubling to its max with each failed attempt) is
 * closed; after a failed attempt the next waits the reconnect backoff ({@code reconnect.backoff.ms}, doubling to
 * {@code reconnect.backoff.max.ms}; both with the settings' jitter), and {@link #disconnect} forgets both, as {@code NetworkClient.close}
 * does; a broker that asks the client to throttle ({@link #throttle}) gets no request on that connection before the
 * throttle time ends. A request not answered within its timeout closes the connection (an answer arriving later
 * must not be read as the next one's).
 *
 * <p>Threading: one thread at a time (the caller serializes); {@link #wakeup} and {@link #abort} from any thread.
 */
public final class BrokerTransport implements AutoCloseable {
    private final Time time;
    private final Settings settings;
    private final Metrics metrics = new Metrics();
    private final Selector selector;
    private final ExponentialBackoff reconnectBackoff;
    private final ExponentialBackoff connectionSetupTimeout;
    private final Map<String, Connection> connections = new HashMap<>();
    /** Failed attempts and when the last began, per connection name; forgotten on success and on disconnect. */
    private final Map<String, Attempts> attempts = new HashMap<>();
    private int correlationId;
    /** Set by {@link #abort} from any thread: every call in progress or to come fails, nothing more is read. */
    private volatile boolean aborted;

    /**
     * How connections are made and how long each step may take.
     *
     * @param connectionsMaxIdleMs       a connection idle this long is closed by the selector
     * @param connectionSetupTimeoutMs   the first connection attempt's limit; doubled per failure up to the max
     * @param reconnectBackoffMs         the wait after a failed attempt; doubled per failure up to the max
     * @param sendBufferBytes            SO_SNDBUF, or {@code Selectable.USE_DEFAULT_BUFFER_SIZE}
     * @param receiveBufferBytes         SO_RCVBUF, or {@code Selectable.USE_DEFAULT_BUFFER_SIZE}
     * @param jitter                     the random share of both backoffs ({@code NetworkClient}'s is 0.2)
     */
    public record Settings(long connectionsMaxIdleMs, long connectionSetupTimeoutMs, long connectionSetupTimeoutMaxMs,
                           long reconnectBackoffMs, long reconnectBackoffMaxMs, int sendBufferBytes,
                           int receiveBufferBytes, double jitter) {
    }

    private static final class Connection {
        final InetSocketAddress address;
        /** The TCP connection is made (a PLAINTEXT channel counts as ready before it is). */
        boolean established;
        /** Why the selector closed it, once it did. */
        ChannelState closed;
        ByteBuffer received;
        long throttledUntilMs;

        Connection(InetSocketAddress address) {
            this.address = address;
        }
    }

    private static final class Attempts {
        int failed;
        long lastStartedMs;
    }

    /**
     * @param metricGroupPrefix the selector's metric group prefix (its client id)
     * @param channelBuilder    how channels are made; closed with this transport
     */
    public BrokerTransport(String metricGroupPrefix, ChannelBuilder channelBuilder, Settings settings, Time time,
                           LogContext logContext) {
        this.time = time;
        this.settings = settings;
        this.selector = new Selector(settings.connectionsMaxIdleMs(), metrics, time, metricGroupPrefix,
                channelBuilder, logContext);
        this.reconnectBackoff = new ExponentialBackoff(settings.reconnectBackoffMs(), 2,
                settings.reconnectBackoffMaxMs(), settings.jitter());
        this.connectionSetupTimeout = new ExponentialBackoff(settings.connectionSetupTimeoutMs(), 2,
                settings.connectionSetupTimeoutMaxMs(), settings.jitter());
    }

    /**
     * Makes the connection {@code id} to {@code address} ready, unless it is: the TCP connection, then the channel
     * (TLS handshake, SASL authentication), within {@code timeoutMs} and the connection setup timeout.
     *
     * @return whether a new connection was made (a caller that keeps per-connection state, such as the API
     *         versions the broker serves, starts it again)
     * @throws TransportException {@link Kind#BACKING_OFF} within the reconnect backoff of a failed attempt;
     *         {@link Kind#CONNECT_FAILED} refused, closed during setup, or not resolvable;
     *         {@link Kind#SETUP_TIMED_OUT}; {@link Kind#AUTHENTICATION_FAILED} (its cause is Kafka's
     *         {@link AuthenticationException}); {@link Kind#ABORTED} after {@link #abort}
     */
    public boolean connect(String id, InetSocketAddress address, long timeoutMs) throws IOException {
        throwIfAborted();
        Connection c = connections.get(id);
        if (c != null && isReady(id)) {
            return false;
        }
        if (c != null) {
            close(id); // set up by an attempt that did not finish (a wakeup, a timeout of the caller's)
        }
        long now = time.milliseconds();
        Attempts a = attempts.computeIfAbsent(id, k -> new Attempts());
        if (a.failed > 0) {
            long waitMs = a.lastStartedMs + reconnectBackoff.backoff(a.failed - 1) - now;
            if (waitMs > 0) {
                throw new TransportException(Kind.BACKING_OFF, "the last attempt failed; the next in " + waitMs
                        + " ms", null);
            }
        }
        a.lastStartedMs = now;
        if (address.isUnresolved()) {
            a.failed++;
            throw new TransportException(Kind.CONNECT_FAILED, "cannot resolve " + address.getHostString(), null);
        }
        try {
            selector.connect(id, address, settings.sendBufferBytes(), settings.receiveBufferBytes());
        } catch (IOException e) {
            a.failed++;
            throw new TransportException(Kind.CONNECT_FAILED, e.getMessage(), e);
        }
        c = new Connection(address);
        connections.put(id, c);
        long setupTimeoutMs = Math.min(connectionSetupTimeout.backoff(a.failed), timeoutMs);
        long deadlineMs = now + setupTimeoutMs;
        while (!isReady(id)) {
            long remainingMs = deadlineMs - time.milliseconds();
            if (remainingMs <= 0) {
                close(id);
                a.failed++;
                throw new TransportException(Kind.SETUP_TIMED_OUT, "connection not set up within "
                        + setupTimeoutMs + " ms", null);
            }
            poll(remainingMs);
            if (c.closed != null) {
                connections.remove(id);
                a.failed++;
                throwIfAuthenticationFailed(c.closed);
                throw new TransportException(Kind.CONNECT_FAILED, "connection refused or closed", null);
            }
        }
        attempts.remove(id);
        return true;
    }

    /** Whether the connection {@code id} is open and its channel ready for a request. */
    public boolean isReady(String id) {
        Connection c = connections.get(id);
        return c != null && c.closed == null && c.established && selector.isChannelReady(id);
    }

    /** The next correlation id, clear of the range SASL's authenticator reserves for its own frames. */
    public int nextCorrelationId() {
        if (SaslClientAuthenticator.isReserved(correlationId)) {
            correlationId = 0;
        }
        return correlationId++;
    }

    /**
     * Sends {@code frame} (header and body, no size prefix) on the ready connection {@code id} and returns the
     * answer (its header and body): the connection's first answer, as it carries one request at a time. A throttle
     * the broker asked for is waited out first, within {@code timeoutMs}; then the answer is waited for, within
     * {@code timeoutMs} again.
     *
     * @throws TransportException {@link Kind#DISCONNECTED} not ready, or closed before the answer;
     *         {@link Kind#TIMED_OUT} no answer in time (the connection is closed); {@link Kind#THROTTLED} throttled
     *         for longer than {@code timeoutMs};
     *         {@link Kind#AUTHENTICATION_FAILED} a re-authentication failed; {@link Kind#ABORTED} after {@link #abort}
     */
    public ByteBuffer exchange(String id, ByteBuffer frame, long timeoutMs) throws IOException {
        throwIfAborted();
        Connection c = connections.get(id);
        if (c == null || !isReady(id)) {
            throw new TransportException(Kind.DISCONNECTED, "not connected", null);
        }
        awaitThrottle(id, c, timeoutMs);
        c.received = null;
        selector.send(new NetworkSend(id, ByteBufferSend.sizePrefixed(frame)));
        long deadlineMs = time.milliseconds() + timeoutMs;
        while (c.received == null) {
            long remainingMs = deadlineMs - time.milliseconds();
            if (remainingMs <= 0) {
                close(id);
                throw new TransportException(Kind.TIMED_OUT, "no answer within " + timeoutMs + " ms", null);
            }
            poll(remainingMs);
            if (c.received == null && c.closed != null) {
                connections.remove(id);
                throwIfAuthenticationFailed(c.closed);
                throw new TransportException(Kind.DISCONNECTED, "the connection was closed before the answer",
                        null);
            }
        }
        ByteBuffer answer = c.received;
        c.received = null;
        return answer;
    }

    /** The broker asked for no request on {@code id} for {@code throttleMs} (its answer's throttle time). */
    public void throttle(String id, long throttleMs) {
        Connection c = connections.get(id);
        if (c != null && throttleMs > 0) {
            c.throttledUntilMs = Math.max(c.throttledUntilMs, time.milliseconds() + throttleMs);
        }
    }

    private void awaitThrottle(String id, Connection c, long timeoutMs) throws IOException {
        long waitMs = c.throttledUntilMs - time.milliseconds();
        if (waitMs <= 0) {
            return;
        }
        if (waitMs >= timeoutMs) {
            throw new TransportException(Kind.THROTTLED, "throttled by the broker for " + waitMs + " ms more",
                    null);
        }
        while ((waitMs = c.throttledUntilMs - time.milliseconds()) > 0) {
            poll(waitMs);
            if (c.closed != null) {
                connections.remove(id);
                throw new TransportException(Kind.DISCONNECTED, "the connection was closed while throttled", null);
            }
        }
    }

    /** One selector poll; what it reports is recorded on the connections (closed, connected, an answer). */
    private void poll(long timeoutMs) throws IOException {
        throwIfAborted();
        selector.poll(timeoutMs);
        throwIfAborted();
        for (String id : selector.connected()) {
            Connection c = connections.get(id);
            if (c != null) {
                c.established = true;
            }
        }
        for (NetworkReceive receive : selector.completedReceives()) {
            Connection c = connections.get(receive.source());
            if (c != null) {
                c.received = receive.payload();
            }
        }
        for (Map.Entry<String, ChannelState> e : selector.disconnected().entrySet()) {
            Connection c = connections.get(e.getKey());
            if (c != null) {
                c.closed = e.getValue();
            }
        }
        // gone (an idle connection the selector closed too), so the next call connects afresh; a call waiting on
        // one holds it and reads why from it
        connections.values().removeIf(c -> c.closed != null);
    }

    /**
     * An aborted transport reads nothing more: the connections are closed here, on the caller's thread (the selector
     * is not thread-safe), so an answer arriving later is dropped with them.
     */
    private void throwIfAborted() throws TransportException {
        if (aborted) {
            connections.keySet().forEach(selector::close);
            connections.clear();
            throw new TransportException(Kind.ABORTED, "abandoned: the transport is being closed", null);
        }
    }

    private static void throwIfAuthenticationFailed(ChannelState closed) throws TransportException {
        AuthenticationException failure = closed.exception();
        if (failure != null) {
            throw new TransportException(Kind.AUTHENTICATION_FAILED, failure.getMessage(), failure);
        }
    }

    /** Closes the connection {@code id} and forgets its failed attempts, as {@code NetworkClient.close} does. */
    public void disconnect(String id) {
        close(id);
        attempts.remove(id);
    }

    private void close(String id) {
        selector.close(id);
        connections.remove(id);
    }

    /** Ends a selector poll in progress (another thread's call goes on waiting until its own deadline). */
    public void wakeup() {
        selector.wakeup();
    }

    /**
     * Abandons the call in progress on another thread and fails every later one ({@link Kind#ABORTED}), for an owner
     * that stops: unlike {@link #wakeup}, its caller does not wait out the broker's answer (a fetch the broker holds
     * up to its max wait, a silent broker up to the request timeout). The answer, if it comes, is never read; the
     * transport is only to be closed after this.
     */
    public void abort() {
        aborted = true;
        selector.wakeup();
    }

    @Override
    public void close() {
        selector.close();
        metrics.close();
    }
}
