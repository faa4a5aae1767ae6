package io.twinlog.protocol.client;

import io.twinlog.clients.network.BrokerTransport;
import io.twinlog.clients.network.TransportException;
import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.BootstrapConfiguration;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.MetadataRecoveryStrategy;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.NodeApiVersions;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.network.PlaintextChannelBuilder;
import org.apache.kafka.common.network.Selectable;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.util.HashMap;
import java.util.Map;

/**
 * A blocking request/response channel from this broker to other brokers (a partition leader, the controller, a
 * mirror's source brokers), on Twinlog's one client transport, {@link BrokerTransport} (Kafka's {@code Selector},
 * shared with {@code MirrorAdmin}; Kafka's {@code NetworkClient} cannot carry the mirror APIs, decision 120). Kafka's
 * APIs only: versions are negotiated with ApiVersions on each new connection, as Kafka's {@code NetworkClient}
 * does (a broker that does not serve the newest ApiVersions is asked again at the version it names), and each
 * request goes out at the newest version both sides serve; a response that asks the client to throttle holds the
 * next request to that broker. Used by one thread at a time (a replica fetcher, the ISR-change sender); the target
 * can change between calls, and each target broker (by id) keeps its own connection.
 */
public final class InterBrokerClient implements AutoCloseable {
    /** {@code NetworkClient}'s connection setup timeout and its max, as this client had them on it. */
    private static final long CONNECTION_SETUP_TIMEOUT_MS = 10_000;
    private static final long CONNECTION_SETUP_TIMEOUT_MAX_MS = 30_000;
    /** {@code NetworkClient}'s backoff jitter. */
    private static final double BACKOFF_JITTER = 0.2;

    private final Time time;
    private final String clientId;
    private final BrokerTransport transport;
    private final int requestTimeoutMs;
    /** What each connected broker serves, by connection (broker id); negotiated on each new connection. */
    private final Map<String, NodeApiVersions> versions = new HashMap<>();

    public InterBrokerClient(String clientId, int requestTimeoutMs, int socketReceiveBufferBytes, Time time) {
        this(clientId, requestTimeoutMs, socketReceiveBufferBytes, 50, 1_000, time);
    }

    /**
     * @param reconnectBackoffMs    first wait before reconnecting to a broker that refused or dropped us
     * @param reconnectBackoffMaxMs cap of the exponential reconnect backoff
     */
    public InterBrokerClient(String clientId, int requestTimeoutMs, int socketReceiveBufferBytes,
                             long reconnectBackoffMs, long reconnectBackoffMaxMs, Time time) {
        this(clientId, plaintext(), requestTimeoutMs, socketReceiveBufferBytes, reconnectBackoffMs,
                reconnectBackoffMaxMs, time);
    }

    /**
     * @param channelBuilder how connections are made (PLAINTEXT between our brokers; TLS and/or SASL towards a
     *                       mirror's source, built from its client configs); this client closes it
     */
    public InterBrokerClient(String clientId, ChannelBuilder channelBuilder, int requestTimeoutMs,
                             int socketReceiveBufferBytes, long reconnectBackoffMs, long reconnectBackoffMaxMs,
                             Time time) {
        // its timeouts and backoffs on the monotonic clock: a wall-clock step must neither stall nor expire them
        this.time = MonotonicTime.orMock(time);
        this.clientId = clientId;
        this.requestTimeoutMs = requestTimeoutMs;
        this.transport = new BrokerTransport(clientId, channelBuilder, new BrokerTransport.Settings(60_000L,
                CONNECTION_SETUP_TIMEOUT_MS, CONNECTION_SETUP_TIMEOUT_MAX_MS, reconnectBackoffMs,
                reconnectBackoffMaxMs, Selectable.USE_DEFAULT_BUFFER_SIZE, socketReceiveBufferBytes, BACKOFF_JITTER),
                this.time, new LogContext("[" + clientId + "] "));
    }

