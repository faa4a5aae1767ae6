package io.twinlog.mirror.store;

import io.twinlog.controller.zk.Json;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The source topics a mirror's patterns or discovery selected but did not start, with why (a loop, a failback into a
 * topic of another name: decision 125), {@code /mirror_skipped/<mirror>} =
 * {@code {"version":1,"topics":{"<source topic>":"<why>"}}}: written by starts and by discovery, read by describe,
 * outside {@code /mirrors} for the reason {@link MirrorStore} gives. A topic leaves the record when a later start
 * or discovery pass considers it again and does not skip it. Split from {@link MirrorStore}, which hands its calls
 * here.
 */
final class MirrorSkippedStore {
    static final String MIRROR_SKIPPED = "/mirror_skipped";
    private static final int ATTEMPTS = 5;

    private final CuratorFramework zk;

    MirrorSkippedStore(CuratorFramework zk) {
        this.zk = zk;
    }

    static String path(String mirror) {
        return MIRROR_SKIPPED + "/" + mirror;
    }

    /**
     * Records {@code skipped} and forgets the other topics of {@code considered}; version-checked, since a start and
     * discovery may write at once. Nothing is written when nothing changes.
     *
     * @return the topics skipped now that were not before (or for another reason): what is news to the operator
     */
    Map<String, String> record(String mirror, Map<String, String> skipped, Collection<String> considered)
            throws Exception {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            Stat stat = new Stat();
            Map<String, String> before;
            try {
                before = decode(zk.getData().storingStatIn(stat).forPath(path(mirror)), path(mirror));
            } catch (KeeperException.NoNodeException e) {
                if (skipped.isEmpty()) {
                    return Map.of();
                }
                stat = null;
                before = Map.of();
            }
            Map<String, String> after = new TreeMap<>(before);
            after.keySet().removeAll(considered);
            after.putAll(skipped);
            Map<String, String> news = new TreeMap<>(skipped);
            Map<String, String> recorded = before;
            news.entrySet().removeIf(e -> e.getValue().equals(recorded.get(e.getKey())));
            if (after.equals(before)) {
                return news;
            }
            byte[] data = Json.encode(Map.of("version", 1, "topics", after));
            try {
                if (stat == null) {
                    zk.create().creatingParentsIfNeeded().forPath(path(mirror), data);
                } else {
                    zk.setData().withVersion(stat.getVersion()).forPath(path(mirror), data);
                }
                return news;
            } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException raced) {
                // written meanwhile by the other writer: read again and merge
            }
        }
        return skipped; // lost every race: the other writer keeps writing; said as news
    }

    /** The skipped source topics of {@code mirror} with why, by name; empty when none. */
    Map<String, String> read(String mirror) throws Exception {
        try {
            return decode(zk.getData().forPath(path(mirror)), path(mirror));
        } catch (KeeperException.NoNodeException e) {
            return Map.of();
        }
    }

    void delete(String mirror) throws Exception {
        try {
            zk.delete().forPath(path(mirror));
        } catch (KeeperException.NoNodeException e) {
            // none recorded
        }
    }

    private static Map<String, String> decode(byte[] data, String path) {
        Map<String, String> out = new LinkedHashMap<>();
        if (Json.decode(data, path).get("topics") instanceof Map<?, ?> topics) {
            topics.forEach((k, v) -> out.put(String.valueOf(k), String.valueOf(v)));
        }
        return new TreeMap<>(out);
    }
}
