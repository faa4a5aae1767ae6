package io.twinlog.protocol;

import io.twinlog.common.Endpoint;
import io.twinlog.common.metrics.BrokerMetrics;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.network.ListenerReconfigurable;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.network.ConnectionDisconnectListener;
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
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntFunction;
import java.util.function.Predicate;

/**
 * The broker's network front end: one acceptor thread per listener hands new connections round-robin to
 * {@code num.network.threads} {@link Processor}s, which read requests into the {@link RequestChannel} and write
 * responses back.
 *
 * <p>Bind to port 0 to get an ephemeral port; {@link #boundPort()} tells which (tests and the in-process cluster
 * rely on this).
 *
 * <p>Two dynamic broker configs apply live: {@code num.network.threads} ({@link #resizeProcessors}) and the
 * listener's keystore and truststore ({@link #reconfigure}). Those, {@link #startProcessing()} and {@link #close()}
 * are serialized on this object; the acceptor takes no lock, it reads the published processor array.
 */
public final class SocketServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SocketServer.class);

    /** The keys Kafka's SslFactory reloads, with their types, to parse values given as text. */
    private static final ConfigDef SSL_CONFIG_DEF = sslConfigDef();

    private final int brokerId;
    private final Endpoint endpoint;
    private final SocketBuffers buffers;
    private final Metrics metrics;
    private final SecurityProtocol protocol;
    /** Builds the processor of an id, with its own channel builder; the ids of a listener are never reused. */
    private final IntFunction<Processor> processorFactory;
    /** Copy-on-write: replaced whole under {@code this}, read without a lock by the acceptor. */
    private volatile Processor[] processors;
    private final List<ConnectionDisconnectListener> disconnectListeners = new CopyOnWriteArrayList<>();
    private int nextProcessorId;
    /** The listener configs of the last keystore reload, applied to the processors created after it too. */
    private Map<String, Object> reconfiguredSsl;
    private boolean started;
    private ServerSocketChannel serverChannel;
    private Selector acceptSelector;
    private Thread acceptor;
    private volatile boolean running = true;
    /** The acceptor's round-robin position; the acceptor thread's only. */
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
        this.brokerId = brokerId;
        this.endpoint = endpoint;
        this.buffers = buffers;
        this.metrics = brokerMetrics.kafkaMetrics();
        this.protocol = channels.protocol(endpoint.listenerName());
        this.processorFactory = id -> {
            ChannelBuilder builder = channels.server(endpoint.listenerName(), id);
            try {
                return new Processor(brokerId, id, endpoint, protocol, builder, maxRequestSize,
                        connectionsMaxIdleMs, channel, metrics, requestMetrics, time, customApis, throttling,
                        this::notifyDisconnected);
            } catch (RuntimeException e) {
                builder.close(); // no selector took it over
                throw e;
            }
        };
        this.processors = newProcessors(numProcessors).toArray(Processor[]::new);
    }

    /**
     * Processors with the next ids, each with the keystore of the last reload if there was one.
     *
     * @throws RuntimeException with none of them left open
     */
    private List<Processor> newProcessors(int count) {
        List<Processor> created = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                Processor p = processorFactory.apply(nextProcessorId++);
                created.add(p);
                if (reconfiguredSsl != null) {
                    p.reconfigureChannels(reconfiguredSsl);
                }
            }
            return created;
        } catch (RuntimeException e) {
            // broad: whatever failed, the processors created so far are closed before it goes on
            created.forEach(Processor::close);
            throw e;
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

    /**
     * Adds a listener told the id of every connection of this listener that closes (the id a request's context
     * carries), on the network thread that served it: the listener must only hand the news on.
     */
    public void addDisconnectListener(ConnectionDisconnectListener listener) {
        disconnectListeners.add(listener);
    }

    private void notifyDisconnected(String connectionId) {
        for (ConnectionDisconnectListener listener : disconnectListeners) {
            listener.onDisconnect(connectionId);
        }
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

    public synchronized void startProcessing() {
        started = true;
        Arrays.stream(processors).forEach(Processor::start);
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
                    handOver(ch);
                }
            } catch (IOException e) {
                if (running) {
                    log.warn("Error accepting a connection on {}: {}", endpoint, e.toString());
                }
            } catch (Throwable t) {
                // broad: the acceptor must outlive any single failure; the listener depends on it
                log.error("Unexpected error in the acceptor of {}", endpoint, t);
            }
        }
    }

    /**
     * Gives a new connection to the next processor, round-robin. A processor closed by a shrink since the array was
     * read refuses it; by then the shorter array is published, so the next try finds a live one.
     */
    private void handOver(SocketChannel ch) throws IOException {
        while (running) {
            Processor[] current = processors;
            Processor p = current[nextProcessor % current.length];
            nextProcessor = (nextProcessor + 1) % current.length;
            if (p.accept(ch)) {
                return;
            }
        }
        ch.close();
    }

    /** The number of network threads of this listener. */
    public int processorCount() {
        return processors.length;
    }

    /**
     * Sets the number of network threads of this listener, for a dynamic {@code num.network.threads}. Growing
     * creates processors with new ids (and threads, started if this server is), each with its own channel builder,
     * and publishes them, so new connections spread over all. Shrinking first unpublishes the highest ids (no new
     * connection goes to them), then closes them: their connections drop and responses still due on them are
     * dropped, as in Kafka; clients reconnect. Kafka's limits on the change (at most double, at least half) are the
     * caller's to check.
     *
     * @throws IllegalArgumentException if {@code newProcessors} is below 1
     * @throws IllegalStateException    if this server is closed
     * @throws RuntimeException         from Kafka's channel builder (e.g. a keystore that no longer loads) when
     *                                  growing; then nothing changed
     */
    public synchronized void resizeProcessors(int newProcessors) {
        if (newProcessors < 1) {
            throw new IllegalArgumentException("A listener needs at least 1 network thread, not " + newProcessors);
        }
        checkOpen();
        Processor[] current = processors;
        int oldProcessors = current.length;
        if (newProcessors == oldProcessors) {
            return;
        }
        if (newProcessors > oldProcessors) {
            List<Processor> added = newProcessors(newProcessors - oldProcessors);
            if (started) {
                added.forEach(Processor::start);
            }
            Processor[] next = Arrays.copyOf(current, newProcessors);
            for (int i = oldProcessors; i < newProcessors; i++) {
                next[i] = added.get(i - oldProcessors);
            }
            processors = next;
        } else {
            processors = Arrays.copyOf(current, newProcessors);
            for (int i = oldProcessors - 1; i >= newProcessors; i--) {
                current[i].close();
            }
        }
        log.info("Network threads of listener {} on broker {}: {} -> {}", endpoint.listenerName(), brokerId,
                oldProcessors, newProcessors);
    }

    /**
     * Checks that Kafka's SslFactory would take the listener's new keystore and truststore, as a Kafka broker does
     * before storing a dynamic config: a keystore cannot be added to or removed from a listener, its certificate's
     * DN and SANs must stay the same (unless {@code ssl.allow.dn.changes} / {@code ssl.allow.san.changes}), and on
     * the inter-broker listener the old and new stores must complete a TLS handshake with each other. Nothing
     * changes. A no-op for a listener without TLS.
     *
     * @param listenerConfigs the listener's effective configs, its {@code listener.name.<l>.} keys already applied
     *                        over the plain ones (Kafka's {@code valuesWithPrefixOverride}); parsed values or text
     * @throws ConfigException with Kafka's message, e.g. "Validation of dynamic config update of SSLFactory failed:
     *                         ..."
     */
    public synchronized void validateReconfiguration(Map<String, ?> listenerConfigs) {
        checkOpen();
        ListenerReconfigurable first = sslReconfigurable();
        if (first != null) {
            // every processor's builder holds the same stores, so one check speaks for all
            first.validateReconfiguration(parsedSslConfigs(listenerConfigs));
        }
    }

    /**
     * Reloads the listener's keystore and truststore in every network thread, after the check of
     * {@link #validateReconfiguration}: new connections get the new certificate, open ones keep theirs (Kafka's
     * behaviour). Kafka's SslFactory reloads only what changed, where a store file modified in place counts as
     * changed, so the same values again reload a replaced file. Network threads created later start with these
     * configs too. A no-op for a listener without TLS.
     *
     * @param listenerConfigs as for {@link #validateReconfiguration}
     * @throws ConfigException as {@link #validateReconfiguration}, and then nothing changed
     * @throws RuntimeException from Kafka's SslFactory if a store fails to load after the check (changed on disk
     *                          meanwhile): the threads before it have the new stores, the others the old ones
     */
    public synchronized void reconfigure(Map<String, ?> listenerConfigs) {
        checkOpen();
        ListenerReconfigurable first = sslReconfigurable();
        if (first == null) {
            return;
        }
        Map<String, Object> configs = parsedSslConfigs(listenerConfigs);
        first.validateReconfiguration(configs);
        Processor[] current = processors;
        for (Processor p : current) {
            p.reconfigureChannels(configs);
        }
        reconfiguredSsl = configs;
        log.info("Keystore and truststore of listener {} on broker {} applied to its {} network threads (keystore "
                + "{}); open connections keep their certificate", endpoint.listenerName(), brokerId, current.length,
                configs.get(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG));
    }

    /** The first processor's channel builder if this listener has TLS, else null. */
    private ListenerReconfigurable sslReconfigurable() {
        if (protocol != SecurityProtocol.SSL && protocol != SecurityProtocol.SASL_SSL) {
            return null;
        }
        return processors[0].reconfigurableChannels();
    }

    /**
     * The configs with the store keys as Kafka's SslFactory reads them: a password given as text would otherwise
     * fail its cast to {@code Password}.
     */
    static Map<String, Object> parsedSslConfigs(Map<String, ?> listenerConfigs) {
        Map<String, Object> parsed = new HashMap<>(listenerConfigs);
        for (String key : SslConfigs.RECONFIGURABLE_CONFIGS) {
            ConfigDef.ConfigKey definition = SSL_CONFIG_DEF.configKeys().get(key);
            if (definition != null && parsed.get(key) instanceof String text) {
                parsed.put(key, ConfigDef.parseType(key, text, definition.type));
            }
        }
        return parsed;
    }

    private static ConfigDef sslConfigDef() {
        ConfigDef def = new ConfigDef();
        SslConfigs.addClientSslSupport(def);
        return def;
    }

    private void checkOpen() {
        if (!running) {
            throw new IllegalStateException("Listener " + endpoint.listenerName() + " of broker " + brokerId
                    + " is closed");
        }
    }

    @Override
    public synchronized void close() {
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
        Arrays.stream(processors).forEach(Processor::close);
    }
}
