package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.Endpoint;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.protocol.ListenerChannels;
import io.twinlog.protocol.RequestChannel;
import io.twinlog.protocol.RequestHandlerPool;
import io.twinlog.protocol.RequestMetrics;
import io.twinlog.protocol.SocketServer;
import io.twinlog.server.dynamic.DynamicBrokerConfigs;
import io.twinlog.server.dynamic.ListenerReconfiguration;
import io.twinlog.server.dynamic.RequestHandlerThreads;
import io.twinlog.server.metrics.NetworkMetrics;
import io.twinlog.server.quota.BrokerQuotas;
import io.twinlog.share.fetch.ShareSessions;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The broker's listeners: the bounded request queue, the request handler pool that serves it, and one socket
 * server per configured listener. {@link #start} binds every listener before any of them reads a request, then
 * starts the handlers, then the network threads. The socket servers and the handlers close at different steps of
 * the broker's shutdown ({@link #closeSocketServers}, {@link #closeRequestHandlers}).
 */
final class BrokerListeners {
    private final List<SocketServer> socketServers = new CopyOnWriteArrayList<>();
    private final Map<String, Integer> boundPorts = new LinkedHashMap<>();
    // volatile: the broker's close() may run on another thread while start() runs; null until built
    private volatile RequestHandlerPool handlerPool;

    /** Binds each listener and starts serving {@code registry}; each part is closeable as soon as it exists. */
    void start(BrokerConfig config, BrokerConfig startConfig, ApiRegistry registry, ListenerChannels channels,
               ShareSessions shareSessions, DynamicBrokerConfigs dynamicConfigs, BrokerMetrics metrics,
               BrokerQuotas quotas, Time time) throws IOException {
        RequestChannel channel = new RequestChannel(config.queuedMaxRequests());
        RequestMetrics requestMetrics = new RequestMetrics(metrics);
        NetworkMetrics.register(metrics, channel);
        handlerPool = new RequestHandlerPool(config.brokerId(), startConfig.numIoThreads(), channel, registry,
                metrics);
        for (Endpoint ep : config.listeners()) {
            SocketServer server;
            try {
                server = new SocketServer(config.brokerId(), ep, startConfig.numNetworkThreads(),
                        config.socketRequestMaxBytes(), config.connectionsMaxIdleMs(),
                        new SocketServer.SocketBuffers(config.socketSendBufferBytes(),
                                config.socketReceiveBufferBytes()), channel, time,
                        registry::isCustomApi, channels, metrics, requestMetrics, quotas);
            } catch (KafkaException e) {
                // Kafka's builders wrap the cause (a keystore that cannot be read, a JAAS section missing): say it
                throw new ConfigException("listener " + ep.listenerName() + ": " + innermostMessage(e));
            }
            server.bind();
            server.addDisconnectListener(shareSessions.disconnectListener()); // ends a vanished member's session
            socketServers.add(server);
            dynamicConfigs.register(new ListenerReconfiguration(ep.listenerName(), server, channels));
            synchronized (boundPorts) {
                boundPorts.put(ep.listenerName(), server.boundPort());
            }
        }
        dynamicConfigs.register(new RequestHandlerThreads(handlerPool));
        handlerPool.start();
        socketServers.forEach(SocketServer::startProcessing);
    }

    private static String innermostMessage(Throwable e) {
        String message = e.getMessage();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null) {
                message = t.getMessage();
            }
        }
        return message;
    }

    /** The bound port of each listener, by name, in the configured order. */
    Map<String, Integer> boundPorts() {
        synchronized (boundPorts) {
            return new LinkedHashMap<>(boundPorts);
        }
    }

    /** Failed authentications on every listener since start-up. */
    long failedAuthentications() {
        return socketServers.stream().mapToLong(SocketServer::failedAuthentications).sum();
    }

    /** Stops accepting and closes every connection. */
    void closeSocketServers() {
        new ArrayList<>(socketServers).forEach(SocketServer::close);
    }

    void closeRequestHandlers() {
        QuietClose.close("request handlers", handlerPool);
    }
}
