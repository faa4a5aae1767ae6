package io.twinlog.controller.zk;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An entity's config node in Kafka's ZooKeeper layout, {@code {"version":1,"config":{"key":"value",...}}}:
 * {@code /config/users/<user>}, {@code /config/clients/<client id>}, ... Several writers share one node (a user's
 * SCRAM credentials and its client quotas), each changing only its own keys: they read the node with its version
 * ({@link #read}), change their keys and write it back at that version, reading again when another came first.
 */
public final class EntityConfigNode {
    private EntityConfigNode() {
    }

    /**
     * A node's config as read, the ZooKeeper version to write it back at, and the zxid of its last change (-1 when it
     * does not exist), to tell when a watcher has read at least this far.
     */
    public record Read(Map<String, String> config, boolean exists, int version, long mzxid) {
    }

    /** Reads the node; a missing node reads as an empty config that does not exist. */
    public static Read read(CuratorFramework zk, String path) throws Exception {
        Stat stat = new Stat();
        try {
            byte[] bytes = zk.getData().storingStatIn(stat).forPath(path);
            return new Read(config(bytes, path), true, stat.getVersion(), stat.getMzxid());
        } catch (KeeperException.NoNodeException e) {
            return new Read(new LinkedHashMap<>(), false, -1, -1);
        }
    }

    /** The {@code config} map of a node's data (empty for an empty node), values as strings, in stored order. */
    public static Map<String, String> config(byte[] bytes, String path) {
        Map<String, String> config = new LinkedHashMap<>();
        if (bytes == null || bytes.length == 0) {
            return config;
        }
        Object current = Json.decode(bytes, path).getOrDefault("config", Map.of());
        if (current instanceof Map<?, ?> entries) {
            entries.forEach((k, v) -> config.put(String.valueOf(k), String.valueOf(v)));
        }
        return config;
    }

    /** The node's data, fields in Kafka's order ({@code version} first), configs in the order given. */
    public static byte[] encode(Map<String, String> config) {
        Map<String, Object> node = new LinkedHashMap<>();
        node.put("version", 1);
        node.put("config", config);
        return Json.encode(node);
    }
}
