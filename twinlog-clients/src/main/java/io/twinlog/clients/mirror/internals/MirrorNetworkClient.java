package io.twinlog.clients.mirror.internals;

import io.twinlog.clients.mirror.MirrorAdmin.DisconnectedException;
import io.twinlog.clients.mirror.MirrorAdmin.UnreachableException;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorMessageReader;
import io.twinlog.clients.network.BrokerTransport;
import io.twinlog.clients.network.TransportException;
import org.apache.kafka.clients.ClientDnsLookup;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.common.utils.internals.LogContext;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.IntFunction;

/**
 * One request at a time to any broker of a cluster, on Twinlog's {@link BrokerTransport} (Kafka's {@code Selector})
 * whose channels come from {@link ClientUtils#createChannelBuilder}, so PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL are
 * configured exactly as for Kafka's own clients (security.protocol, ssl.*, sasl.*), and bootstrap addresses parsed
 * and resolved by {@link ClientUtils#parseAndValidateAddresses} (client.dns.lookup).
 *
 * <p>Broker choice: any broker answers the mirror APIs, so a call uses the open connection if there is one and
 * otherwise the bootstrap servers in turn, starting one further along at each new round so that a dead broker is
 * not always tried first. A broker that refuses the connection, does not set it up within
 * socket.connection.setup.timeout.ms, drops it, or does not answer within request.timeout.ms is skipped for the
 * next one; each is tried at most once per call, and the whole call ends by default.api.timeout.ms. A failed TLS
 * handshake or SASL authentication ends the call at once: the other brokers would refuse the same credentials.
 *
 * <p>Threading: not thread-safe; {@link MirrorAdmin} serializes calls.
 */
public final class MirrorNetworkClient implements AutoCloseable {
    private static final String DEFAULT_CLIENT_ID = "twinlog-mirror-admin";
    private static final int MAX_PORT = 65_535;

    private final Time time;
    private final List<String> bootstrapServers;
    private final ClientDnsLookup dnsLookup;
    private final String clientId;
    private final int requestTimeoutMs;
    private final int apiTimeoutMs;
    private final BrokerTransport transport;
    private int nextRound;
    private int nextConnectionId;
    /** The open (or opening) connection's Selector id and broker address, or null. */
    private String connectionId;
    private InetSocketAddress connectedTo;

    /**
     * @throws IllegalArgumentException when bootstrap.servers is missing or malformed, or another config is invalid
     */
    public MirrorNetworkClient(AdminClientConfig config, Time time) {
        this.time = time;
        this.bootstrapServers = config.getList(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG);
        this.dnsLookup = ClientDnsLookup.forConfig(config.getString(AdminClientConfig.CLIENT_DNS_LOOKUP_CONFIG));
        String configuredId = config.getString(AdminClientConfig.CLIENT_ID_CONFIG);
        this.clientId = configuredId == null || configuredId.isEmpty() ? DEFAULT_CLIENT_ID : configuredId;
        this.requestTimeoutMs = config.getInt(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG);
        this.apiTimeoutMs = config.getInt(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG);
        if (bootstrapServers.isEmpty()) {
            throw new IllegalArgumentException("No bootstrap servers given");
        }
        // the format is checked now (a typo is the caller's error); names are resolved at every round, as a host
        // that does not resolve yet is as unreachable as one that is down
        bootstrapServers.forEach(MirrorNetworkClient::checkFormat);
        LogContext logContext = new LogContext("[MirrorAdmin clientId=" + clientId + "] ");
        ChannelBuilder channelBuilder = ClientUtils.createChannelBuilder(config, time, logContext);
        // each attempt is a new connection name, so no reconnect backoff applies: a call tries each broker once
        long setupTimeoutMs = config.getLong(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG);
        this.transport = new BrokerTransport("twinlog-mirror-admin", channelBuilder, new BrokerTransport.Settings(
                config.getLong(AdminClientConfig.CONNECTIONS_MAX_IDLE_MS_CONFIG), setupTimeoutMs, setupTimeoutMs, 0, 0,
                config.getInt(AdminClientConfig.SEND_BUFFER_CONFIG),
                config.getInt(AdminClientConfig.RECEIVE_BUFFER_CONFIG), 0), time, logContext);
    }

