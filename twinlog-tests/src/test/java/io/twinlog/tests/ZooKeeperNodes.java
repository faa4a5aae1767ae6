package io.twinlog.tests;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

import java.nio.charset.StandardCharsets;

/** What a test reads straight from ZooKeeper, to check what the brokers stored. */
public final class ZooKeeperNodes {
    private ZooKeeperNodes() {
    }

    /** The node's data as text, null when it does not exist. */
    public static String read(String zookeeperConnect, String path) throws Exception {
        try (ZooKeeper zk = new ZooKeeper(zookeeperConnect, 10_000, event -> { })) {
            if (zk.exists(path, false) == null) {
                return null;
            }
            return new String(zk.getData(path, false, null), StandardCharsets.UTF_8);
        }
    }

    /** Creates the node (its parent must exist) with {@code data}, as another tool writing to ZooKeeper would. */
    public static void create(String zookeeperConnect, String path, String data) throws Exception {
        try (ZooKeeper zk = new ZooKeeper(zookeeperConnect, 10_000, event -> { })) {
            zk.create(path, data.getBytes(StandardCharsets.UTF_8), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        }
    }
}
