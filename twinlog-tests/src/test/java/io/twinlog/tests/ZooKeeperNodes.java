package io.twinlog.tests;

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
}