    /**
     * Kafka's {@link NetworkClient} to other brokers as {@link InterBrokerClient} was made before it moved to {@link BrokerTransport} (no metadata of its own: callers name
     * their target nodes; versions negotiated with ApiVersions), for Kafka's share-group persister, which takes a
     * {@code KafkaClient} and multiplexes requests to several brokers on its own send thread (decision 120).
     *
     * @param maxInFlightPerConnection requests sent to one broker before its first answer
     * @param time                     the monotonic clock for timeouts and backoffs ({@link MonotonicTime#orMock})
     */
    public static NetworkClient networkClient(String clientId, ChannelBuilder channelBuilder, Metrics metrics,
                                              int maxInFlightPerConnection, int requestTimeoutMs,
                                              int socketReceiveBufferBytes, long reconnectBackoffMs,
                                              long reconnectBackoffMaxMs, Time time) {
        LogContext logContext = new LogContext("[" + clientId + "] ");
        Selector selector = new Selector(60_000L, metrics, time, clientId, channelBuilder, logContext);
        return new NetworkClient(selector, new ManualMetadataUpdater(), clientId, maxInFlightPerConnection,
                reconnectBackoffMs, reconnectBackoffMaxMs,
                Selectable.USE_DEFAULT_BUFFER_SIZE, socketReceiveBufferBytes, requestTimeoutMs, 10_000, 30_000, time,
                true, new ApiVersions(), logContext, MetadataRecoveryStrategy.NONE, BootstrapConfiguration.DISABLED,
                false);
    }

    private static ChannelBuilder plaintext() {
        ChannelBuilder channelBuilder = new PlaintextChannelBuilder(ListenerName.normalised("PLAINTEXT"));
        channelBuilder.configure(Map.of());
        return channelBuilder;
    }

    /** A response and the version it was sent and answered at (negotiated with the broker's ApiVersions). */
    public record Exchange<T extends AbstractResponse>(T body, short version) {
    }

    /**
     * Sends one request to {@code target} and waits for its response.
     *
     * @throws IOException when the broker cannot be reached or the connection drops (the caller backs off);
     *                     {@link UnsupportedApiVersionException} when it serves no version of the request the
     *                     builder can make (the connection stays up)
     */
    public <T extends AbstractResponse> T send(Node target, AbstractRequest.Builder<?> request) throws IOException {
        return this.<T>exchange(target, request).body();
    }

    /**
     * As {@link #send}, with the version the request went out at. A response whose layout depends on the version
     * (Fetch: by topic ID from v13, by name before) must be read at that version, not at the latest this client
     * knows: a broker on Kafka before 3.1 answers Fetch at v12.
     */
    public <T extends AbstractResponse> Exchange<T> exchange(Node target, AbstractRequest.Builder<?> request)
            throws IOException {
        String id = Integer.toString(target.id());
        try {
            NodeApiVersions served = awaitReady(id, target);
            short version = served.latestUsableVersion(request.apiKey(), request.oldestAllowedVersion(),
                    request.latestAllowedVersion());
            AbstractRequest built = request.build(version);
            @SuppressWarnings("unchecked")
            T body = (T) send(id, built);
            return new Exchange<>(body, version);
        } catch (UnsupportedVersionException e) {
            // nothing was sent (the broker's ApiVersions ruled it out): the connection is as good as before
            throw new UnsupportedApiVersionException("Broker " + target.id() + " serves no version of "
                    + request.apiKey() + " this broker can send: " + e.getMessage(), e);
        } catch (TransportException e) {
            disconnect(target);
            throw failure(target, e);
        } catch (IOException | RuntimeException e) { // broad: an answer that does not parse leaves the stream unusable
            disconnect(target);
            throw e;
        }
    }

    /** The connection to {@code target} ready, with the versions it serves (asked on a new connection). */
    private NodeApiVersions awaitReady(String id, Node target) throws IOException {
        boolean connected = transport.connect(id, new InetSocketAddress(target.host(), target.port()),
                requestTimeoutMs);
        NodeApiVersions served = versions.get(id);
        if (connected || served == null) {
            served = negotiate(id, target);
            versions.put(id, served);
        }
        return served;
    }

