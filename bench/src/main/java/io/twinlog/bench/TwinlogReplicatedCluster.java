package io.twinlog.bench;

import io.twinlog.common.BrokerConfig;
import io.twinlog.controller.zk.EmbeddedZooKeeper;
import io.twinlog.server.BrokerServer;
import io.twinlog.testkit.FaultProxy;
import org.apache.kafka.common.utils.Time;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * Three Twinlog brokers (IDs 0, 1, 2) and one embedded ZooKeeper in this JVM, as in twinlog-testkit's
 * {@code TestCluster}. Broker settings are Twinlog's defaults apart from loopback listeners and an explicit
 * {@code zookeeper.session.timeout.ms}, which decides how long a crashed broker stays registered.
 *
 * <p>A cluster built for {@link FailureMode#CRASH} connects every broker to ZooKeeper through a
 * {@link FaultProxy}: a crash cuts the broker's proxy first and then calls {@code abort()}, so the broker's
 * ZooKeeper session is not closed by the dying broker but expires after the session timeout, as after
 * {@code kill -9} or a power loss. Without the cut, {@code abort()} closes the session itself (see
 * {@link FailureMode#ABORT}).
 */
final class TwinlogReplicatedCluster implements ReplicatedCluster {
    static final int BROKERS = 3;
    static final List<FailureMode> FAILURE_MODES = List.of(FailureMode.CRASH, FailureMode.ABORT,
            FailureMode.CONTROLLED);

    private final Path baseDirectory;
    private final int sessionTimeoutMs;
    private final FailureMode plannedFailure;
    private final Properties overrides;
    private EmbeddedZooKeeper zooKeeper;
    private final Map<Integer, FaultProxy> zooKeeperProxies = new LinkedHashMap<>();
    private final Map<Integer, BrokerServer> brokers = new LinkedHashMap<>();

    /** {@code plannedFailure}: the way {@link #stop} will be called, or null if it will not be. */
    TwinlogReplicatedCluster(Path baseDirectory, int sessionTimeoutMs, FailureMode plannedFailure) {
        this(baseDirectory, sessionTimeoutMs, plannedFailure, new Properties());
    }

    /** {@code overrides}: broker settings applied to every broker after the defaults above. */
    TwinlogReplicatedCluster(Path baseDirectory, int sessionTimeoutMs, FailureMode plannedFailure,
                             Properties overrides) {
        this.baseDirectory = baseDirectory;
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.plannedFailure = plannedFailure;
        this.overrides = overrides;
    }

    @Override
    public String name() {
        return "twinlog";
    }

    @Override
    public void start() throws Exception {
        zooKeeper = EmbeddedZooKeeper.start(baseDirectory.resolve("zookeeper").toFile(), 0);
        for (int id = 0; id < BROKERS; id++) {
            String connect = zooKeeper.connectString();
            if (plannedFailure == FailureMode.CRASH) {
                FaultProxy proxy = new FaultProxy("zk-of-" + id, "127.0.0.1", zooKeeper.port());
                zooKeeperProxies.put(id, proxy);
                connect = proxy.address();
            }
            Properties p = new Properties();
            p.setProperty(BrokerConfig.BROKER_ID, Integer.toString(id));
            p.setProperty(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0");
            p.setProperty(BrokerConfig.LOG_DIRS, baseDirectory.resolve("broker-" + id).toString());
            p.setProperty(BrokerConfig.ZOOKEEPER_CONNECT, connect);
            p.setProperty(BrokerConfig.ZOOKEEPER_SESSION_TIMEOUT_MS, Integer.toString(sessionTimeoutMs));
            p.setProperty(BrokerConfig.NUM_PARTITIONS, "1");
            p.setProperty(BenchTopics.RETENTION_CHECK_INTERVAL_CONFIG, BenchTopics.RETENTION_CHECK_INTERVAL_MS);
            p.putAll(overrides);
            BrokerServer broker = new BrokerServer(new BrokerConfig(p), Time.SYSTEM);
            brokers.put(id, broker);
            broker.start();
        }
    }

    @Override
    public String bootstrapServers() {
        return brokers.values().stream().map(BrokerServer::bootstrapServers).collect(Collectors.joining(","));
    }

    /** The running brokers, for in-process readings (metadata image, rebuild counters). */
    List<BrokerServer> brokers() {
        return List.copyOf(brokers.values());
    }

    /** The embedded ZooKeeper's client port (its four-letter-word commands are enabled). */
    int zooKeeperPort() {
        return zooKeeper.port();
    }

    @Override
    public List<Integer> brokerIds() {
        List<Integer> ids = new ArrayList<>();
        for (int id = 0; id < BROKERS; id++) {
            ids.add(id);
        }
        return ids;
    }

    @Override
    public Optional<Integer> controllerBrokerId() {
        for (BrokerServer b : brokers.values()) {
            int id = b.metadata().image().controllerId();
            if (id >= 0) {
                return Optional.of(id);
            }
        }
        return Optional.empty();
    }

    @Override
    public String describe(FailureMode mode) {
        return switch (mode) {
            case CRASH -> "broker's ZooKeeper link cut, then `abort()`: session expires after "
                    + "zookeeper.session.timeout.ms=" + sessionTimeoutMs;
            case ABORT -> "`abort()` as is: it closes the ZooKeeper session, the broker vanishes at once";
            case CONTROLLED -> "`close()`: controlled shutdown";
        };
    }

    @Override
    public void stop(int brokerId, FailureMode mode) {
        if (mode != plannedFailure) {
            throw new IllegalStateException("This cluster was built for " + plannedFailure + ", not " + mode);
        }
        BrokerServer broker = brokers.remove(brokerId);
        if (broker == null) {
            throw new IllegalArgumentException("Broker " + brokerId + " is not running");
        }
        switch (mode) {
            case CRASH -> {
                zooKeeperProxies.get(brokerId).cut();
                broker.abort();
            }
            case ABORT -> broker.abort();
            case CONTROLLED -> broker.close();
        }
    }

    @Override
    public void close() {
        stopKeepingData();
        TempDirectories.deleteRecursively(baseDirectory);
    }

    /**
     * Stops the brokers and ZooKeeper and leaves their data on disk ({@link #close} deletes it; idempotent): a
     * measurement right after a cluster goes down must not share the disk with the deletion of its thousands of files.
     */
    public void stopKeepingData() {
        // Reverse order, as LocalClusterMain: controlled shutdowns move leadership to brokers still running.
        List<Integer> ids = new ArrayList<>(brokers.keySet());
        for (int i = ids.size() - 1; i >= 0; i--) {
            brokers.remove(ids.get(i)).close();
        }
        zooKeeperProxies.values().forEach(FaultProxy::close);
        zooKeeperProxies.clear();
        if (zooKeeper != null) {
            zooKeeper.close();
            zooKeeper = null;
        }
    }
}
