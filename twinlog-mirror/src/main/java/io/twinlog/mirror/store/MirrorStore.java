package io.twinlog.mirror.store;

import io.twinlog.controller.zk.Json;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Cluster mirror definitions in ZooKeeper, on the destination cluster:
 * <pre>
 * /mirrors/&lt;name&gt;                       {"version":1,"configs":{..},"sourceClusterId":..,"state":"ACTIVE"}
 * /mirrors/&lt;name&gt;/topics/&lt;topic&gt;       {"version":1,"desiredState":"MIRRORING"}   (mirror topics)
 * </pre>
 * Definitions survive restarts of every broker; writes that replace a definition check its version.
 */
public final class MirrorStore {
    public static final String MIRRORS = "/mirrors";
    private static final Logger log = LoggerFactory.getLogger(MirrorStore.class);

    private final CuratorFramework zk;

    public MirrorStore(CuratorFramework zk) {
        this.zk = zk;
    }

    public static String mirrorPath(String name) {
        return MIRRORS + "/" + name;
    }

    public static String topicsPath(String name) {
        return mirrorPath(name) + "/topics";
    }

    /** Thrown when a definition with this name exists already. */
    public static final class MirrorExistsException extends Exception {
        public MirrorExistsException(String name) {
            super("Cluster mirror '" + name + "' already exists");
        }
    }

    public void create(MirrorDefinition definition) throws Exception {
        try {
            zk.create().creatingParentsIfNeeded().forPath(mirrorPath(definition.name()), Json.encode(definition.toJson()));
            zk.create().forPath(topicsPath(definition.name()));
        } catch (KeeperException.NodeExistsException e) {
            throw new MirrorExistsException(definition.name());
        }
        log.info("Created cluster mirror {} to source {} (source cluster ID {})", definition.name(),
                definition.sourceBootstrap(), definition.sourceClusterId().orElse("not yet known"));
    }

    public Optional<MirrorDefinition> get(String name) throws Exception {
        try {
            return Optional.of(MirrorDefinition.fromJson(name, Json.decode(zk.getData().forPath(mirrorPath(name)),
                    mirrorPath(name))));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        }
    }

    /** Replaces a definition only if it did not change since {@code expected} was read. */
    public boolean update(MirrorDefinition expected, MirrorDefinition next) throws Exception {
        Stat stat = new Stat();
        byte[] data;
        try {
            data = zk.getData().storingStatIn(stat).forPath(mirrorPath(expected.name()));
        } catch (KeeperException.NoNodeException e) {
            return false;
        }
        if (!MirrorDefinition.fromJson(expected.name(), Json.decode(data, mirrorPath(expected.name()))).equals(expected)) {
            return false;
        }
        try {
            zk.setData().withVersion(stat.getVersion()).forPath(mirrorPath(expected.name()), Json.encode(next.toJson()));
            return true;
        } catch (KeeperException.BadVersionException e) {
            return false;
        }
    }

    public List<MirrorDefinition> list() throws Exception {
        List<MirrorDefinition> out = new ArrayList<>();
        List<String> names;
        try {
            names = zk.getChildren().forPath(MIRRORS);
        } catch (KeeperException.NoNodeException e) {
            return out;
        }
        for (String n : new TreeMap<>(toMap(names)).keySet()) {
            get(n).ifPresent(out::add);
        }
        return out;
    }

    /** Mirror topics of a mirror and their desired states (MIRRORING, PAUSED, STOPPED). */
    public Map<String, String> topics(String name) throws Exception {
        Map<String, String> out = new TreeMap<>();
        List<String> topics;
        try {
            topics = zk.getChildren().forPath(topicsPath(name));
        } catch (KeeperException.NoNodeException e) {
            return out;
        }
        for (String t : topics) {
            try {
                Map<String, Object> json = Json.decode(zk.getData().forPath(topicsPath(name) + "/" + t), t);
                out.put(t, (String) json.getOrDefault("desiredState", "MIRRORING"));
            } catch (KeeperException.NoNodeException ignored) {
                // removed concurrently
            }
        }
        return out;
    }

    /** Sets a mirror topic's desired state (creating its entry on first start). */
    public void setTopic(String name, String topic, String desiredState) throws Exception {
        String path = topicsPath(name) + "/" + topic;
        Map<String, Object> json = new java.util.LinkedHashMap<>();
        json.put("version", 1);
        json.put("desiredState", desiredState);
        try {
            zk.setData().forPath(path, Json.encode(json));
        } catch (KeeperException.NoNodeException e) {
            zk.create().creatingParentsIfNeeded().forPath(path, Json.encode(json));
        }
        log.info("Cluster mirror {}: topic {} desired state is now {}", name, topic, desiredState);
    }

    public void delete(String name) throws Exception {
        zk.delete().deletingChildrenIfNeeded().forPath(mirrorPath(name));
        log.info("Deleted cluster mirror {}", name);
    }

    private static Map<String, Boolean> toMap(List<String> names) {
        Map<String, Boolean> m = new TreeMap<>();
        names.forEach(n -> m.put(n, true));
        return m;
    }
}
