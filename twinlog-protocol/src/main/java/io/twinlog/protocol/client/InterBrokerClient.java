package io.twinlog.protocol.client;

import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.BootstrapConfiguration;
import org.apache.kafka.clients.ClientRequest;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.MetadataRecoveryStrategy;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.NetworkClientUtils;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.DisconnectException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.network.PlaintextChannelBuilder;
import org.apache.kafka.common.network.Selectable;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.Map;

/**
 * A blocking request/response channel from this broker to one other broker (a partition leader, the controller),
 * on Kafka's {@link NetworkClient}. Used by one thread at a time (a replica fetcher, the ISR-change sender); the
 * target can change between calls. Versions are negotiated with ApiVersions like any Kafka client.
 */
public final class InterBrokerClient implements AutoCloseable {
    private final Time time;
    private final Metrics metrics = new Metrics();
    private final NetworkClient client;
    private final int requestTimeoutMs;

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
        this.requestTimeoutMs = requestTimeoutMs;
        this.client = networkClient(clientId, channelBuilder, metrics, 1, requestTimeoutMs, socketReceiveBufferBytes,
                reconnectBackoffMs, reconnectBackoffMaxMs, this.time);
    }

    /**
     * Kafka's {@link NetworkClient} to other brokers as this class makes it (no metadata of its own: callers name
     * their target nodes; versions negotiated with ApiVersions), for a caller that drives it itself, such as Kafka's
     * share-group persister, which multiplexes requests to several brokers on its own send thread.
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
        try {
            if (!NetworkClientUtils.awaitReady(client, target, time, requestTimeoutMs)) {
                throw new SocketTimeoutException("Broker " + target.id() + " at " + target.host() + ":"
                        + target.port() + " not ready within " + requestTimeoutMs + " ms");
            }
            ClientRequest clientRequest = client.newClientRequest(Integer.toString(target.id()), request,
                    time.milliseconds(), true);
            ClientResponse response = NetworkClientUtils.sendAndReceive(client, clientRequest, time);
            @SuppressWarnings("unchecked")
            T body = (T) response.responseBody();
            return new Exchange<>(body, response.requestHeader().apiVersion());
        } catch (UnsupportedVersionException e) {
            // nothing was sent (the broker's ApiVersions ruled it out): the connection is as good as before
            throw new UnsupportedApiVersionException("Broker " + target.id() + " serves no version of "
                    + request.apiKey() + " this broker can send: " + e.getMessage(), e);
        } catch (AuthenticationException e) {
            // TLS handshake or SASL failure: as unreachable as a dead broker, with the reason the operator must fix
            client.close(Integer.toString(target.id()));
            throw new IOException("Authentication to broker " + target.id() + " at " + target.host() + ":"
                    + target.port() + " failed: " + e.getMessage(), e);
        } catch (DisconnectException e) {
            client.close(Integer.toString(target.id()));
            throw new IOException("Disconnected from broker " + target.id() + ": " + e.getMessage(), e);
        } catch (IOException e) {
            client.close(Integer.toString(target.id()));
            throw e;
        }
    }

    /** Closes the connection to a broker (after its leadership moved away, say). */
    public void disconnect(Node target) {
        client.close(Integer.toString(target.id()));
    }

    /** Interrupts a blocked {@link #send} from another thread (shutdown). */
    public void wakeup() {
        client.wakeup();
    }

    @Override
    public void close() {
        client.close();
        metrics.close();
    }

}
