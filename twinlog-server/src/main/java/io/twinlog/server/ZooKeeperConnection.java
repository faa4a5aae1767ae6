package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import io.twinlog.controller.zk.EmbeddedZooKeeper;
import io.twinlog.controller.zk.MetadataStore;
import io.twinlog.storage.LogDirIdentity;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The broker's ZooKeeper: an embedded server when {@code zookeeper.connect} is absent, the Curator session, the
 * metadata store over it, and the cluster this broker joins. Each part is visible to {@link #close} as soon as it
 * exists, so a start-up that fails (or is aborted) half-way closes what it opened.
 */
final class ZooKeeperConnection implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperConnection.class);

    private final BrokerConfig config;
    // volatile: the broker's close() may run on a shutdown-hook thread while start() is still running
    private volatile EmbeddedZooKeeper embeddedZooKeeper;
    private volatile CuratorFramework client;
    private volatile MetadataStore store;

    ZooKeeperConnection(BrokerConfig config) {
        this.config = config;
    }

    /**
     * Connects (starting the embedded server first when there is no {@code zookeeper.connect}), then joins the
     * cluster the log dirs name, or creates one; returns its id.
     *
     * @param abortIfClosed throws when the broker was closed meanwhile
     */
    String start(LogDirIdentity identity, Runnable abortIfClosed) throws Exception {
        String connect;
        String zooKeeperName;
        if (config.zookeeperConnect().isPresent()) {
            connect = config.zookeeperConnect().get();
            zooKeeperName = "ZooKeeper at " + connect;
        } else {
            embeddedZooKeeper = EmbeddedZooKeeper.start(config.zookeeperEmbeddedDataDir(), config.zookeeperEmbeddedPort());
            connect = embeddedZooKeeper.connectString();
            log.info("zookeeper.connect is not set: using an embedded ZooKeeper at {} (data in {})", connect,
                    config.zookeeperEmbeddedDataDir());
            zooKeeperName = "the embedded ZooKeeper at " + connect + " (zookeeper.connect is not set; data in "
                    + config.zookeeperEmbeddedDataDir() + ")";
        }
        client = CuratorFrameworkFactory.builder().connectString(connect)
                .sessionTimeoutMs(config.zookeeperSessionTimeoutMs())
                .connectionTimeoutMs(config.zookeeperConnectionTimeoutMs())
                .retryPolicy(new ExponentialBackoffRetry(100, 10, 2_000)).build();
        client.start();
        if (!client.blockUntilConnected(config.zookeeperConnectionTimeoutMs(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("Could not connect to ZooKeeper at " + connect + " within "
                    + config.zookeeperConnectionTimeoutMs() + " ms");
        }
        abortIfClosed.run();
        store = new MetadataStore(client);
        String clusterId = joinCluster(identity, zooKeeperName);
        log.info("Connected to ZooKeeper at {}; cluster ID {}", connect, clusterId);
        return clusterId;
    }

    /**
     * The cluster this broker belongs to. Log dirs that record a cluster id are checked against ZooKeeper's before
     * anything is written there: a ZooKeeper without {@code /cluster/id} (an empty ensemble or chroot) is refused
     * rather than given a new cluster only to refuse it then, as a ZooKeeper-mode Kafka broker would (it creates the
     * id, then throws InconsistentClusterIdException). Only dirs with no identity let the broker create the cluster.
     * Dirs without {@code meta.properties} get one once the id is known.
     */
    private String joinCluster(LogDirIdentity identity, String zooKeeperName) throws Exception {
        String clusterId;
        if (identity.clusterId().isPresent()) {
            identity.checkClusterId(store.clusterId(), zooKeeperName);
            clusterId = identity.clusterId().get();
            store.ensureLayout();
        } else {
            store.ensureLayout();
            clusterId = store.getOrCreateClusterId();
        }
        identity.writeMissing(clusterId, config.brokerId());
        return clusterId;
    }

    /** The Curator client; null before {@link #start} created it. */
    CuratorFramework client() {
        return client;
    }

    /** The metadata store; null before {@link #start} connected. */
    MetadataStore store() {
        return store;
    }

    Optional<String> embeddedConnectString() {
        return Optional.ofNullable(embeddedZooKeeper).map(EmbeddedZooKeeper::connectString);
    }

    /** Ends the session at once (the broker's abort: others see it vanish, as after an expired crash). */
    void closeClient() {
        QuietClose.close("ZooKeeper client", client);
    }

    /** The session, then the embedded server. */
    @Override
    public void close() {
        QuietClose.close("ZooKeeper client", client);
        QuietClose.close("embedded ZooKeeper", embeddedZooKeeper);
    }
}
