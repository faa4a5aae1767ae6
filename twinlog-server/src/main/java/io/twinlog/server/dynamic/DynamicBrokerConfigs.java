package io.twinlog.server.dynamic;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.MonitorWaits;
import io.twinlog.controller.zk.EntityConfigNode;
import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.mirror.store.SecretCodec;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;
import org.apache.kafka.server.config.DynamicBrokerConfig;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * The broker configs set with {@code kafka-configs --entity-type brokers --alter}: stored where Kafka's
 * ZooKeeper-mode brokers kept them ({@code /config/brokers/<id>} for one broker, {@code /config/brokers/<default>}
 * for all; secrets encrypted with {@code password.encoder.secret}), watched by every broker, and applied live by the
 * parts that take them ({@link BrokerReconfigurable}) on one thread, {@code twinlog-reconfigure-<id>}.
 *
 * <p>Precedence is Kafka's: the broker's own dynamic configs, then the cluster default, then
 * {@code server.properties}, then the default; a level that sets one of a group of synonyms
 * ({@code log.retention.ms}, {@code .minutes}, {@code .hours}) hides the whole group below it. {@link #current()} is
 * that effective configuration.
 *
 * <p>A part that cannot apply a change logs why at ERROR and keeps its previous state; the next change retries it.
 * Stored entries that are not valid (a key Twinlog does not apply, a value that no longer parses, a secret that does
 * not decrypt) are left out with one ERROR naming them, as Kafka does.
 */
public final class DynamicBrokerConfigs implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DynamicBrokerConfigs.class);
    /** How long an alter waits for this broker to read back what it wrote. */
    private static final long APPLY_TIMEOUT_MS = 10_000;

    /** The broker's dynamic configs at both levels, as stored (secrets decrypted). */
    public record Layers(Map<String, String> clusterDefault, Map<String, String> perBroker) {
        public static final Layers NONE = new Layers(Map.of(), Map.of());
    }

    private final CuratorFramework zk;
    private final BrokerConfig staticConfig;
    private final int brokerId;
    private final Optional<SecretCodec> secrets;
    private final CuratorCache cache;
    private final List<BrokerReconfigurable> reconfigurables = new CopyOnWriteArrayList<>();
    private final ExecutorService reconfigureThread;
    private volatile Layers layers = Layers.NONE;
    private volatile BrokerConfig current;
    /** What the reconfigure thread applied last; that thread only. */
    private BrokerConfig applied;
    /** The configs in force when {@link #start} returned: what the broker's parts are built with. */
    private volatile BrokerConfig startedWith;
    /** mzxids of the two nodes as last read (-1: absent); guarded by this. */
    private long defaultZxid = -1;
    private long ownZxid = -1;

    public DynamicBrokerConfigs(CuratorFramework zk, BrokerConfig staticConfig) {
        this.zk = zk;
        this.staticConfig = staticConfig;
        this.brokerId = staticConfig.brokerId();
        this.secrets = staticConfig.passwordEncoderSecret()
                .map(secret -> new SecretCodec(secret, staticConfig.passwordEncoderOldSecret()));
        this.cache = CuratorCache.build(zk, ZkPaths.BROKER_CONFIGS);
        this.current = staticConfig;
        this.applied = staticConfig;
        this.startedWith = staticConfig;
        // one thread; a change queued behind a newer one is skipped (apply checks it is still current)
        this.reconfigureThread = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                r -> {
                    Thread t = new Thread(r, "twinlog-reconfigure-" + brokerId);
                    t.setDaemon(true);
                    return t;
                });
    }

    /**
     * Reads the stored configs (waiting up to {@code timeoutMs}), so that the broker's parts are built with them:
     * nothing is resized at start, as in Kafka.
     */
    public void start(long timeoutMs) throws InterruptedException {
        CountDownLatch initialized = new CountDownLatch(1);
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((before, after) -> onNode(after.getPath()))
                .forDeletes(gone -> onNode(gone.getPath()))
                .forInitialized(initialized::countDown)
                .build());
        cache.start();
        if (!initialized.await(timeoutMs, TimeUnit.MILLISECONDS)) {
            log.warn("Dynamic broker configs not read from ZooKeeper within {} ms; starting with server.properties, "
                    + "they apply as soon as they are read", timeoutMs);
        }
        synchronized (this) {
            startedWith = current;
        }
        // what the reconfigure thread applied so far is what the parts are built with, from here on
        reconfigureThread.execute(() -> applied = startedWith);
        if (!layers.equals(Layers.NONE)) {
            log.info("Dynamic broker configs in force at start: cluster default {}, broker {} {}",
                    masked(layers.clusterDefault()), brokerId, masked(layers.perBroker()));
        }
    }

    /** The effective configuration: dynamic configs over {@code server.properties}. */
    public BrokerConfig current() {
        return current;
    }

    public Layers layers() {
        return layers;
    }

    /** The configuration the broker was started with ({@code server.properties}). */
    public BrokerConfig staticConfig() {
        return staticConfig;
    }

    /** Where {@code key}'s value comes from now: a dynamic level, else the properties file (or the default). */
    public ConfigSource sourceOf(String key) {
        Layers l = layers;
        if (l.perBroker().containsKey(key)) {
            return ConfigSource.DYNAMIC_BROKER_CONFIG;
        }
        return l.clusterDefault().containsKey(key) ? ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
                : ConfigSource.STATIC_BROKER_CONFIG;
    }

    /**
     * A part that takes configs live, registered once it exists; it was built with the configs in force at
     * {@link #start}, so a change that arrived while the broker was starting is applied to it now.
     */
    public void register(BrokerReconfigurable reconfigurable) {
        reconfigurables.add(reconfigurable);
        BrokerConfig builtWith = startedWith;
        reconfigureThread.execute(() -> {
            BrokerConfig now = current;
            List<String> changed = changedKeys(builtWith, now, reconfigurable);
            if (!changed.isEmpty()) {
                try {
                    reconfigurable.reconfigure(builtWith, now);
                    log.info("Dynamic broker configs {} that changed during start-up applied to the {}", changed,
                            reconfigurable.name());
                } catch (Exception e) {
                    // broad: a component's reconfigure may throw anything; it keeps its settings, the others apply
                    log.error("Dynamic broker configs {} could not be applied to the {}; it keeps its previous "
                            + "settings", changed, reconfigurable.name(), e);
                }
            }
        });
    }

    private void onNode(String path) {
        String entity = path.substring(path.lastIndexOf('/') + 1);
        boolean own = entity.equals(Integer.toString(brokerId));
        if (!own && !entity.equals(ZkPaths.DEFAULT_ENTITY)) {
            return; // another broker's configs, or the parent
        }
        Optional<ChildData> defaultNode = cache.get(ZkPaths.brokerConfig(ZkPaths.DEFAULT_ENTITY));
        Optional<ChildData> ownNode = cache.get(ZkPaths.brokerConfig(Integer.toString(brokerId)));
        Layers next = new Layers(readable(defaultNode, false), readable(ownNode, true));
        BrokerConfig nextConfig;
        try {
            nextConfig = effective(next);
        } catch (ConfigException e) {
            log.error("Dynamic broker configs {} cannot be combined with server.properties ({}); keeping {}",
                    masked(next.perBroker()), e.getMessage(), masked(layers.perBroker()));
            return;
        }
        boolean ownRewritten;
        synchronized (this) {
            long ownMzxid = ownNode.map(d -> d.getStat().getMzxid()).orElse(-1L);
            ownRewritten = own && ownMzxid != ownZxid;
            defaultZxid = defaultNode.map(d -> d.getStat().getMzxid()).orElse(-1L);
            ownZxid = ownMzxid;
            layers = next;
            current = nextConfig;
            notifyAll();
        }
        log.info("Dynamic broker configs now: cluster default {}, broker {} {}", masked(next.clusterDefault()),
                brokerId, masked(next.perBroker()));
        boolean reloadFiles = ownRewritten;
        reconfigureThread.execute(() -> apply(nextConfig, reloadFiles));
    }

    /** The node's entries this broker can use; the others are left out with one ERROR. */
    private Map<String, String> readable(Optional<ChildData> node, boolean perBroker) {
        if (node.isEmpty()) {
            return Map.of();
        }
        Map<String, String> stored = EntityConfigNode.config(node.get().getData(), node.get().getPath());
        Map<String, String> out = new TreeMap<>();
        List<String> dropped = new ArrayList<>();
        stored.forEach((key, value) -> {
            try {
                String plain = DynamicBrokerConfigPolicy.isPassword(key) ? decrypt(value) : value;
                DynamicBrokerConfigPolicy.validate(Map.of(key, plain), perBroker, true);
                out.put(key, plain);
            } catch (RuntimeException e) {
                // broad on purpose: a refusal (InvalidRequestException) or a secret that does not decrypt (the
                // codec's runtime errors) both mean this entry is unusable; each is named in the ERROR below
                dropped.add(key + " (" + e + ")");
                log.debug("Stored dynamic broker config {} is unusable", key, e); // the ERROR below names it
            }
        });
        if (!dropped.isEmpty()) {
            log.error("Ignoring dynamic broker configs stored at {} that this broker cannot use: {}",
                    node.get().getPath(), dropped);
        }
        return out;
    }

    private String decrypt(String value) {
        if (secrets.isEmpty()) {
            throw new IllegalStateException("password.encoder.secret is not set, the value cannot be decrypted");
        }
        return secrets.get().decrypt(value);
    }

    /** server.properties with the cluster default over it, and the broker's own over both (Kafka's synonym rule). */
    BrokerConfig effective(Layers l) {
        Map<String, String> merged = new LinkedHashMap<>(staticConfig.originals());
        overlay(merged, l.clusterDefault());
        overlay(merged, l.perBroker());
        return new BrokerConfig(merged);
    }

    private static void overlay(Map<String, String> below, Map<String, String> above) {
        above.keySet().forEach(k -> DynamicBrokerConfig.brokerConfigSynonyms(k, false).forEach(below::remove));
        below.putAll(above);
    }

    /** Applies {@code next} to every part whose configs changed since it last applied; reconfigure thread only. */
    private void apply(BrokerConfig next, boolean reloadFiles) {
        if (next != current) {
            return; // a newer change is queued behind this one: it is the one to apply
        }
        BrokerConfig previous = applied;
        for (BrokerReconfigurable part : reconfigurables) {
            List<String> changed = changedKeys(previous, next, part);
            if (changed.isEmpty() && !(reloadFiles && part.reloadsFiles())) {
                continue;
            }
            try {
                part.reconfigure(previous, next);
                log.info("Dynamic broker configs {} applied to the {}", changed, part.name());
            } catch (Exception e) {
                // broad: a component's reconfigure may throw anything; it keeps its settings, the others apply
                log.error("Dynamic broker configs {} could not be applied to the {}; it keeps its previous settings",
                        changed, part.name(), e);
            }
        }
        applied = next;
    }

    private static List<String> changedKeys(BrokerConfig previous, BrokerConfig next, BrokerReconfigurable part) {
        Set<String> keys = new TreeSet<>(previous.originals().keySet());
        keys.addAll(next.originals().keySet());
        List<String> out = new ArrayList<>();
        for (String key : keys) {
            if (part.reconfigures(key) && !Objects.equals(previous.originals().get(key),
                    next.originals().get(key))) {
                out.add(key);
            }
        }
        return out;
    }

    /**
     * Changes the dynamic configs of {@code entity} ({@code <default>} or this broker's id): {@code change} is applied
     * to what ZooKeeper holds, the result validated as a whole (Kafka's rules, Twinlog's live keys, and each part's own
     * check against this broker's state), written compare-and-set (again after a concurrent change), and waited for
     * until this broker shows it. Blocks on ZooKeeper: admin threads only.
     *
     * @throws InvalidRequestException with the reason, writing nothing
     */
    public void alter(String entity, UnaryOperator<Map<String, String>> change, boolean validateOnly)
            throws Exception {
        boolean perBroker = !entity.equals(ZkPaths.DEFAULT_ENTITY);
        String path = ZkPaths.brokerConfig(entity);
        while (true) {
            Stat stat = new Stat();
            Map<String, String> stored = new LinkedHashMap<>();
            boolean exists = true;
            try {
                stored.putAll(EntityConfigNode.config(zk.getData().storingStatIn(stat).forPath(path), path));
            } catch (KeeperException.NoNodeException e) {
                exists = false;
            }
            Map<String, String> plain = new LinkedHashMap<>();
            stored.forEach((k, v) -> {
                try {
                    plain.put(k, DynamicBrokerConfigPolicy.isPassword(k) ? decrypt(v) : v);
                } catch (RuntimeException e) {
                    // broad on purpose (the codec's runtime errors): an undecryptable secret is dropped here as on
                    // read, and setting it again replaces it
                    log.warn("Dropping the stored value of {} at {}: it does not decrypt", k, path, e);
                }
            });
            Map<String, String> next = new TreeMap<>(change.apply(new LinkedHashMap<>(plain)));
            if (next.equals(new TreeMap<>(plain)) && !(perBroker && exists)) {
                // nothing to write (a delete of a key that is not set, as kafka-reassign-partitions --verify sends);
                // a broker's own node is written again even so: a keystore replaced in place is reloaded that way
                return;
            }
            DynamicBrokerConfigPolicy.validate(next, perBroker, secrets.isPresent());
            validateParts(entity, next);
            if (validateOnly) {
                return;
            }
            Map<String, String> toStore = new TreeMap<>();
            next.forEach((k, v) -> toStore.put(k, DynamicBrokerConfigPolicy.isPassword(k)
                    ? secrets.orElseThrow().encrypt(v) : v));
            try {
                Stat written;
                if (next.isEmpty()) {
                    // nothing left: the node goes, as Kafka's ZooKeeper brokers left no empty config node
                    zk.delete().withVersion(stat.getVersion()).forPath(path);
                    written = null;
                } else if (!exists) {
                    zk.create().creatingParentsIfNeeded().forPath(path, EntityConfigNode.encode(toStore));
                    written = zk.checkExists().forPath(path);
                } else {
                    // written even when unchanged for this broker: a keystore replaced in place is reloaded so
                    written = zk.setData().withVersion(stat.getVersion()).forPath(path, EntityConfigNode.encode(toStore));
                }
                if (written != null) {
                    awaitRead(perBroker, written.getMzxid());
                } else {
                    awaitGone(perBroker);
                }
                log.info("Dynamic broker configs of {} set to {}", perBroker ? "broker " + entity : "the cluster default",
                        masked(next));
                return;
            } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException
                     | KeeperException.NoNodeException e) {
                log.debug("Dynamic broker configs at {} changed concurrently; reading them again", path);
            }
        }
    }

    /** Each part's own check of the configs this broker would have with {@code next} at {@code entity}. */
    private void validateParts(String entity, Map<String, String> next) {
        Layers l = layers;
        Layers candidate = entity.equals(ZkPaths.DEFAULT_ENTITY) ? new Layers(next, l.perBroker())
                : new Layers(l.clusterDefault(), next);
        BrokerConfig now = current;
        BrokerConfig then;
        try {
            then = effective(candidate);
        } catch (ConfigException e) {
            throw new InvalidRequestException(e.getMessage());
        }
        for (BrokerReconfigurable part : reconfigurables) {
            if (changedKeys(now, then, part).isEmpty()) {
                continue;
            }
            try {
                part.validateReconfiguration(now, then);
            } catch (ConfigException e) {
                // Kafka's wording for a part's refusal (ConfigException's name-and-value form)
                throw new InvalidRequestException(new ConfigException("Invalid dynamic configuration", e)
                        .getMessage());
            }
        }
    }

    private synchronized void awaitRead(boolean perBroker, long mzxid) throws InterruptedException {
        if (!MonitorWaits.await(this, () -> (perBroker ? ownZxid : defaultZxid) >= mzxid,
                MonitorWaits.deadlineAfter(APPLY_TIMEOUT_MS))) {
            throw new TimeoutException("The dynamic broker configs were written to ZooKeeper but this broker has "
                    + "not read them back yet");
        }
    }

    private synchronized void awaitGone(boolean perBroker) throws InterruptedException {
        if (!MonitorWaits.await(this, () -> (perBroker ? ownZxid : defaultZxid) == -1,
                MonitorWaits.deadlineAfter(APPLY_TIMEOUT_MS))) {
            throw new TimeoutException("The dynamic broker configs were removed from ZooKeeper but this broker "
                    + "has not seen it yet");
        }
    }

    /** Secrets shown as such in the logs. */
    private static Map<String, String> masked(Map<String, String> configs) {
        Map<String, String> out = new TreeMap<>();
        configs.forEach((k, v) -> out.put(k, DynamicBrokerConfigPolicy.isPassword(k) ? "[hidden]" : v));
        return out;
    }

    @Override
    public void close() {
        cache.close();
        reconfigureThread.shutdownNow();
    }
}
