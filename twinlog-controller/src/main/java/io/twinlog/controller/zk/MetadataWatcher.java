package io.twinlog.controller.zk;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicAssignment;
import io.twinlog.controller.metadata.TopicImage;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Predicate;

/**
 * Keeps this broker's {@link MetadataImage} in step with ZooKeeper.
 *
 * <p>Curator caches watch {@code /brokers} and {@code /config/topics}; any change schedules one rebuild of the whole
 * image on a single event thread (changes arriving during a rebuild coalesce into the next one). Listeners run on
 * that thread, in order, with the previous and the new image, so a listener sees every image transition exactly
 * once and never concurrently.
 */
public final class MetadataWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MetadataWatcher.class);

    private final CuratorFramework zk;
    private final String clusterId;
    private final CuratorCache brokersCache;
    private final CuratorCache configsCache;
    private final CuratorCache controllerCache;
    private final CuratorCache mirrorsCache;
    private final CuratorCache mirrorStatesCache;
    private final ExecutorService eventThread;
    private final AtomicBoolean rebuildPending = new AtomicBoolean();
    private final List<BiConsumer<MetadataImage, MetadataImage>> listeners = new CopyOnWriteArrayList<>();
    private volatile MetadataImage image = MetadataImage.EMPTY;
    private final Object versionLock = new Object();
    private long version;
    private MetadataImage appliedImage = MetadataImage.EMPTY; // guarded by versionLock
    /** Asynchronous waits for an applied image (see {@link #whenApplied}); guarded by versionLock. */
    private final List<PendingWait> pendingWaits = new ArrayList<>();

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
        this.eventThread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "twinlog-metadata-" + brokerId);
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts watching and returns once the first complete image is built. */
    public void start() throws InterruptedException {
        CountDownLatch brokersReady = new CountDownLatch(1);
        CountDownLatch configsReady = new CountDownLatch(1);
        brokersCache.listenable().addListener(new org.apache.curator.framework.recipes.cache.CuratorCacheListener() {
            @Override
            public void event(Type type, ChildData oldData, ChildData data) {
                scheduleRebuild();
            }

            @Override
            public void initialized() {
                brokersReady.countDown();
            }
        });
        configsCache.listenable().addListener(new org.apache.curator.framework.recipes.cache.CuratorCacheListener() {
            @Override
            public void event(Type type, ChildData oldData, ChildData data) {
                scheduleRebuild();
            }

            @Override
            public void initialized() {
                configsReady.countDown();
            }
        });
        controllerCache.listenable().addListener((type, oldData, data) -> scheduleRebuild());
        controllerCache.start();
        mirrorsCache.listenable().addListener((type, oldData, data) -> scheduleRebuild());
        mirrorsCache.start();
        mirrorStatesCache.listenable().addListener((type, oldData, data) -> scheduleRebuild());
        mirrorStatesCache.start();
        brokersCache.start();
        configsCache.start();
        if (!brokersReady.await(30, TimeUnit.SECONDS) || !configsReady.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("Timed out loading metadata from ZooKeeper");
        }
        scheduleRebuild();
        awaitImageVersion(1, 30_000);
    }

    public MetadataImage image() {
        return image;
    }

    /** Listeners are called on the metadata thread with (previous image, new image). */
    public void addListener(BiConsumer<MetadataImage, MetadataImage> listener) {
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

    private void scheduleRebuild() {
        if (rebuildPending.compareAndSet(false, true)) {
            try {
                eventThread.execute(this::rebuild);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // shutting down
            }
        }
    }

    private void rebuild() {
        rebuildPending.set(false);
        MetadataImage previous = image;
        MetadataImage next;
        try {
            next = build();
        } catch (RuntimeException e) {
            log.error("Could not build the metadata image from ZooKeeper; keeping the previous one", e);
            return;
        }
        image = next;
        for (BiConsumer<MetadataImage, MetadataImage> l : listeners) {
            try {
                l.accept(previous, next);
            } catch (RuntimeException e) {
                log.error("Metadata listener failed", e);
            }
        }
        List<PendingWait> satisfied = new ArrayList<>();
        synchronized (versionLock) {
            appliedImage = next;
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

    private MetadataImage build() {
        Map<Integer, BrokerRegistration> brokers = new TreeMap<>();
        Map<String, TopicAssignment> assignments = new HashMap<>();
        Map<String, Integer> assignmentVersions = new HashMap<>();
        Map<String, Map<Integer, PartitionState>> states = new HashMap<>();
        Map<String, Map<Integer, Integer>> stateVersions = new HashMap<>();
        brokersCache.stream().forEach(cd -> {
            String path = cd.getPath();
            String[] parts = path.split("/");
            // /brokers/ids/<id>
            if (parts.length == 4 && "ids".equals(parts[2]) && cd.getData() != null) {
                int id = Integer.parseInt(parts[3]);
                long epoch = cd.getStat() == null ? -1L : cd.getStat().getCzxid();
                brokers.put(id, BrokerRegistration.fromJson(id, epoch, cd.getData(), path));
            } else if (parts.length == 4 && "topics".equals(parts[2]) && cd.getData() != null
                    && cd.getData().length > 0) {
                assignments.put(parts[3], TopicAssignment.fromJson(cd.getData(), path));
                assignmentVersions.put(parts[3], cd.getStat() == null ? -1 : cd.getStat().getVersion());
            } else if (parts.length == 7 && "topics".equals(parts[2]) && "state".equals(parts[6])
                    && cd.getData() != null && cd.getData().length > 0) {
                states.computeIfAbsent(parts[3], t -> new HashMap<>())
                        .put(Integer.parseInt(parts[5]), PartitionState.fromJson(cd.getData(), path));
                stateVersions.computeIfAbsent(parts[3], t -> new HashMap<>())
                        .put(Integer.parseInt(parts[5]), cd.getStat() == null ? -1 : cd.getStat().getVersion());
            }
        });
        Map<String, TopicImage> topics = new HashMap<>();
        assignments.forEach((topic, assignment) -> {
            SortedMap<Integer, PartitionImage> partitions = new TreeMap<>();
            Map<Integer, PartitionState> topicStates = states.getOrDefault(topic, Map.of());
            Map<Integer, Integer> versions = stateVersions.getOrDefault(topic, Map.of());
            assignment.replicas().forEach((p, replicas) -> partitions.put(p,
                    new PartitionImage(p, replicas, topicStates.get(p), versions.getOrDefault(p, -1))));
            topics.put(topic, new TopicImage(topic, assignment.topicId(),
                    java.util.Collections.unmodifiableSortedMap(partitions), assignment.reassigning(),
                    assignmentVersions.getOrDefault(topic, -1)));
        });
        Map<String, Map<String, String>> configs = new HashMap<>();
        configsCache.stream().forEach(cd -> {
            String[] parts = cd.getPath().split("/");
            if (parts.length == 4 && cd.getData() != null && cd.getData().length > 0) {
                Map<String, Object> json = Json.decode(cd.getData(), cd.getPath());
                Map<String, String> c = new HashMap<>();
                @SuppressWarnings("unchecked")
                Map<String, Object> raw = (Map<String, Object>) json.getOrDefault("config", Map.of());
                raw.forEach((k, v) -> c.put(k, String.valueOf(v)));
                configs.put(parts[3], Map.copyOf(c));
            }
        });
        int controllerId = controllerCache.stream().filter(cd -> cd.getPath().equals(ZkPaths.CONTROLLER)
                && cd.getData() != null && cd.getData().length > 0)
                .map(cd -> ((Number) Json.decode(cd.getData(), ZkPaths.CONTROLLER).get("brokerId")).intValue())
                .findFirst().orElse(-1);
        return new MetadataImage(clusterId, brokers, topics, configs, controllerId, buildMirrorImage());
    }

    /** A state written by another version, or by hand, that this one does not know: logged, read as the fallback. */
    private static <E extends Enum<E>> E decode(Class<E> type, Object value, E fallback, String path) {
        if (value == null) {
            return fallback;
        }
        try {
            return Enum.valueOf(type, value.toString());
        } catch (IllegalArgumentException e) {
            log.warn("Unknown {} '{}' in {}; read as {}", type.getSimpleName(), value, path, fallback);
            return fallback;
        }
    }

    private MirrorImage buildMirrorImage() {
        Map<String, MirrorImage.MirrorTopic> mirrorTopics = new HashMap<>();
        mirrorsCache.stream().forEach(cd -> {
            // /mirrors/<mirror>/topics/<topic>
            String[] parts = cd.getPath().split("/");
            if (parts.length == 5 && "topics".equals(parts[3]) && cd.getData() != null && cd.getData().length > 0) {
                Map<String, Object> json = Json.decode(cd.getData(), cd.getPath());
                mirrorTopics.put(parts[4], new MirrorImage.MirrorTopic(parts[2], decode(DesiredMirrorState.class,
                        json.getOrDefault("desiredState", "MIRRORING"), DesiredMirrorState.MIRRORING, cd.getPath())));
            }
        });
        Map<org.apache.kafka.common.TopicPartition, MirrorImage.MirrorPartition> mirrorPartitions = new HashMap<>();
        mirrorStatesCache.stream().forEach(cd -> {
            // /mirror_states/<topic>/<partition>
            String[] parts = cd.getPath().split("/");
            if (parts.length == 4 && cd.getData() != null && cd.getData().length > 0) {
                Map<String, Object> json = Json.decode(cd.getData(), cd.getPath());
                Object min = json.get("minLeaderEpoch");
                mirrorPartitions.put(new org.apache.kafka.common.TopicPartition(parts[2], Integer.parseInt(parts[3])),
                        new MirrorImage.MirrorPartition(decode(MirrorPartitionState.class, json.get("state"),
                                MirrorPartitionState.UNKNOWN, cd.getPath()),
                                min == null ? -1 : ((Number) min).intValue(), json,
                                cd.getStat() == null ? -1 : cd.getStat().getVersion()));
            }
        });
        return new MirrorImage(mirrorTopics, mirrorPartitions);
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