    /**
     * Sends {@code request} (a generated mirror API request) at its API's latest version to a broker and returns
     * the response {@code responseReader} reads.
     *
     * @throws UnreachableException no broker accepted a connection (nor could any bootstrap server be resolved)
     * @throws IOException          a broker accepted the connection but none answered (closed it, timed out, or
     *                              failed authentication), or the answer was not a mirror API response
     */
    public <R extends ApiMessage> R send(ApiMessage request, MirrorMessageReader<R> responseReader)
            throws IOException {
        return send(request, MirrorApi.of(request).latestVersion(), responseReader);
    }

    /** {@link #send(ApiMessage, MirrorMessageReader)} at {@code version} of the request's API. */
    public <R extends ApiMessage> R send(ApiMessage request, short version, MirrorMessageReader<R> responseReader)
            throws IOException {
        MirrorApi api = MirrorApi.of(request);
        return call(api.name, true,
                correlation -> MirrorFrames.request(version, correlation, clientId, request),
                (correlation, payload) -> MirrorFrames.response(api, version, correlation, payload, responseReader));
    }

    /**
     * Sends a Kafka API request at the version it was built for (Twinlog's brokers serve the ACL APIs at their
     * latest versions) and returns its response, with the same connection handling and errors as
     * {@link #send(ApiMessage, MirrorMessageReader)}.
     */
    public AbstractResponse send(AbstractRequest request) throws IOException {
        ApiKeys api = request.apiKey();
        short version = request.version();
        return call(api.name, false,
                correlation -> request.serializeWithHeader(new RequestHeader(api, version, clientId, correlation)),
                (correlation, payload) -> MirrorFrames.kafkaResponse(api, version, correlation, payload));
    }

    /** Reads the answer to the request sent with a correlation id. */
    @FunctionalInterface
    private interface ResponseReader<T> {
        T read(int correlationId, ByteBuffer payload) throws MirrorFrames.MalformedResponseException;
    }

    /** {@code mirrorApi}: a Twinlog API, which a broker that does not know it answers by closing the connection. */
    private <T> T call(String apiName, boolean mirrorApi, IntFunction<ByteBuffer> frame, ResponseReader<T> read)
            throws IOException {
        long deadlineMs = time.milliseconds() + apiTimeoutMs;
        Failures failures = new Failures();
        if (connectionId != null) {
            // a connection from an earlier call: the broker may have closed it while idle, so a failure here still
            // leaves every bootstrap server (this one included) to try afresh
            try {
                return exchange(apiName, frame, read, deadlineMs);
            } catch (RequestFailedException e) {
                failures.requestFailed(e);
            }
        }
        for (InetSocketAddress address : roundOrder(failures)) {
            if (time.milliseconds() >= deadlineMs) {
                failures.timedOut(apiTimeoutMs);
                break;
            }
            try {
                connect(address, deadlineMs);
            } catch (ConnectFailedException e) {
                failures.connectFailed(e);
                continue;
            }
            try {
                return exchange(apiName, frame, read, deadlineMs);
            } catch (RequestFailedException e) {
                failures.requestFailed(e);
            }
        }
        throw failures.toException(apiName, mirrorApi, bootstrapServers);
    }

    /** The bootstrap addresses, resolved now, starting one further along than the previous round. */
    private List<InetSocketAddress> roundOrder(Failures failures) {
        List<InetSocketAddress> order;
        try {
            order = new ArrayList<>(ClientUtils.parseAndValidateAddresses(bootstrapServers, dnsLookup));
        } catch (ConfigException e) { // no name resolves (the format was checked at construction)
            failures.unresolved(e);
            return List.of();
        }
        Collections.rotate(order, -(nextRound++ % order.size()));
        return order;
    }

    /** HOST:PORT as Kafka's clients read it ({@link Utils#getHost}, {@link Utils#getPort}), with their messages. */
    private static void checkFormat(String url) {
        if (url == null || url.isEmpty()) {
            return; // Kafka's clients skip empty entries too
        }
        String host = Utils.getHost(url);
        Integer port = Utils.getPort(url);
        if (host == null || port == null) {
            throw new IllegalArgumentException("Invalid url in " + AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG + ": "
                    + url);
        }
        if (port < 1 || port > MAX_PORT) {
            throw new IllegalArgumentException("Invalid port in " + AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG + ": "
                    + url);
        }
    }

