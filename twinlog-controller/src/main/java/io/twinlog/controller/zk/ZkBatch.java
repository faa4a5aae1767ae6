package io.twinlog.controller.zk;

import org.apache.curator.RetryLoop;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

import java.util.Collection;
import java.util.List;

/** ZooKeeper operations on many nodes in few round trips, for the stores that write batches of records. */
public final class ZkBatch {
    private ZkBatch() {
    }

    /**
     * ZooKeeper's multi-read (getData and getChildren only; Curator has none) under Curator's retry policy: one
     * round trip, a missing node an error result in its place rather than an exception.
     */
    public static List<OpResult> multiRead(CuratorFramework zk, List<Op> reads) throws Exception {
        return RetryLoop.callWithRetry(zk.getZookeeperClient(), () -> zk.getZookeeperClient().getZooKeeper()
                .multi(reads));
    }

    /** Creates each of {@code paths} (with its parents) that does not exist yet; one round trip per path. */
    public static void createIfAbsent(CuratorFramework zk, Collection<String> paths) throws Exception {
        for (String path : paths) {
            try {
                zk.create().creatingParentsIfNeeded().forPath(path);
            } catch (KeeperException.NodeExistsException exists) {
                // the usual case: another writer, or an earlier batch, made it
            }
        }
    }
}
