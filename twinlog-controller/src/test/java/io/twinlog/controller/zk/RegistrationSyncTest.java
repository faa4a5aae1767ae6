package io.twinlog.controller.zk;

import io.twinlog.common.Endpoint;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.zk.MetadataStore.RegistrationSync;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * {@link MetadataStore#syncRegistration} on a real ZooKeeper: a broker's node left by an earlier session (as after a
 * session expiry while ZooKeeper was away) is replaced by the current session's, in one step; another broker's is not.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistrationSyncTest {
    private static final BrokerRegistration BROKER_1 = registration(9092);

    @TempDir
    File dir;
    private EmbeddedZooKeeper zooKeeper;
    private CuratorFramework earlierSession;
    private CuratorFramework currentSession;

    @BeforeEach
    void start() throws Exception {
        zooKeeper = EmbeddedZooKeeper.start(dir, 0);
        earlierSession = client();
        currentSession = client();
    }

    @AfterEach
    void stop() {
        currentSession.close();
        earlierSession.close();
        zooKeeper.close();
    }

    @Test
    void createsTheNodeWhenThereIsNone() throws Exception {
        MetadataStore store = new MetadataStore(currentSession);
        assertEquals(RegistrationSync.CREATED, store.syncRegistration(BROKER_1));
        assertEquals(RegistrationSync.UNCHANGED, store.syncRegistration(BROKER_1));
        assertEquals(sessionOf(currentSession), owner());
    }

    @Test
    void replacesTheNodeOfAnEarlierSessionWithTheSameEndpoints() throws Exception {
        new MetadataStore(earlierSession).registerBroker(BROKER_1, 0);
        long earlierEpoch = currentSession.checkExists().forPath(ZkPaths.broker(1)).getCzxid();

        assertEquals(RegistrationSync.REPLACED_STALE, new MetadataStore(currentSession).syncRegistration(BROKER_1));

        Stat now = currentSession.checkExists().forPath(ZkPaths.broker(1));
        assertEquals(sessionOf(currentSession), now.getEphemeralOwner(), "held by the current session");
        assertNotEquals(earlierEpoch, now.getCzxid(), "a new broker epoch");
        earlierSession.close(); // the earlier session ends: the node, now the current session's, stays
        assertEquals(RegistrationSync.UNCHANGED, new MetadataStore(currentSession).syncRegistration(BROKER_1));
    }

    @Test
    void updatesTheDataOfItsOwnNode() throws Exception {
        MetadataStore store = new MetadataStore(currentSession);
        store.syncRegistration(BROKER_1);
        assertEquals(RegistrationSync.UPDATED, store.syncRegistration(BROKER_1.withShuttingDown(true)));
        byte[] data = currentSession.getData().forPath(ZkPaths.broker(1));
        assertEquals(true, BrokerRegistration.fromJson(1, 0, data, "test").shuttingDown());
    }

    @Test
    void leavesANodeWithOtherEndpointsAlone() throws Exception {
        new MetadataStore(earlierSession).registerBroker(registration(9999), 0);
        assertEquals(RegistrationSync.HELD_BY_ANOTHER, new MetadataStore(currentSession).syncRegistration(BROKER_1));
        assertEquals(sessionOf(earlierSession), owner(), "another broker with the same id keeps its node");
    }

    private long owner() throws Exception {
        return currentSession.checkExists().forPath(ZkPaths.broker(1)).getEphemeralOwner();
    }

    private static long sessionOf(CuratorFramework client) throws Exception {
        return client.getZookeeperClient().getZooKeeper().getSessionId();
    }

    private static BrokerRegistration registration(int port) {
        return new BrokerRegistration(1, List.of(Endpoint.parse("PLAINTEXT://127.0.0.1:" + port, "test")),
                Optional.empty());
    }

    private CuratorFramework client() throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.newClient(zooKeeper.connectString(), new RetryOneTime(100));
        client.start();
        client.blockUntilConnected(10, TimeUnit.SECONDS);
        return client;
    }
}
