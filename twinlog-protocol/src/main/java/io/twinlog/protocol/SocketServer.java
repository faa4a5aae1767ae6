package io.twinlog.protocol;

import io.twinlog.common.Endpoint;
import io.twinlog.common.metrics.BrokerMetrics;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The broker's network front end: one acceptor thread per listener hands new connections round-robin to
 * {@code num.network.threads} {@link Processor}s, which read requests into the {@link RequestChannel} and write
 * responses back.
 *
 * <p>Bind to port 0 to get an ephemeral port; {@link #boundPort()} tells which (tests and the in-process cluster
 * rely on this).
 */
public final class SocketServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SocketServer.class);

    private final Endpoint endpoint;
    private final SocketBuffers buffers;
    private final List<Processor> processors = new ArrayList<>();
    private final Metrics metrics;
    private ServerSocketChannel serverChannel;
    private Selector acceptSelector;
    private Thread acceptor;
    private volatile boolean running = true;
    private int nextProcessor;

    /**
     * {@code socket.send.buffer.bytes} and {@code socket.receive.buffer.bytes}, Kafka's defaults 100 KiB each; -1
     * leaves the OS default (Linux then grows a send buffer to megabytes).
     */
    public record SocketBuffers(int sendBytes, int receiveBytes) {
        public static final SocketBuffers OS_DEFAULT = new SocketBuffers(-1, -1);
    }

    /**
     * @param buffers    the accepted connections' send buffer and the listening socket's receive buffer (which
     *                   accepted connections inherit)
     * @param customApis which API keys are Twinlog's own (their headers are parsed by Twinlog)
     * @param channels   the listener's security: each network thread gets its own Kafka channel builder (a bad
     *                   keystore or JAAS section fails here)
     * @param throttling the client quotas, asked before each response is written
     */
    public SocketServer(int brokerId, Endpoint endpoint, int numProcessors, int maxRequestSize,
                        long connectionsMaxIdleMs, SocketBuffers buffers, RequestChannel channel, Time time,
                        Predicate<Short> customApis, ListenerChannels channels, BrokerMetrics brokerMetrics,
                        RequestMetrics requestMetrics, ResponseThrottling throttling) {
        this.endpoint = endpoint;
        this.buffers = buffers;
        this.metrics = brokerMetrics.kafkaMetrics();
        for (int i = 0; i < numProcessors; i++) {
            processors.add(new Processor(brokerId, i, endpoint, channels.protocol(endpoint.listenerName()),
                    channels.server(endpoint.listenerName(), i), maxRequestSize, connectionsMaxIdleMs, channel,
                    metrics, requestMetrics, time, customApis, throttling));
        }
    }

    /**
     * Connections of this listener closed because the client failed to authenticate (Kafka's selector metric
     * {@code failed-authentication-total}, summed over the network threads), since the broker started.
     */
    public long failedAuthentications() {
        return Math.round(metrics.metrics().entrySet().stream()
                .filter(e -> e.getKey().name().equals("failed-authentication-total")
                        && endpoint.listenerName().equals(e.getKey().tags().get("listener")))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).sum());
    }

    /** Binds the listener; requests are not read until {@link #startProcessing()}. */
    public void bind() throws IOException {
        serverChannel = ServerSocketChannel.open();
        serverChannel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        if (buffers.receiveBytes() != -1) {
            // set before bind: a receive buffer above 64 KiB needs TCP window scaling, agreed in the handshake
            serverChannel.setOption(StandardSocketOptions.SO_RCVBUF, buffers.receiveBytes());
        }
        String host = endpoint.host().isEmpty() ? "0.0.0.0" : endpoint.host();
        serverChannel.bind(new InetSocketAddress(host, endpoint.port()), 512);
        serverChannel.configureBlocking(false);
        acceptSelector = Selector.open();
        serverChannel.register(acceptSelector, SelectionKey.OP_ACCEPT);
        log.info("Listening on {} (bound port {})", endpoint, boundPort());
    }

    public int boundPort() {
        return serverChannel.socket().getLocalPort();
    }

    public void startProcessing() {
        processors.forEach(Processor::start);
        acceptor = new Thread(this::acceptLoop, "twinlog-acceptor-" + endpoint.listenerName() + "-" + boundPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private void acceptLoop() {
        while (running) {
            try {
                if (acceptSelector.select(500) == 0) {
                    continue;
                }
                acceptSelector.selectedKeys().clear();
                SocketChannel ch;
                while ((ch = serverChannel.accept()) != null) {
                    ch.configureBlocking(false);
                    ch.socket().setTcpNoDelay(true);
                    ch.socket().setKeepAlive(true);
                    if (buffers.sendBytes() != -1) {
                        ch.socket().setSendBufferSize(buffers.sendBytes());
                    }
                    Processor p = processors.get(nextProcessor);
                    nextProcessor = (nextProcessor + 1) % processors.size();
                    p.accept(ch);
                }
            } catch (IOException e) {
                if (running) {
                    log.warn("Error accepting a connection on {}: {}", endpoint, e.toString());
                }
            } catch (Throwable t) {
                log.error("Unexpected error in the acceptor of {}", endpoint, t);
            }
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            if (acceptSelector != null) {
                acceptSelector.wakeup();
            }
            if (acceptor != null) {
                acceptor.join(5_000);
            }
            if (serverChannel != null) {
                serverChannel.close();
            }
            if (acceptSelector != null) {
                acceptSelector.close();
            }
        } catch (IOException | InterruptedException e) {
            log.warn("Error closing listener {}: {}", endpoint, e.toString());
        }
        // each processor's selector removes its own metrics; the registry is the broker's, closed with the broker
        processors.forEach(Processor::close);
    }
}