    /**
     * ApiVersions at the newest version this client knows; a broker that does not serve it answers
     * UNSUPPORTED_VERSION with the versions it does serve (Kafka 2.4+; none named: v0), and is asked again at that.
     */
    private NodeApiVersions negotiate(String id, Node target) throws IOException {
        ApiVersionsRequest.Builder builder = new ApiVersionsRequest.Builder();
        short version = builder.latestAllowedVersion();
        while (true) {
            ApiVersionsResponse response = (ApiVersionsResponse) send(id, builder.build(version));
            short error = response.data().errorCode();
            if (error == Errors.NONE.code()) {
                return new NodeApiVersions(response.data().apiKeys(), response.data().supportedFeatures());
            }
            if (version == 0 || error != Errors.UNSUPPORTED_VERSION.code()) {
                throw new IOException("Broker " + target.id() + " at " + target.host() + ":" + target.port()
                        + " refused ApiVersions v" + version + ": " + Errors.forCode(error));
            }
            ApiVersionsResponseData.ApiVersion served = response.data().apiKeys().find(ApiKeys.API_VERSIONS.id);
            version = served == null ? 0 : (short) Math.min(served.maxVersion(), version - 1);
            builder = new ApiVersionsRequest.Builder(version);
        }
    }

    /** One request, its answer parsed at its version; a throttle the answer asks for holds the next request. */
    private AbstractResponse send(String id, AbstractRequest request) throws IOException {
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), clientId,
                transport.nextCorrelationId());
        AbstractResponse response = AbstractResponse.parseResponse(
                transport.exchange(id, request.serializeWithHeader(header), requestTimeoutMs), header);
        if (response.shouldClientThrottle(request.version())) {
            transport.throttle(id, response.throttleTimeMs());
        }
        return response;
    }

    /**
     * A transport failure in this client's words, of the classes {@code NetworkClient} gave the callers: a
     * {@link SocketTimeoutException} only where the caller's request timeout ran out before the broker was ready
     * (throttled, or a connection setup bounded by it), a plain {@link IOException} otherwise (a request timeout
     * closed the connection, as a disconnection does).
     */
    private IOException failure(Node target, TransportException e) {
        String broker = "broker " + target.id() + " at " + target.host() + ":" + target.port();
        return switch (e.kind()) {
            // TLS handshake or SASL failure: as unreachable as a dead broker, with the reason the operator must fix
            case AUTHENTICATION_FAILED -> new IOException("Authentication to " + broker + " failed: "
                    + e.getMessage(), e.getCause());
            case THROTTLED -> notReady(broker, e);
            case SETUP_TIMED_OUT -> requestTimeoutMs < CONNECTION_SETUP_TIMEOUT_MS ? notReady(broker, e)
                    : new IOException("Connection to " + broker + " failed: " + e.getMessage(), e);
            case ABORTED -> new IOException("Abandoned the request to " + broker + ": this client is stopping", e);
            case TIMED_OUT, DISCONNECTED -> new IOException("Disconnected from " + broker + " before the response "
                    + "was read: " + e.getMessage(), e);
            default -> new IOException("Connection to " + broker + " failed: " + e.getMessage(), e);
        };
    }

    private SocketTimeoutException notReady(String broker, TransportException e) {
        SocketTimeoutException timeout = new SocketTimeoutException("The " + broker + " was not ready within "
                + requestTimeoutMs + " ms: " + e.getMessage());
        timeout.initCause(e);
        return timeout;
    }

    /** Closes the connection to a broker (after its leadership moved away, say). */
    public void disconnect(Node target) {
        String id = Integer.toString(target.id());
        transport.disconnect(id);
        versions.remove(id);
    }

    /** Ends a selector poll of a blocked {@link #send} from another thread (shutdown), as before. */
    public void wakeup() {
        transport.wakeup();
    }

    /**
     * From another thread, when the caller stops: its request in flight (and every later one) fails at once with
     * an {@link IOException} rather than waiting for the answer ({@link BrokerTransport#abort}); the answer, if it
     * comes, is never read. Only {@link #close} is to follow.
     */
    public void abort() {
        transport.abort();
    }

    @Override
    public void close() {
        transport.close();
    }
}
