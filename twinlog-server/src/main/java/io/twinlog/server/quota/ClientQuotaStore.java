package io.twinlog.server.quota;

import io.twinlog.common.MonitorWaits;
import io.twinlog.controller.zk.EntityConfigNode;
import io.twinlog.controller.zk.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.image.ClientQuotaImage;
import org.apache.kafka.image.ClientQuotasImage;
import org.apache.kafka.server.config.QuotaConfig;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Client quotas as every broker of the cluster sees them: kept in ZooKeeper where Kafka's ZooKeeper-mode brokers
 * kept them ({@link ClientQuotaPaths}; the user nodes are shared with the SCRAM credentials, whose keys are kept on
 * every write), watched by each broker, and handed to the quota managers as they change, so a quota set through any
 * broker is enforced by all within a ZooKeeper round trip.
 *
 * <p>Not in the metadata image, for the reason SCRAM credentials are not (decision 46): nothing else needs them, and
 * the image's listeners need not wake on every quota change.
 *
 * <p>Threading: the caches' threads apply changes under this object's monitor; reads ({@link #image}) are of a
 * volatile snapshot; {@link #alter} blocks on ZooKeeper and is called off the request threads.
 */
public final class ClientQuotaStore implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClientQuotaStore.class);

    /** Told of every change of one quota value; empty means removed. */
    @FunctionalInterface
    public interface Listener {
        void onQuota(ClientQuotaEntity entity, String key, OptionalDouble value);
    }

    private final CuratorFramework zk;
    private final Listener listener;
    private final List<CuratorCache> caches;
    /** Node path → zxid of its last change this broker has read (-1: deleted); guarded by this. */
    private final Map<String, Long> readZxids = new HashMap<>();
    /** entity → key → value, as the nodes say; guarded by this. */
    private final Map<ClientQuotaEntity, Map<String, Double>> quotas = new HashMap<>();
    private volatile ClientQuotasImage image = ClientQuotasImage.EMPTY;

    public ClientQuotaStore(CuratorFramework zk, Listener listener) {
        this.zk = zk;
        this.listener = listener;
        this.caches = List.of(CuratorCache.build(zk, ZkPaths.USER_CONFIGS),
                CuratorCache.build(zk, ZkPaths.CLIENT_CONFIGS), CuratorCache.build(zk, ZkPaths.IP_CONFIGS));
    }

    /**
     * Starts watching and waits (up to {@code timeoutMs}) until the quotas stored are read, so that a broker enforces
     * them before it serves clients. If ZooKeeper is slow, the broker starts anyway and applies them when read.
     */
    public void start(long timeoutMs) throws InterruptedException {
        CountDownLatch initialized = new CountDownLatch(caches.size());
        for (CuratorCache cache : caches) {
            cache.listenable().addListener(CuratorCacheListener.builder()
                    .forCreatesAndChanges((before, after) -> onNode(after.getPath(), Optional.of(after)))
                    .forDeletes(gone -> onNode(gone.getPath(), Optional.empty()))
                    .forInitialized(initialized::countDown)
                    .build());
            cache.start();
        }
        if (!initialized.await(timeoutMs, TimeUnit.MILLISECONDS)) {
            log.warn("Client quotas not read from ZooKeeper within {} ms; starting without them, they apply as soon "
                    + "as they are read", timeoutMs);
        }
    }

    /** The quotas stored, for DescribeClientQuotas (Kafka's own image class answers the filters). */
    public ClientQuotasImage image() {
        return image;
    }

    private void onNode(String path, Optional<ChildData> data) {
        Optional<ClientQuotaEntity> entity = ClientQuotaPaths.entity(path);
        if (entity.isEmpty()) {
            return;
        }
        Map<String, Double> next;
        try {
            next = quotasIn(entity.get(), data.map(ChildData::getData).orElse(null), path);
        } catch (RuntimeException e) {
            // broad: a node unreadable in any way keeps the quotas read before
            log.error("Ignoring the unreadable client quotas of {} at {}; the quotas read before stay in force",
                    entity.get(), path, e);
            markRead(path, data);
            return;
        }
        synchronized (this) {
            markRead(path, data);
            Map<String, Double> previous = quotas.getOrDefault(entity.get(), Map.of());
            if (previous.equals(next)) {
                return; // a SCRAM credential of the user changed, not a quota
            }
            previous.forEach((key, value) -> {
                if (!next.containsKey(key)) {
                    listener.onQuota(entity.get(), key, OptionalDouble.empty());
                }
            });
            next.forEach((key, value) -> {
                if (!value.equals(previous.get(key))) {
                    listener.onQuota(entity.get(), key, OptionalDouble.of(value));
                }
            });
            if (next.isEmpty()) {
                quotas.remove(entity.get());
            } else {
                quotas.put(entity.get(), Map.copyOf(next));
            }
            Map<ClientQuotaEntity, ClientQuotaImage> images = new HashMap<>();
            quotas.forEach((e, values) -> images.put(e, new ClientQuotaImage(values)));
            image = new ClientQuotasImage(images);
            notifyAll();
        }
        log.info("Client quotas of {} now: {}", entity.get(), next.isEmpty() ? "none" : next);
    }

    /** How far this broker has read a node: its last change's zxid, -1 once it is gone. Wakes waiting alters. */
    private synchronized void markRead(String path, Optional<ChildData> data) {
        readZxids.put(path, data.map(d -> d.getStat().getMzxid()).orElse(-1L));
        notifyAll();
    }

    /** The quota keys of a node's config; other keys (SCRAM credentials) are not quotas and are skipped. */
    private static Map<String, Double> quotasIn(ClientQuotaEntity entity, byte[] bytes, String path) {
        Map<String, ConfigDef.ConfigKey> keys = keysOf(entity);
        Map<String, Double> out = new LinkedHashMap<>();
        EntityConfigNode.config(bytes, path).forEach((k, v) -> {
            if (keys.containsKey(k)) {
                out.put(k, Double.parseDouble(v));
            }
        });
        return out;
    }

    private static Map<String, ConfigDef.ConfigKey> keysOf(ClientQuotaEntity entity) {
        return entity.entries().containsKey(ClientQuotaEntity.IP) ? QuotaConfig.ipConfigs().configKeys()
                : QuotaConfig.userAndClientQuotaConfigs().configKeys();
    }

    /**
     * AlterClientQuotas: validates every entity with Kafka's rules, writes the valid ones (each node read, changed
     * and written back with its version, so a concurrent SCRAM or quota change is retried, not lost) and waits until
     * this broker applies them, so that a describe through it right after shows them. Blocks on ZooKeeper.
     */
    public Map<ClientQuotaEntity, ApiError> alter(List<ClientQuotaAlteration> alterations, boolean validateOnly,
                                                  long timeoutMs) throws InterruptedException {
        Map<ClientQuotaEntity, ClientQuotaValidation.Change> valid = new LinkedHashMap<>();
        Map<ClientQuotaEntity, ApiError> results = ClientQuotaValidation.validate(alterations, valid);
        if (validateOnly) {
            return results;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (ClientQuotaValidation.Change change : valid.values()) {
            try {
                awaitRead(change.entity(), write(change), deadline);
                log.info("Client quotas of {} changed: {}", change.entity(), change.values());
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                // broad: ZooKeeper's client throws Exception; this entity's failure is its error answer
                log.warn("Changing the client quotas of {} failed", change.entity(), e);
                results.put(change.entity(), ApiError.fromThrowable(e));
            }
        }
        return results;
    }

    /**
     * What this broker must have read for an alter to be visible through it: the node changed at {@code mzxid} or
     * later, or, for a node this alter deleted (changed last at {@code mzxid}), its deletion or a node created later.
     */
    private record Written(String path, long mzxid, boolean deleted) {
        boolean readBy(long read) {
            return deleted ? read == -1 || read > mzxid : read >= mzxid;
        }
    }

    /**
     * Read-modify-write of one entity's node; returns what to wait for. Another alter of the same node may follow at
     * once, so the wait is for this write's zxid, not for the values it wrote, which may never be read as such.
     */
    private Written write(ClientQuotaValidation.Change change) throws Exception {
        String path = ClientQuotaPaths.path(change.entity());
        Map<String, ConfigDef.ConfigKey> keys = keysOf(change.entity());
        while (true) {
            EntityConfigNode.Read node = EntityConfigNode.read(zk, path);
            Map<String, String> config = node.config();
            Map<String, String> before = new LinkedHashMap<>(config);
            change.values().forEach((key, value) -> {
                if (value == null) {
                    config.remove(key);
                } else {
                    config.put(key, format(keys.get(key), value));
                }
            });
            if (config.equals(before)) {
                return new Written(path, node.mzxid(), false);
            }
            try {
                if (!node.exists()) {
                    zk.create().creatingParentsIfNeeded().forPath(path, EntityConfigNode.encode(config));
                    Stat created = zk.checkExists().forPath(path);
                    // gone again already: deleted by a later alter, which the broker reads after this one
                    return created == null ? new Written(path, -1, false) : new Written(path, created.getMzxid(),
                            false);
                } else if (config.isEmpty()) {
                    return deleteOrEmpty(path, node);
                } else {
                    Stat written = zk.setData().withVersion(node.version()).forPath(path,
                            EntityConfigNode.encode(config));
                    return new Written(path, written.getMzxid(), false);
                }
            } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException
                     | KeeperException.NoNodeException e) {
                log.debug("Client quotas of {} changed concurrently; reading them again", change.entity());
            }
        }
    }

    /** A node with no config left goes, unless it holds a user's per-client nodes: then it keeps them, empty. */
    private Written deleteOrEmpty(String path, EntityConfigNode.Read node) throws Exception {
        try {
            zk.delete().withVersion(node.version()).forPath(path);
            return new Written(path, node.mzxid(), true);
        } catch (KeeperException.NotEmptyException e) {
            Stat emptied = zk.setData().withVersion(node.version()).forPath(path, EntityConfigNode.encode(Map.of()));
            return new Written(path, emptied.getMzxid(), false);
        }
    }

    /** As Kafka stores them: integral quotas as integers ({@code 1048576}), the others as doubles. */
    private static String format(ConfigDef.ConfigKey key, double value) {
        return key != null && key.type != ConfigDef.Type.DOUBLE ? Long.toString(Math.round(value))
                : Double.toString(value);
    }

    private synchronized void awaitRead(ClientQuotaEntity entity, Written written, long deadline)
            throws InterruptedException {
        if (!MonitorWaits.await(this, () -> written.readBy(readZxids.getOrDefault(written.path(), -1L)),
                deadline)) {
            throw new TimeoutException("The client quotas of " + entity + " were written to ZooKeeper but this "
                    + "broker has not read them back yet");
        }
    }

    @Override
    public void close() {
        caches.forEach(CuratorCache::close);
    }
}
