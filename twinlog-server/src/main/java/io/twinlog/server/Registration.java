package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.Endpoint;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.zk.MetadataStore;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.server.metadata.LostReplicaTracker;
import io.twinlog.server.metadata.LostReplicas;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * This broker's registration over its lifetime: the failed log dirs, offline and lost replicas published before it
 * registers (the first registration carries them), the {@link BrokerRegistrar} once the listeners are bound (the
 * last step of start-up, so clients only learn of a broker that can serve), and the controlled shutdown announced
 * through it (the first step of shutdown). Closing it is the first close of the shutdown: a registration written
 * after that would announce a broker that is going away.
 */
final class Registration implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Registration.class);
    /** How long one attempt to publish offline log dirs waits for ZooKeeper before the handler retries. */
    private static final long PUBLISH_TIMEOUT_MS = 30_000;

    private final BrokerConfig config;
    private final Time time;
    /** Offline log dirs and replicas published before the registrar exists; the first registration carries them. */
    private final Object offlineLock = new Object();
    private List<String> offlineLogDirs = List.of(); // guarded by offlineLock
    private Set<TopicIdPartition> offlineReplicas = Set.of(); // guarded by offlineLock
    /** This broker's registration in ZooKeeper, kept on every session; null until the listeners are bound. */
    private volatile BrokerRegistrar registrar;

    Registration(BrokerConfig config, Time time) {
        this.config = config;
        this.time = time;
    }

    /**
     * Registers this broker with the endpoints it is bound to, the offline dirs and replicas published so far and
     * the replicas it lost with a disk (blocking: start-up).
     */
    void register(CuratorFramework zk, MetadataStore store, LostReplicaTracker lostTracker,
                  Map<String, Integer> boundPorts, BrokerMetrics metrics) throws Exception {
        BrokerRegistrar created;
        synchronized (offlineLock) {
            created = new BrokerRegistrar(config.brokerId(), store, new BrokerRegistration(config.brokerId(),
                    advertisedEndpoints(boundPorts), config.get("broker.rack"))
                    .withOffline(offlineLogDirs, offlineReplicas).withLost(lostTracker.current().replicas()));
            registrar = created;
        }
        created.register(zk, config.zookeeperSessionTimeoutMs() * 2L);
        metrics.backgroundTasks().register(created.liveness());
    }

    /** The endpoints this broker registered. */
    List<Endpoint> registeredEndpoints() {
        return registrar.wanted().endpoints();
    }

    /**
     * The advertised listeners as clients reach them: a port of 0 is the bound port, an empty or wildcard host is
     * loopback.
     */
    List<Endpoint> advertisedEndpoints(Map<String, Integer> boundPorts) {
        List<Endpoint> out = new ArrayList<>();
        for (Endpoint ep : config.advertisedListeners()) {
            int port = ep.port() == 0 ? boundPorts.getOrDefault(ep.listenerName(), 0) : ep.port();
            String host = ep.host().isEmpty() || ep.host().equals("0.0.0.0") ? "127.0.0.1" : ep.host();
            out.add(new Endpoint(ep.listenerName(), host, port));
        }
        return out;
    }

    /**
     * The lost replicas left, in the registration (on the metadata thread: the ZooKeeper write is not waited for,
     * its failure logged; the registrar writes the registration it wants again on every new session).
     */
    void publishLost(LostReplicas lost) {
        BrokerRegistrar current;
        synchronized (offlineLock) { // against the registrar's creation, which reads the tracker's current set
            current = registrar;
        }
        if (current != null) {
            current.update(r -> r.withLost(lost.replicas())).whenComplete((ok, e) -> {
                if (e != null) {
                    log.error("Could not update the lost replicas in broker {}'s registration", config.brokerId(), e);
                }
            });
        }
    }

    /**
     * Publishes this broker's failed log dirs and offline replicas in its registration, so the controller moves
     * leadership and ISR membership away from them (on the log dir failure handler thread). Before the broker has
     * registered they are only remembered: the registration is created with them.
     */
    void publishOffline(List<String> logDirs, Set<TopicIdPartition> replicas) throws Exception {
        BrokerRegistrar current;
        synchronized (offlineLock) {
            offlineLogDirs = List.copyOf(logDirs);
            offlineReplicas = Set.copyOf(replicas);
            current = registrar;
        }
        if (current != null) {
            // waits for ZooKeeper on the log dir failure thread, holding no lock; a timeout is retried by the caller
            current.update(r -> r.withOffline(List.copyOf(logDirs), Set.copyOf(replicas)))
                    .get(PUBLISH_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Controlled shutdown: announce it in the registration and wait (bounded) until the controller has moved every
     * leadership that another in-sync replica can take, so producers and consumers fail over before the broker
     * stops instead of after a session timeout.
     *
     * @param store   null when the broker never connected to ZooKeeper
     * @param watcher null when the broker never read the metadata
     */
    void controlledShutdown(MetadataStore store, MetadataWatcher watcher) {
        if (!config.controlledShutdownEnable() || registrar == null || store == null || watcher == null) {
            return;
        }
        long start = time.milliseconds();
        long timeoutMs = config.controlledShutdownTimeoutMs();
        log.info("Controlled shutdown of broker {}: asking the controller to move its leaderships (up to {} ms)",
                config.brokerId(), timeoutMs);
        try {
            CompletableFuture<Void> announced = registrar.update(r -> r.withShuttingDown(true));
            // bounded: with ZooKeeper unreachable, Curator would retry the write for minutes
            announced.get(timeoutMs, TimeUnit.MILLISECONDS);
            watcher.awaitApplied("leaderships moved off broker " + config.brokerId(), image ->
                    image.topics().values().stream().flatMap(t -> t.partitions().values().stream())
                            .noneMatch(p -> p.leader() == config.brokerId() && p.isr().stream()
                                    .anyMatch(r -> r != config.brokerId() && image.brokers().containsKey(r))),
                    Math.max(0, timeoutMs - (time.milliseconds() - start)));
            log.info("Controlled shutdown of broker {}: leaderships moved in {} ms", config.brokerId(),
                    time.milliseconds() - start);
        } catch (TimeoutException e) {
            log.warn("Controlled shutdown of broker {}: ZooKeeper did not record it within {} ms (unreachable?); "
                    + "stopping anyway: its partitions move once its ZooKeeper session expires", config.brokerId(),
                    timeoutMs);
        } catch (Exception e) {
            // broad: whatever stopped the announcement or the wait, the broker stops anyway; the shutdown that
            // follows must run in full, and the cause is logged with its trace
            log.warn("Controlled shutdown of broker {} incomplete after {} ms; stopping anyway", config.brokerId(),
                    time.milliseconds() - start, e);
        }
    }

    @Override
    public void close() {
        QuietClose.close("broker registration", registrar);
    }
}
