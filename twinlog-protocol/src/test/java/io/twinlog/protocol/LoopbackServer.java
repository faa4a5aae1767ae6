package io.twinlog.protocol;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.metrics.BrokerMetrics;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Map;

/**
 * One listener of a broker on loopback as the broker assembles it (a {@link SocketServer} in front of a
 * {@link RequestHandlerPool} over one {@link RequestChannel}), serving whatever {@code registry} holds; for tests
 * that talk to it over real sockets.
 */
final class LoopbackServer implements AutoCloseable {
    static final int READ_TIMEOUT_MS = 10_000;

    final BrokerMetrics metrics;
    final RequestHandlerPool handlers;
    final SocketServer server;

    private LoopbackServer(BrokerMetrics metrics, RequestHandlerPool handlers, SocketServer server) {
        this.metrics = metrics;
        this.handlers = handlers;
        this.server = server;
    }

    /** A plaintext listener on an ephemeral port of 127.0.0.1. */
    static LoopbackServer plaintext(int brokerId, int ioThreads, int networkThreads, ApiRegistry registry)
            throws IOException {
        BrokerConfig config = new BrokerConfig(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0"));
        return start(brokerId, config, ioThreads, networkThreads, registry);
    }

    /** The first listener of {@code config}, bound and serving. */
    static LoopbackServer start(int brokerId, BrokerConfig config, int ioThreads, int networkThreads,
                                ApiRegistry registry) throws IOException {
        BrokerMetrics metrics = BrokerMetrics.unreported(brokerId, Time.SYSTEM);
        RequestChannel channel = new RequestChannel(16);
        RequestHandlerPool handlers = new RequestHandlerPool(brokerId, ioThreads, channel, registry, metrics);
        SocketServer server = new SocketServer(brokerId, config.listeners().get(0), networkThreads, 1 << 20, 600_000,
                SocketServer.SocketBuffers.OS_DEFAULT, channel, Time.SYSTEM, registry::isCustomApi,
                new ListenerChannels(config, ListenerChannels.newCredentialCache(),
                        v -> new ApiVersionsResponse(new ApiVersionsResponseData()), Time.SYSTEM),
                metrics, new RequestMetrics(metrics), ResponseThrottling.NONE);
        server.bind();
        handlers.start();
        server.startProcessing();
        return new LoopbackServer(metrics, handlers, server);
    }

    /** A plain TCP connection to the listener. */
    Socket connect() throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", server.boundPort()), 5_000);
        socket.setSoTimeout(READ_TIMEOUT_MS);
        return socket;
    }

    @Override
    public void close() throws InterruptedException {
        server.close();
        handlers.close();
        metrics.close();
    }
}