    private void connect(InetSocketAddress address, long deadlineMs) throws IOException {
        closeConnection();
        String id = "mirror-admin-" + nextConnectionId++;
        long setupTimeoutMs = Math.max(0, deadlineMs - time.milliseconds());
        try {
            transport.connect(id, address, setupTimeoutMs);
        } catch (TransportException e) {
            transport.disconnect(id);
            switch (e.kind()) {
                case AUTHENTICATION_FAILED -> throw new IOException("Authentication to " + address + " failed: "
                        + e.getMessage(), e.getCause());
                case SETUP_TIMED_OUT -> {
                    String message = address + ": " + e.getMessage();
                    throw new ConnectFailedException(message, new SocketTimeoutException(message));
                }
                default -> {
                    String message = address + ": " + e.getMessage();
                    throw new ConnectFailedException(message, new DisconnectedException(message));
                }
            }
        }
        connectionId = id;
        connectedTo = address;
    }

    private <T> T exchange(String apiName, IntFunction<ByteBuffer> frame, ResponseReader<T> read, long deadlineMs)
            throws IOException, RequestFailedException {
        String id = connectionId;
        InetSocketAddress address = connectedTo;
        int correlation = transport.nextCorrelationId();
        long timeoutMs = Math.max(0, Math.min(requestTimeoutMs, deadlineMs - time.milliseconds()));
        ByteBuffer answer;
        try {
            answer = transport.exchange(id, frame.apply(correlation), timeoutMs);
        } catch (TransportException e) {
            closeConnection();
            switch (e.kind()) {
                case AUTHENTICATION_FAILED -> throw new IOException("Authentication to " + address + " failed: "
                        + e.getMessage(), e.getCause());
                case TIMED_OUT -> throw new RequestFailedException(new SocketTimeoutException(address
                        + " did not answer " + apiName + " within " + timeoutMs + " ms"));
                default -> throw new RequestFailedException(new DisconnectedException(address
                        + " closed the connection"));
            }
        }
        try {
            return read.read(correlation, answer);
        } catch (MirrorFrames.MalformedResponseException e) {
            closeConnection(); // the stream is out of step with us; nothing more can be read from it
            throw e;
        }
    }

    private void closeConnection() {
        if (connectionId != null) {
            transport.disconnect(connectionId);
        }
        connectionId = null;
        connectedTo = null;
    }

    @Override
    public void close() {
        transport.close();
    }

    /** What went wrong on the brokers tried in one call, for the one error the caller gets. */
    private static final class Failures {
        private boolean anyConnected;
        private IOException last;

        void connectFailed(ConnectFailedException e) {
            if (last == null || !anyConnected) {
                last = e;
            }
        }

        void requestFailed(RequestFailedException e) {
            anyConnected = true;
            last = e.cause;
        }

        void unresolved(ConfigException e) {
            last = new IOException(e.getMessage(), e);
        }

        void timedOut(int apiTimeoutMs) {
            if (last == null) {
                last = new SocketTimeoutException("no broker answered within default.api.timeout.ms = "
                        + apiTimeoutMs);
            }
        }

        IOException toException(String apiName, boolean mirrorApi, List<String> bootstrapServers) {
            String reason = last == null ? "no address" : last.getMessage();
            if (!anyConnected) {
                return new UnreachableException("Could not connect to any of " + bootstrapServers + ": " + reason,
                        last);
            }
            return new IOException(apiName + " failed: the broker closed the connection or did not answer ("
                    + reason + ")" + (mirrorApi ? "; is it a Twinlog broker of this version?" : ""), last);
        }
    }

    /** A broker did not accept or set up a connection: try the next one. */
    private static final class ConnectFailedException extends IOException {
        ConnectFailedException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** A broker accepted the connection but the request got no answer: try the next one. */
    private static final class RequestFailedException extends Exception {
        private final IOException cause;

        RequestFailedException(IOException cause) {
            super(cause.getMessage(), cause, false, false);
            this.cause = cause;
        }
    }
}
