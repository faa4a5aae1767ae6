package io.twinlog.controller.zk;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.kafka.common.errors.BrokerIdNotRegisteredException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Forgets a broker that is gone for good, as {@code kafka-cluster.sh unregister --id N} asks (UnregisterBroker): the
 * per-broker state the cluster would otherwise keep for it forever. That is its node of applied mirror truncation
 * points ({@code /mirror_truncations/<id>}), and its id in the marks of completed topic deletions, which stay until
 * every broker they name has been back a minute ({@link TopicDeletions#completedMarkExpired}).
 *
 * <p>Unlike Kafka's KRaft controller, which drops a live broker's registration and lets it register again, a broker
 * that is registered (running) is refused: its registration is an ephemeral node that nothing here can take from it,
 * and forgetting what a running broker applied would hold its mirror leaders in LOG_TRUNCATION. Every write is one
 * ZooKeeper transaction with a guard that fails if the broker registered meanwhile (create and delete its
 * registration path: the create fails when the node exists). Nothing here deletes data: a broker that comes back
 * after its id left a completed mark finds the deleted topic's logs with no mark naming them, and keeps them unserved
 * (decision 72).
 */
public final class BrokerUnregistration {
    private static final Logger log = LoggerFactory.getLogger(BrokerUnregistration.class);
    private static final int MAX_CAS_ATTEMPTS = 50;

    /** What was forgotten: whether the truncation node existed, and the topics whose deletion marks named the broker. */
    public record Forgotten(boolean truncationPoints, List<String> deletionMarks) {
        public boolean nothing() {
            return !truncationPoints && deletionMarks.isEmpty();
        }
    }

    private final CuratorFramework zk;

    public BrokerUnregistration(CuratorFramework zk) {
        this.zk = zk;
    }

    /**
     * Removes what the cluster keeps for {@code brokerId}.
     *
     * @throws InvalidRequestException        the broker is registered (running), now or before a write landed
     * @throws BrokerIdNotRegisteredException with {@code knownElsewhere} false, when nothing named the broker
     */
    public Forgotten unregister(int brokerId, boolean knownElsewhere) throws Exception {
        if (zk.checkExists().forPath(ZkPaths.broker(brokerId)) != null) {
            throw registered(brokerId);
        }
        boolean truncations = removeTruncationPoints(brokerId);
        List<String> marks = new ArrayList<>();
        List<String> deletions;
        try {
            deletions = zk.getChildren().forPath(ZkPaths.DELETE_TOPICS);
        } catch (KeeperException.NoNodeException e) {
            deletions = List.of();
        }
        for (String topic : deletions) {
            if (removeFromMark(brokerId, topic)) {
                marks.add(topic);
            }
        }
        Forgotten forgotten = new Forgotten(truncations, List.copyOf(marks));
        if (forgotten.nothing() && !knownElsewhere) {
            throw new BrokerIdNotRegisteredException("Broker ID " + brokerId + " is not registered and nothing in "
                    + "the cluster's metadata names it");
        }
        log.info("Unregistered broker {}: {}its id removed from the deletion marks of {}", brokerId,
                truncations ? "its mirror truncation points (" + ZkPaths.mirrorTruncations(brokerId) + ") deleted, "
                        : "", marks);
        return forgotten;
    }

    private boolean removeTruncationPoints(int brokerId) throws Exception {
        String path = ZkPaths.mirrorTruncations(brokerId);
        Stat stat = zk.checkExists().forPath(path);
        if (stat == null) {
            return false;
        }
        try {
            zk.transaction().forOperations(unregisteredGuard(brokerId),
                    zk.transactionOp().delete().forPath(ZkPaths.broker(brokerId)),
                    zk.transactionOp().delete().forPath(path));
            return true;
        } catch (KeeperException.NodeExistsException e) {
            throw registered(brokerId);
        } catch (KeeperException.NoNodeException e) {
            return false; // removed concurrently
        }
    }

    /** Rewrites one deletion mark without the broker, at the version read; false if it did not name the broker. */
    private boolean removeFromMark(int brokerId, String topic) throws Exception {
        String path = ZkPaths.topicDeletion(topic);
        for (int attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
            Stat stat = new Stat();
            Map<String, Object> mark;
            try {
                mark = Json.decode(zk.getData().storingStatIn(stat).forPath(path), path);
            } catch (KeeperException.NoNodeException gone) {
                return false;
            }
            List<Integer> brokers = TopicDeletions.markBrokers(mark);
            if (!brokers.remove(Integer.valueOf(brokerId))) {
                return false;
            }
            Map<String, Object> rewritten = new LinkedHashMap<>(mark);
            rewritten.put("brokers", brokers);
            try {
                zk.transaction().forOperations(unregisteredGuard(brokerId),
                        zk.transactionOp().delete().forPath(ZkPaths.broker(brokerId)),
                        zk.transactionOp().setData().withVersion(stat.getVersion()).forPath(path,
                                Json.encode(rewritten)));
                return true;
            } catch (KeeperException.NodeExistsException e) {
                throw registered(brokerId);
            } catch (KeeperException.BadVersionException | KeeperException.NoNodeException changed) {
                // rewritten or expired meanwhile: read it again
            }
        }
        throw new IllegalStateException("Could not rewrite " + path + " without broker " + brokerId + " after "
                + MAX_CAS_ATTEMPTS + " attempts");
    }

    /** The first half of the guard: creating the registration path fails if the broker is registered. */
    private CuratorOp unregisteredGuard(int brokerId) throws Exception {
        return zk.transactionOp().create().forPath(ZkPaths.broker(brokerId));
    }

    private static InvalidRequestException registered(int brokerId) {
        return new InvalidRequestException("Broker " + brokerId + " is registered (running): stop it for good "
                + "before unregistering it");
    }
}
