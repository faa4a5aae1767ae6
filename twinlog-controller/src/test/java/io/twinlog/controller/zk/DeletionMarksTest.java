package io.twinlog.controller.zk;

import io.twinlog.common.Endpoint;
import io.twinlog.controller.metadata.BrokerRegistration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.BrokerIdNotRegisteredException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static io.twinlog.controller.zk.TopicDeletions.COMPLETED_MARK_RETENTION_MS;
import static io.twinlog.controller.zk.TopicDeletions.REGISTERED_BEFORE_EXPIRY_MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The marks of {@code /admin/delete_topics} ({@link TopicDeletions}) on a real ZooKeeper (decisions 72, 74): what a deletion writes, how long
 * a completed mark stays (until every broker that held a replica has been back long enough to have read it), and
 * which creation takes a mark with it, and what unregistering a broker gone for good ({@link BrokerUnregistration})
 * takes from the marks.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DeletionMarksTest {
    private static final Uuid DELETED_ID = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAQ");

    @TempDir
    File dir;
    private EmbeddedZooKeeper zooKeeper;
    private CuratorFramework zk;
    private MetadataStore store;
    private TopicDeletions deletions;

    @BeforeEach
    void start() throws Exception {
        zooKeeper = EmbeddedZooKeeper.start(dir, 0);
        zk = zooKeeper.connectedClient();
        store = new MetadataStore(zk);
        deletions = new TopicDeletions(zk);
        store.ensureLayout();
    }

    @AfterEach
    void stop() {
        zk.close();
        zooKeeper.close();
    }

    @Test
    void aCompletedMarkNamesTheTopicIdAndTheBrokersThatHeldItsReplicas() throws Exception {
        createAndDelete();
        Map<String, Object> mark = mark();
        assertEquals(DELETED_ID.toString(), mark.get("topicId"));
        assertEquals(List.of(1, 2, 3), mark.get("brokers"));
        assertEquals(true, mark.get("completed"));
        assertNull(zk.checkExists().forPath(ZkPaths.topic("orders")), "the topic's nodes are gone");
    }

    @Test
    void theMarkStaysWhileABrokerThatHeldAReplicaIsAway() throws Exception {
        register(1);
        register(3); // broker 2 is down through the deletion
        createAndDelete();
        long later = markWrittenAt() + COMPLETED_MARK_RETENTION_MS + REGISTERED_BEFORE_EXPIRY_MS + 1;

        deletions.resume(later);
        assertNotNull(zk.checkExists().forPath(ZkPaths.topicDeletion("orders")), "broker 2 has not read it yet");

        register(2);
        deletions.resume(later);
        assertNull(zk.checkExists().forPath(ZkPaths.topicDeletion("orders")), "every broker has been back a minute");
    }

    @Test
    void theMarkStaysTenMinutesEvenWithEveryBrokerThere() throws Exception {
        register(1);
        register(2);
        register(3);
        createAndDelete();
        deletions.resume(markWrittenAt() + COMPLETED_MARK_RETENTION_MS - 1);
        assertNotNull(zk.checkExists().forPath(ZkPaths.topicDeletion("orders")));
    }

    @Test
    void expiryNeedsTheRetentionAndEveryBrokerRegisteredAMinute() {
        long written = 1_000_000;
        long now = written + COMPLETED_MARK_RETENTION_MS + 1;
        long longAgo = written - 5_000;
        assertTrue(TopicDeletions.completedMarkExpired(now, written, List.of(longAgo, longAgo)));
        assertTrue(TopicDeletions.completedMarkExpired(now, written, List.of()), "a mark written before brokers "
                + "were recorded goes after the retention, as it did");
        assertFalse(TopicDeletions.completedMarkExpired(now - 2, written, List.of(longAgo)), "too young");
        assertFalse(TopicDeletions.completedMarkExpired(now, written, Arrays.asList(longAgo, null)), "one not back");
        assertFalse(TopicDeletions.completedMarkExpired(now, written,
                List.of(longAgo, now - REGISTERED_BEFORE_EXPIRY_MS + 1)), "one back less than a minute");
        assertTrue(TopicDeletions.completedMarkExpired(now, written, List.of(now - REGISTERED_BEFORE_EXPIRY_MS)));
    }

    @Test
    void aTopicCreatedAgainUnderAnotherIdLeavesTheOldMark() throws Exception {
        createAndDelete();
        Uuid newId = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAg");
        store.createTopic("orders", newId, Map.of(0, List.of(1, 2, 3)), Map.of());
        assertEquals(DELETED_ID.toString(), mark().get("topicId"),
                "a broker down through both still deletes the old topic's logs by it");
    }

    @Test
    void aTopicCreatedAgainUnderTheSameIdTakesTheMarkWithIt() throws Exception {
        createAndDelete();
        // a mirror topic created again carries its source's topic ID
        store.createTopic("orders", DELETED_ID, Map.of(0, List.of(1, 2, 3)), Map.of());
        assertNull(zk.checkExists().forPath(ZkPaths.topicDeletion("orders")));
    }

    @Test
    void aBrokerUnregisteredForGoodNoLongerHoldsItsTopicsMarksNorItsTruncationPoints() throws Exception {
        register(1);
        register(3); // broker 2 is gone for good
        createAndDelete();
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.mirrorTruncations(2), Json.encode(Map.of("version", 1,
                "applied", Map.of("orders", Map.of("0", 4)))));
        long later = markWrittenAt() + COMPLETED_MARK_RETENTION_MS + REGISTERED_BEFORE_EXPIRY_MS + 1;
        deletions.resume(later);
        assertNotNull(zk.checkExists().forPath(ZkPaths.topicDeletion("orders")), "broker 2 may still come back");

        BrokerUnregistration.Forgotten forgotten = new BrokerUnregistration(zk).unregister(2, false);

        assertEquals(new BrokerUnregistration.Forgotten(true, List.of("orders")), forgotten);
        assertNull(zk.checkExists().forPath(ZkPaths.mirrorTruncations(2)));
        assertEquals(List.of(1, 3), mark().get("brokers"));
        assertEquals(true, mark().get("completed"), "the rest of the mark is kept");
        deletions.resume(markWrittenAt() + COMPLETED_MARK_RETENTION_MS + 1);
        assertNull(zk.checkExists().forPath(ZkPaths.topicDeletion("orders")), "the brokers left have been back");
    }

    @Test
    void aRunningBrokerIsNotUnregisteredAndNothingOfItsIsTouched() throws Exception {
        register(1);
        register(2);
        register(3);
        createAndDelete();
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.mirrorTruncations(2), new byte[0]);

        InvalidRequestException refused = assertThrows(InvalidRequestException.class,
                () -> new BrokerUnregistration(zk).unregister(2, true));

        assertTrue(refused.getMessage().contains("Broker 2 is registered"), refused.getMessage());
        assertNotNull(zk.checkExists().forPath(ZkPaths.mirrorTruncations(2)));
        assertEquals(List.of(1, 2, 3), mark().get("brokers"));
    }

    @Test
    void aBrokerIdNothingNamesIsNotRegisteredUnlessAnAssignmentNamesIt() throws Exception {
        createAndDelete();
        BrokerUnregistration unregistration = new BrokerUnregistration(zk);
        assertThrows(BrokerIdNotRegisteredException.class, () -> unregistration.unregister(7, false));
        assertTrue(unregistration.unregister(7, true).nothing(), "a broker only a partition's replicas name");
        assertEquals(List.of(1, 2, 3), mark().get("brokers"));
    }

    private void createAndDelete() throws Exception {
        store.createTopic("orders", DELETED_ID, Map.of(0, List.of(1, 2), 1, List.of(2, 3)), Map.of());
        store.deleteTopic("orders");
    }

    private Map<String, Object> mark() throws Exception {
        String path = ZkPaths.topicDeletion("orders");
        return Json.decode(zk.getData().forPath(path), path);
    }

    private long markWrittenAt() throws Exception {
        Stat stat = zk.checkExists().forPath(ZkPaths.topicDeletion("orders"));
        return stat.getMtime();
    }

    private void register(int broker) throws Exception {
        store.syncRegistration(new BrokerRegistration(broker, List.of(Endpoint.parse("PLAINTEXT://127.0.0.1:"
                + (9090 + broker), "test")), Optional.empty()));
    }
}
