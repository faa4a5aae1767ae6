package io.twinlog.mirror.store;

import io.twinlog.controller.zk.Json;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The group sync records of the mirrors, {@code /mirror_groups/<mirror>/<group>}: written only by the controller
 * broker's group offset sync, read only by describe (see {@link MirrorStore} for why outside {@code /mirrors}). A
 * group ID may hold any character, so its node name is the ID percent-encoded ({@link #groupNode}). Thread-safe
 * (Curator's client is). Split from {@link MirrorStore}, which hands its calls here.
 */
final class MirrorGroupSyncStore {
    private final CuratorFramework zk;

    MirrorGroupSyncStore(CuratorFramework zk) {
        this.zk = zk;
    }

    /**
     * A ZooKeeper node name for a group ID: bytes of its UTF-8 form outside {@code [A-Za-z0-9_-]} as {@code %XX}, so
     * '/', '.', '..' and characters ZooKeeper refuses never reach a path; the ID itself is kept in the value.
     */
    static String groupNode(String groupId) {
        StringBuilder out = new StringBuilder();
        for (byte b : groupId.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-') {
                out.append(c);
            } else {
                out.append('%').append(String.format("%02X", b & 0xff));
            }
        }
        return out.toString();
    }

    /** The group ID a node name of {@link #groupNode} stands for. */
    static String groupIdOf(String node) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int i = 0; i < node.length(); i++) {
            char c = node.charAt(i);
            if (c == '%' && i + 2 < node.length()) {
                bytes.write(Integer.parseInt(node.substring(i + 1, i + 3), 16));
                i += 2;
            } else {
                bytes.write(c);
            }
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /** Records a group's last sync (replacing the previous record). */
    void record(String name, GroupSyncRecord record) throws Exception {
        NodeWrites.put(zk, MirrorStore.groupsPath(name) + "/" + groupNode(record.groupId()), Json.encode(record.toJson()));
    }

    /** The group sync records of a mirror, by group ID (empty before the first sync). */
    Map<String, GroupSyncRecord> records(String name) throws Exception {
        Map<String, GroupSyncRecord> out = new TreeMap<>();
        List<String> nodes;
        try {
            nodes = zk.getChildren().forPath(MirrorStore.groupsPath(name));
        } catch (KeeperException.NoNodeException e) {
            return out;
        }
        for (String node : nodes) {
            String path = MirrorStore.groupsPath(name) + "/" + node;
            try {
                GroupSyncRecord r = GroupSyncRecord.fromJson(zk.getData().forPath(path), path);
                out.put(r.groupId(), r);
            } catch (KeeperException.NoNodeException ignored) {
                // pruned concurrently
            }
        }
        return out;
    }

    /** The IDs of the groups that have a sync record (from the node names only: one ZooKeeper read). */
    Set<String> ids(String name) throws Exception {
        Set<String> out = new TreeSet<>();
        try {
            zk.getChildren().forPath(MirrorStore.groupsPath(name)).forEach(node -> out.add(groupIdOf(node)));
        } catch (KeeperException.NoNodeException e) {
            // never synced a group
        }
        return out;
    }

    /** Removes the records of groups the mirror no longer syncs (no longer on the source, or now excluded). */
    void remove(String name, Collection<String> groupIds) throws Exception {
        for (String groupId : groupIds) {
            try {
                zk.delete().forPath(MirrorStore.groupsPath(name) + "/" + groupNode(groupId));
            } catch (KeeperException.NoNodeException ignored) {
                // already gone
            }
        }
    }

    /** Removes every record of a mirror (deleted, or created again under a deleted one's name). */
    void deleteAll(String name) throws Exception {
        try {
            zk.delete().deletingChildrenIfNeeded().forPath(MirrorStore.groupsPath(name));
        } catch (KeeperException.NoNodeException ignored) {
            // never synced a group
        }
    }
}
