package io.twinlog.server.groupconfig;

import io.twinlog.common.MonitorWaits;
import io.twinlog.controller.zk.EntityConfigNode;
import io.twinlog.controller.zk.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.utils.internals.Sanitizer;
import org.apache.kafka.coordinator.group.GroupConfigManager;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;
import java.util.function.UnaryOperator;

/**
 * Per-group configs ({@code kafka-configs --entity-type groups}): stored in ZooKeeper at
 * {@code /config/groups/<group>} in the format of {@code /config/topics} ({@link EntityConfigNode}), watched by every
 * broker and handed to its group coordinator's {@link GroupConfigManager}, which the coordinator and the share
 * partitions read. A config set through any broker is in force on all within a ZooKeeper round trip, and on a broker
 * that starts, before its coordinator loads a group (the stored configs are read in {@link #start}).
 *
 * <p>A stored entry this broker cannot use (written by another tool, or out of this broker's {@code group.*} bounds)
 * is left out with one ERROR naming it; the group's other entries apply.
 *
 * <p>Threading: the cache's thread applies changes under this object's monitor; {@link #configs} and
 * {@link #groups} read a volatile snapshot; {@link #alter} blocks on ZooKeeper and is called off the request threads.
 */
public final class GroupConfigStore implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(GroupConfigStore.class);
    /** How long an alter waits for this broker to read back what it wrote. */
    private static final long APPLY_TIMEOUT_MS = 10_000;

    private final CuratorFramework zk;
    private final GroupConfigManager manager;
    private final GroupConfigPolicy policy;
    private final CuratorCache cache;
    /** Group → the configs in force (as applied to the manager); replaced whole on each change. */
    private volatile Map<String, Map<String, String>> applied = Map.of();
    /** Group → mzxid of its node as last read; guarded by this. */
    private final Map<String, Long> readZxids = new HashMap<>();

    public GroupConfigStore(CuratorFramework zk, GroupConfigManager manager, GroupConfigPolicy policy) {
        this.zk = zk;
        this.manager = manager;
        this.policy = policy;
        this.cache = CuratorCache.build(zk, ZkPaths.GROUP_CONFIGS);
    }

    /**
     * Starts watching and waits (up to {@code timeoutMs}) until the stored configs are applied, so that groups load
     * with them. If ZooKeeper is slow, the broker starts anyway and applies them when read.
     */
    public void start(long timeoutMs) throws InterruptedException {
        CountDownLatch initialized = new CountDownLatch(1);
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((before, after) -> onNode(after.getPath(), Optional.of(after)))
                .forDeletes(gone -> onNode(gone.getPath(), Optional.empty()))
                .forInitialized(initialized::countDown)
                .build());
        cache.start();
        if (!initialized.await(timeoutMs, TimeUnit.MILLISECONDS)) {
            log.warn("Group configs not read from ZooKeeper within {} ms; starting without them, they apply as soon "
                    + "as they are read", timeoutMs);
        }
        Map<String, Map<String, String>> now = applied;
        if (!now.isEmpty()) {
            log.info("Group configs in force at start: {}", new TreeMap<>(now));
        }
    }

    /**
     * A group's config node. A group id may hold any character, so it is written as Kafka's {@code Sanitizer} writes
     * user names under {@code /config/users} ({@code app/1} is {@code app%2F1}); "." and "..", which ZooKeeper refuses
     * as node names, as {@code %2E} and {@code %2E%2E}, which the same decoding reads back.
     */
    static String path(String groupId) {
        String sanitized = Sanitizer.sanitize(groupId);
        if (sanitized.equals(".") || sanitized.equals("..")) {
            sanitized = sanitized.replace(".", "%2E");
        }
        return ZkPaths.GROUP_CONFIGS + "/" + sanitized;
    }

    /** The group a node under {@link ZkPaths#GROUP_CONFIGS} is named for. */
    static String groupOf(String nodeName) {
        return Sanitizer.desanitize(nodeName);
    }

    public GroupConfigPolicy policy() {
        return policy;
    }

    /** The configs set for {@code groupId} and in force on this broker (empty if none). */
    public Map<String, String> configs(String groupId) {
        return applied.getOrDefault(groupId, Map.of());
    }

    /** The groups that have configs set, as ListConfigResources lists them. */
    public Set<String> groups() {
        return new TreeSet<>(applied.keySet());
    }

    private void onNode(String path, Optional<ChildData> node) {
        if (!path.startsWith(ZkPaths.GROUP_CONFIGS + "/")) {
            return; // the parent
        }
        String groupId = groupOf(path.substring(ZkPaths.GROUP_CONFIGS.length() + 1));
        Map<String, String> next = node.map(data -> usable(groupId, data)).orElse(Map.of());
        synchronized (this) {
            readZxids.put(groupId, node.map(data -> data.getStat().getMzxid()).orElse(-1L));
            Map<String, String> previous = applied.getOrDefault(groupId, Map.of());
            if (!previous.equals(next)) {
                Properties props = new Properties();
                props.putAll(next);
                try {
                    // an empty set removes the group's entry: the coordinator's defaults apply again
                    manager.updateGroupConfig(groupId, props);
                } catch (RuntimeException e) {
                    // broad on purpose: the entries passed the policy, so a refusal here is unexpected; the group
                    // keeps what it had, and the next change tries again
                    log.error("Group configs {} of group {} could not be applied; it keeps {}", next, groupId,
                            previous, e);
                    notifyAll();
                    return;
                }
                Map<String, Map<String, String>> all = new HashMap<>(applied);
                if (next.isEmpty()) {
                    all.remove(groupId);
                } else {
                    all.put(groupId, Map.copyOf(next));
                }
                applied = Map.copyOf(all);
                log.info("Group configs of group {} now: {}", groupId, next.isEmpty() ? "none" : new TreeMap<>(next));
            }
            notifyAll();
        }
    }

    /** The node's entries this broker can use; the others are left out with one ERROR. */
    private Map<String, String> usable(String groupId, ChildData data) {
        Map<String, String> stored;
        try {
            stored = EntityConfigNode.config(data.getData(), data.getPath());
        } catch (RuntimeException e) {
            // broad on purpose: a node that is not JSON of the expected shape, whatever the parser throws
            log.error("Ignoring the unreadable group configs of group {} at {}", groupId, data.getPath(), e);
            return Map.of();
        }
        Map<String, String> out = new TreeMap<>();
        Map<String, String> dropped = new TreeMap<>();
        stored.forEach((key, value) -> {
            try {
                policy.validate(Map.of(key, value));
                out.put(key, value);
            } catch (RuntimeException e) {
                // broad on purpose: Kafka's check throws its config exceptions of several types, each named below
                dropped.put(key, value + " (" + e.getMessage() + ")");
                log.debug("Stored group config {} is unusable", key, e); // the ERROR below names it
            }
        });
        if (!dropped.isEmpty()) {
            log.error("Ignoring group configs stored at {} that this broker cannot use: {}", data.getPath(), dropped);
        }
        return out;
    }

    /**
     * Changes the configs of {@code groupId}: {@code change} is applied to what ZooKeeper holds, the result checked
     * as a whole ({@link GroupConfigPolicy}), written compare-and-set on the node's version (again after a concurrent
     * change, so concurrent alters of different keys all survive; a group left without configs loses its node), and
     * waited for until this broker applies it, so that a describe through it right after shows it. Blocks on
     * ZooKeeper: admin threads only.
     *
     * @throws ApiException Kafka's answer for a refused change, writing nothing
     */
    public void alter(String groupId, UnaryOperator<Map<String, String>> change, boolean validateOnly)
            throws Exception {
        GroupConfigPolicy.checkAlterable(groupId);
        String path = path(groupId);
        while (true) {
            Stat stat = new Stat();
            Map<String, String> stored;
            boolean exists = true;
            try {
                stored = EntityConfigNode.config(zk.getData().storingStatIn(stat).forPath(path), path);
            } catch (KeeperException.NoNodeException e) {
                stored = Map.of();
                exists = false;
            }
            Map<String, String> next = new TreeMap<>(change.apply(new LinkedHashMap<>(stored)));
            policy.validate(next);
            if (validateOnly || next.equals(new TreeMap<>(stored))) {
                return;
            }
            try {
                if (next.isEmpty()) {
                    zk.delete().withVersion(stat.getVersion()).forPath(path);
                    long deleted = stat.getMzxid();
                    awaitRead(groupId, read -> read != deleted);
                } else {
                    Stat written;
                    if (!exists) {
                        zk.create().creatingParentsIfNeeded().forPath(path, EntityConfigNode.encode(next));
                        written = zk.checkExists().forPath(path);
                    } else {
                        written = zk.setData().withVersion(stat.getVersion()).forPath(path,
                                EntityConfigNode.encode(next));
                    }
                    if (written != null) {
                        long mzxid = written.getMzxid();
                        awaitRead(groupId, read -> read >= mzxid);
                    }
                }
                log.info("Group configs of group {} set to {}", groupId, next.isEmpty() ? "none" : next);
                return;
            } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException
                     | KeeperException.NoNodeException e) {
                log.debug("Group configs at {} changed concurrently; reading them again", path);
            }
        }
    }

    /**
     * Waits until the mzxid this broker last read for the group's node ({@code -1}: none, or deleted) satisfies
     * {@code done}.
     */
    private synchronized void awaitRead(String groupId, LongPredicate done) throws InterruptedException {
        if (!MonitorWaits.await(this, () -> done.test(readZxids.getOrDefault(groupId, -1L)),
                MonitorWaits.deadlineAfter(APPLY_TIMEOUT_MS))) {
            throw new TimeoutException("The group configs of " + groupId + " were written to ZooKeeper but this "
                    + "broker has not read them back yet");
        }
    }

    @Override
    public void close() {
        cache.close();
    }
}
