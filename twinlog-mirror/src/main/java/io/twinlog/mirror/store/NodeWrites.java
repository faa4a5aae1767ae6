package io.twinlog.mirror.store;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/** Unconditional writes of the mirror store's records that no one else writes (progress, group syncs). */
final class NodeWrites {
    private NodeWrites() {
    }

    /** Writes {@code data} at {@code path}, creating the node (and its parents) if it does not exist yet. */
    static void put(CuratorFramework zk, String path, byte[] data) throws Exception {
        try {
            zk.setData().forPath(path, data);
        } catch (KeeperException.NoNodeException e) {
            try {
                zk.create().creatingParentsIfNeeded().forPath(path, data);
            } catch (KeeperException.NodeExistsException raced) {
                zk.setData().forPath(path, data);
            }
        }
    }
}
