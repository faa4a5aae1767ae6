package io.twinlog.controller.zk;

import io.twinlog.common.tasks.BackgroundTask;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataDelta;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MetadataListener;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * Keeps this broker's {@link MetadataImage} in step with ZooKeeper.
 *
 * <p>Curator caches watch {@code /brokers}, {@code /config/topics}, {@code /controller}, {@code /mirrors},
 * {@code /mirror_states}, {@code /mirror_truncations}, {@code /admin/delete_topics} and {@code /feature}; a change
 * records which node changed and schedules one rebuild on a single event thread (changes arriving during a rebuild
 * coalesce into the next one). A rebuild decodes only the changed nodes and
 * re-assembles only the topics they belong to ({@link IncrementalImageBuilder}); what changed
 * ({@link MetadataDelta}) is computed once per image and handed to every listener. Listeners run on
 * that thread, in order, with the previous and the new image, so a listener sees every image transition exactly
 * once and never concurrently.
 */
public final class MetadataWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MetadataWatcher.class);
    private static final long RESYNC_MS = 2_000;
    /** The periodic resync, guarded: whatever it throws, the next one runs (decision 63). */
    private final BackgroundTask resyncTask = new BackgroundTask("metadata-resync", RESYNC_MS, Time.SYSTEM, log,
            this::resync);
    private static final long DELETED = -1L;

    private final CuratorFramework zk;
    private final String clusterId;
    private final CuratorCache brokersCache;
    private final CuratorCache configsCache;
    private final CuratorCache controllerCache;
    private final CuratorCache mirrorsCache;
    private final CuratorCache mirrorStatesCache;
    private final CuratorCache mirrorTruncationsCache;
    private final CuratorCache featureCache;
    /** Topic deletion marks: a topic gone without one was not deleted, and its logs stay (decision 72). */
    private final CuratorCache deletionsCache;
    private final ScheduledExecutorService eventThread;
    private final AtomicBoolean rebuildPending = new AtomicBoolean();
    /** Nodes changed since the last rebuild, with the cache that holds them; drained by the metadata thread. */
    private final ConcurrentHashMap<String, CuratorCache> changedNodes = new ConcurrentHashMap<>();
    private final IncrementalImageBuilder builder;
    /**
     * The last-modified zxid of every node the builder holds, and its cache; touched only by the metadata thread.
     * The resync compares them with the caches: Curator's caches do not always notify a change made while this
     * broker's session was lost (seen: the controller node of a broker cut off from ZooKeeper), and an incremental
     * builder that missed one would keep the old value forever.
     */
    private final Map<String, Long> appliedZxids = new HashMap<>();
    private final Map<String, CuratorCache> appliedCaches = new HashMap<>();
    /** The nodes the last build decoded, with their mzxid ({@link #DELETED} if gone); metadata thread only. */
    private Map<String, Long> builtZxids = new HashMap<>();
    /**
     * The mzxid of every node as of the image the listeners have applied (published with it, under versionLock),
     * for {@link #shows}: a writer waits for its own write by zxid, which a later write of the same node supersedes.
     */
    private final Map<String, Long> shownZxids = new ConcurrentHashMap<>();
    /** Differences the last resync saw (node → its cached mzxid, or {@link #DELETED}); metadata thread only. */
    private Map<String, Long> suspects = Map.of();
    private final List<MetadataListener> listeners = new CopyOnWriteArrayList<>();
    private volatile MetadataImage image = MetadataImage.EMPTY;
    private final Object versionLock = new Object();
    private long version;
    private MetadataImage appliedImage = MetadataImage.EMPTY; // guarded by versionLock
    /** Asynchronous waits for an applied image (see {@link #whenApplied}); guarded by versionLock. */
    private final List<PendingWait> pendingWaits = new ArrayList<>();
    /** Written only by the metadata thread; read by anyone (benchmarks, tests). */
    private final AtomicLong rebuilds = new AtomicLong();
    private final AtomicLong rebuildNanos = new AtomicLong();
    private final AtomicLong listenerNanos = new AtomicLong();
    private final AtomicLong nodesDecoded = new AtomicLong();

    /**
     * What the metadata thread has done since start: images rebuilt, time spent building them from the ZooKeeper
     * caches (and how many ZooKeeper nodes it decoded for that) and time spent in the listeners applying them.
     * Cheap to read; the scale benchmark samples it.
     */
    public record RebuildStats(long rebuilds, long rebuildNanos, long listenerNanos, long nodesDecoded) {
    }

    public RebuildStats rebuildStats() {
        return new RebuildStats(rebuilds.get(), rebuildNanos.get(), listenerNanos.get(), nodesDecoded.get());
    }

    private record PendingWait(Predicate<MetadataImage> condition, CompletableFuture<MetadataImage> future) {
    }

    public MetadataWatcher(CuratorFramework zk, String clusterId, int brokerId) {
        this.zk = zk;
        this.clusterId = clusterId;
        this.brokersCache = CuratorCache.build(zk, ZkPaths.BROKERS);
        this.configsCache = CuratorCache.build(zk, ZkPaths.TOPIC_CONFIGS);
        this.controllerCache = CuratorCache.build(zk, ZkPaths.CONTROLLER);
        this.mirrorsCache = CuratorCache.build(zk, ZkPaths.MIRRORS);
        this.mirrorStatesCache = CuratorCache.build(zk, ZkPaths.MIRROR_STATES);
        this.mirrorTruncationsCache = CuratorCache.build(zk, ZkPaths.MIRROR_TRUNCATIONS);
        this.deletionsCache = CuratorCache.build(zk, ZkPaths.DELETE_TOPICS);
        this.featureCache = CuratorCache.build(zk, ZkPaths.FEATURE);
        this.builder = new IncrementalImageBuilder(clusterId);
        this.eventThread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "twinlog-metadata-" + brokerId);
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts watching and returns once the first complete image is built. */
    public void start() throws InterruptedException {
        CountDownLatch brokersReady = listenUntilLoaded(brokersCache);
        CountDownLatch configsReady = listenUntilLoaded(configsCache);
        controllerCache.listenable().addListener((type, oldData, data) -> onNodeChanged(controllerCache, oldData, data));
        controllerCache.start();
        mirrorsCache.listenable().addListener((type, oldData, data) -> onNodeChanged(mirrorsCache, oldData, data));
        mirrorsCache.start();
        mirrorStatesCache.listenable().addListener((type, oldData, data) ->
                onNodeChanged(mirrorStatesCache, oldData, data));
        mirrorStatesCache.start();
        mirrorTruncationsCache.listenable().addListener((type, oldData, data) ->
                onNodeChanged(mirrorTruncationsCache, oldData, data));
        mirrorTruncationsCache.start();
        // before the topics: a deletion's mark is written before the topic goes, so it is known by then
        CountDownLatch deletionsReady = listenUntilLoaded(deletionsCache);
        deletionsCache.start();
        if (!deletionsReady.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("Timed out loading the topic deletion marks from ZooKeeper");
        }
        // the first image already carries the finalized features, so no client sees the defaults first
        CountDownLatch featureReady = listenUntilLoaded(featureCache);
        featureCache.start();
        brokersCache.start();
        configsCache.start();
        if (!brokersReady.await(30, TimeUnit.SECONDS) || !configsReady.await(30, TimeUnit.SECONDS)
                || !featureReady.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("Timed out loading metadata from ZooKeeper");
        }
        scheduleRebuild();
        awaitImageVersion(1, 30_000);
        eventThread.scheduleWithFixedDelay(resyncTask, RESYNC_MS, RESYNC_MS, TimeUnit.MILLISECONDS);
    }

    /** Feeds the cache's changes to the builder; the latch opens once the cache has loaded what is there. */
    private CountDownLatch listenUntilLoaded(CuratorCache cache) {
        CountDownLatch loaded = new CountDownLatch(1);
        cache.listenable().addListener(new CuratorCacheListener() {
            @Override
            public void event(Type type, ChildData oldData, ChildData data) {
                onNodeChanged(cache, oldData, data);
            }

            @Override
            public void initialized() {
                loaded.countDown();
            }
        });
        return loaded;
    }

    public MetadataImage image() {
        return image;
    }

    /** The periodic resync's health, for the broker's metrics. */
    public BackgroundTask resyncTask() {
        return resyncTask;
    }

    /** Listeners are called on the metadata thread with the previous image, the new one and what changed. */
    public void addListener(MetadataListener listener) {
        listeners.add(listener);
    }

    /**
     * Waits until an image satisfying {@code condition} has been built and every listener has applied it. Used
     * after this broker wrote to ZooKeeper: the caches see the write asynchronously, so "rebuild now" would not be
     * enough; waiting for the write's effect is.
     */
    public MetadataImage awaitApplied(String what, Predicate<MetadataImage> condition, long timeoutMs)
            throws InterruptedException {
        scheduleRebuild();
        long deadline = System.currentTimeMillis() + timeoutMs;
        synchronized (versionLock) {
            while (!condition.test(appliedImage)) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    throw new org.apache.kafka.common.errors.TimeoutException("Timed out after " + timeoutMs
                            + " ms waiting for the metadata image to show " + what);
                }
                versionLock.wait(left);
            }
            return appliedImage;
        }
    }

    /**
     * {@link #awaitApplied} without blocking: completes (on the metadata thread) with the first applied image that
     * satisfies {@code condition}, or exceptionally with Kafka's TimeoutException after {@code timeoutMs}. For
     * request handlers, which must not wait for ZooKeeper.
     */
    public CompletableFuture<MetadataImage> whenApplied(String what, Predicate<MetadataImage> condition,
                                                        long timeoutMs) {
        CompletableFuture<MetadataImage> future = new CompletableFuture<>();
        synchronized (versionLock) {
            if (condition.test(appliedImage)) {
                future.complete(appliedImage);
                return future;
            }
            pendingWaits.add(new PendingWait(condition, future));
        }
        scheduleRebuild();
        return future.orTimeout(timeoutMs, TimeUnit.MILLISECONDS).handle((image, error) -> {
            synchronized (versionLock) {
                pendingWaits.removeIf(w -> w.future() == future);
            }
            if (error instanceof java.util.concurrent.TimeoutException) {
                throw new org.apache.kafka.common.errors.TimeoutException("Timed out after " + timeoutMs
                        + " ms waiting for the metadata image to show " + what);
            }
            if (error != null) {
                throw error instanceof CompletionException c ? c : new CompletionException(error);
            }
            return image;
        });
    }

    /** Rebuilds the image now and waits until listeners have applied it (start-up). */
    public MetadataImage refresh(long timeoutMs) throws InterruptedException {
        long target;
        synchronized (versionLock) {
            target = version + 1;
        }
        scheduleRebuild();
        awaitImageVersion(target, timeoutMs);
        return image;
    }

    private void awaitImageVersion(long target, long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        synchronized (versionLock) {
            while (version < target) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    throw new IllegalStateException("Timed out waiting for the metadata image to refresh");
                }
                versionLock.wait(left);
            }
        }
    }

    /** On Curator's thread: remembers which node changed; the metadata thread reads its current content. */
    private void onNodeChanged(CuratorCache cache, ChildData oldData, ChildData data) {
        ChildData node = data != null ? data : oldData;
        if (node != null) {
            changedNodes.put(node.getPath(), cache);
        }
        scheduleRebuild();
    }

    private void scheduleRebuild() {
        if (rebuildPending.compareAndSet(false, true)) {
            try {
                eventThread.execute(this::rebuild);
            } catch (RejectedExecutionException e) {
                // shutting down
            }
        }
    }

    private void rebuild() {
        rebuildPending.set(false);
        MetadataImage previous = image;
        MetadataImage next;
        long buildStart = System.nanoTime();
        try {
            next = build(previous);
        } catch (RuntimeException e) {
            // broad: a build failure of any kind keeps the previous image rather than stop the watcher
            log.error("Could not build the metadata image from ZooKeeper; keeping the previous one", e);
            return;
        }
        long listenersStart = System.nanoTime();
        rebuilds.incrementAndGet();
        rebuildNanos.addAndGet(listenersStart - buildStart);
        image = next;
        MetadataDelta delta = builder.delta(previous, next);
        for (MetadataListener l : listeners) {
            try {
                l.onImage(previous, next, delta);
            } catch (RuntimeException e) {
                // broad: one listener's failure must not keep the image from the others
                log.error("Metadata listener failed", e);
            }
        }
        listenerNanos.addAndGet(System.nanoTime() - listenersStart);
        List<PendingWait> satisfied = new ArrayList<>();
        synchronized (versionLock) {
            appliedImage = next;
            builtZxids.forEach((path, zxid) -> {
                if (zxid == DELETED) {
                    shownZxids.remove(path);
                } else {
                    shownZxids.put(path, zxid);
                }
            });
            builtZxids = new HashMap<>();
            version++;
            versionLock.notifyAll();
            for (PendingWait w : pendingWaits) {
                if (w.condition().test(next)) {
                    satisfied.add(w);
                }
            }
            pendingWaits.removeAll(satisfied);
        }
        satisfied.forEach(w -> w.future().complete(next)); // outside the lock: completions run callers' code
    }

    /**
     * Decodes the nodes that changed since the last rebuild (their current content: a node that changed twice is
     * read once) and re-assembles only what they belong to. A node changed again after it was read here is queued
     * again with another rebuild, so nothing is lost.
     */
    private MetadataImage build(MetadataImage previous) {
        for (String path : changedNodes.keySet()) {
            CuratorCache cache = changedNodes.remove(path);
            if (cache != null) {
                Optional<ChildData> node = cache.get(path);
                builder.onNode(path, node);
                if (node.isPresent() && node.get().getStat() != null) {
                    appliedZxids.put(path, node.get().getStat().getMzxid());
                    appliedCaches.put(path, cache);
                    builtZxids.put(path, node.get().getStat().getMzxid());
                } else {
                    appliedZxids.remove(path);
                    appliedCaches.remove(path);
                    builtZxids.put(path, DELETED);
                }
            }
        }
        nodesDecoded.set(builder.nodesDecoded());
        return builder.build(previous);
    }

    /**
     * On the metadata thread, every {@value #RESYNC_MS} ms: queues every node whose cached version the builder has
     * not applied (changed or created without a notification) or that the cache no longer holds (deleted without
     * one), and rebuilds if there is any. Cheap: one comparison per node.
     */
    private void resync() {
        Map<String, Long> mismatched = new HashMap<>();
        Map<String, CuratorCache> owners = new HashMap<>();
        for (CuratorCache cache : List.of(brokersCache, configsCache, controllerCache, mirrorsCache,
                mirrorStatesCache, mirrorTruncationsCache, deletionsCache, featureCache)) {
            cache.stream().forEach(node -> {
                Long applied = appliedZxids.get(node.getPath());
                if (node.getStat() != null && (applied == null || applied != node.getStat().getMzxid())) {
                    mismatched.put(node.getPath(), node.getStat().getMzxid());
                    owners.put(node.getPath(), cache);
                }
            });
        }
        appliedCaches.forEach((path, cache) -> {
            if (cache.get(path).isEmpty()) {
                mismatched.put(path, DELETED);
                owners.put(path, cache);
            }
        });
        // a difference seen twice in a row, unchanged, was not notified; one seen once may be a notification on
        // its way (the next resync looks again)
        int missed = 0;
        for (Map.Entry<String, Long> e : mismatched.entrySet()) {
            if (e.getValue().equals(suspects.get(e.getKey()))
                    && changedNodes.putIfAbsent(e.getKey(), owners.get(e.getKey())) == null) {
                missed++;
            }
        }
        suspects = mismatched;
        if (missed > 0) {
            log.info("Metadata resync: {} ZooKeeper node changes were not notified by the caches (after a lost "
                    + "session?); applying them", missed);
            scheduleRebuild();
        }
    }

    /**
     * True once the image the listeners have applied holds node {@code path} as modified at {@code mzxid} or later
     * (a write of this broker, or a later one that replaced it). For conditions of {@link #awaitApplied} after a
     * write whose effect the image alone cannot tell apart from a concurrent writer's.
     */
    public boolean shows(String path, long mzxid) {
        Long shown = shownZxids.get(path);
        return shown != null && shown >= mzxid;
    }

    public Optional<BrokerRegistration> broker(int id) {
        return Optional.ofNullable(image.brokers().get(id));
    }

    @Override
    public void close() {
        brokersCache.close();
        configsCache.close();
        controllerCache.close();
        mirrorsCache.close();
        mirrorStatesCache.close();
        mirrorTruncationsCache.close();
        deletionsCache.close();
        featureCache.close();
        eventThread.shutdown();
        try {
            eventThread.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<PendingWait> left;
        synchronized (versionLock) {
            left = new ArrayList<>(pendingWaits);
            pendingWaits.clear();
        }
        left.forEach(w -> w.future().completeExceptionally(new IllegalStateException("The broker is shutting down")));
    }
}
