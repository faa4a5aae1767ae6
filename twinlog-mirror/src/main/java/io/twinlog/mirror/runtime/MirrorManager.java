package io.twinlog.mirror.runtime;

import io.twinlog.controller.metadata.MetadataDelta;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.mirror.partition.FailbackDecision;
import io.twinlog.mirror.partition.MirrorPartitionMachine;
import io.twinlog.mirror.partition.MirrorSettings;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

/**
 * Runs one {@link MirrorWorker} per mirror that has topics in the metadata image, on one thread for every mirror, and
 * hands them their events: it starts a worker when its mirror's first topic appears in an image and stops it when the
 * last one is gone; every half second (the tick), and after every image for the partitions it changed, it gives the
 * workers a pass over their partitions, writes what each decided, then runs the failover steps they queued. The
 * decisions themselves are pure and live in {@code twinlog-mirror}'s {@code partition} package
 * ({@link MirrorPartitionMachine}, {@link FailbackDecision}); the workers run their
 * actions.
 *
 * <p>Threading: one thread ({@code twinlog-mirror-manager-<broker>}) owns every worker and never waits on a peer:
 * each worker's calls that can run on its mirror's own threads ({@link MirrorCalls}) and come back as passes. Fetcher
 * reports and call outcomes are handed to this thread; a move of the high watermark of a partition in STOPPING,
 * reported on the thread that moved it, only queues a pass. A failover's log steps decided in a pass run side by
 * side on {@link FailoverBarriers}' threads at its end, for every worker's partitions together, while this thread
 * waits. Stopped fetchers are waited for on a closer thread, as a fetch from a blackholed source can hold them for a
 * request timeout (issue 25, point 3).
 */
public final class MirrorManager implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorManager.class);
    private static final long TICK_MS = 500;

    private final MirrorMetadata metadata;
    private final LocalPartitions partitions;
    private final MirrorMetrics metrics;
    private final ScheduledExecutorService thread;
    private final ThreadPoolExecutor fetcherCloser;
    private final FailoverBarriers barriers;
    private final MirrorWorkerServices services;
    /** One per mirror with topics in the image; changed on the manager thread, read by high watermark watchers. */
    private final Map<String, MirrorWorker> workers = new ConcurrentHashMap<>();
    /** Partitions a new image (or a high watermark move, or a call's outcome) changed, waiting for their pass. */
    private final Set<TopicPartition> pendingPasses = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean passQueued = new AtomicBoolean();
    private volatile boolean closed;

    /**
     * @param stateTimeoutMs how long a partition may wait for the controller's epoch bump (EPOCH_FENCING, STOPPING),
     *                       or for its source partition to have a leader, before it goes FAILED with the reason
     *                       (retried with backoff)
     */
    MirrorManager(int brokerId, MirrorRecords records, MirrorMetadata metadata, LocalPartitions partitions,
                  MirrorSource.Factory sources, MirrorPeer peer, MirrorMetrics metrics, long stateTimeoutMs,
                  Time time) {
        this.metadata = metadata;
        this.partitions = partitions;
        this.metrics = metrics;
        this.barriers = new FailoverBarriers(brokerId, time);
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "twinlog-mirror-manager-" + brokerId);
            t.setDaemon(true);
            return t;
        });
        // one thread while there is something to close, none otherwise (a broker that stops mirroring keeps none)
        this.fetcherCloser = new ThreadPoolExecutor(1, 1, 5, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "twinlog-mirror-fetcher-closer-" + brokerId);
            t.setDaemon(true);
            return t;
        });
        fetcherCloser.allowCoreThreadTimeOut(true);
        MirrorPartitionMachine machine = new MirrorPartitionMachine(MirrorSettings.defaults(stateTimeoutMs),
                new Random());
        this.services = new MirrorWorkerServices(brokerId, records, metadata, partitions, sources, peer, machine,
                metrics, barriers, fetcherCloser, time, this::submit, this::queuePasses, () -> closed);
    }

    public void start() {
        metadata.addListener((previous, next, delta) -> onImage(delta, next));
        partitions.watchHighWatermarks(tp -> {
            for (MirrorWorker worker : workers.values()) {
                if (worker.awaitsHighWatermark(tp)) {
                    queuePasses(Set.of(tp));
                    return;
                }
            }
        });
        thread.scheduleWithFixedDelay(metrics.backgroundTask("mirror-manager-tick", TICK_MS, log, this::tick),
                TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
    }

    /**
     * A new image gives a pass only to the mirror partitions it changed: their record, their topic's desired state,
     * or their leadership. Every write of a failover makes a new image, so a pass over every led partition per
     * image made failing over N partitions cost N² passes; the periodic tick still visits all of them (timers,
     * progress, definitions that changed).
     */
    private void onImage(MetadataDelta delta, MetadataImage next) {
        Set<TopicPartition> affected = new HashSet<>(delta.changedMirrorPartitions());
        Map<String, MirrorImage.MirrorTopic> mirrored = next.mirrors().topics();
        for (String topic : delta.changedMirrorTopics()) {
            next.topic(topic).ifPresent(t -> t.partitions().keySet()
                    .forEach(p -> affected.add(new TopicPartition(topic, p))));
        }
        for (TopicPartition tp : delta.changedPartitions()) {
            if (mirrored.containsKey(tp.topic())) {
                affected.add(tp);
            }
        }
        if (!affected.isEmpty()) {
            queuePasses(affected);
        }
    }

    /** Partitions for a pass: coalesced, so changes arriving while a pass is queued join it. */
    private void queuePasses(Set<TopicPartition> affected) {
        pendingPasses.addAll(affected);
        if (passQueued.compareAndSet(false, true)) {
            submit(() -> {
                passQueued.set(false);
                Set<TopicPartition> batch = new HashSet<>();
                for (Iterator<TopicPartition> it = pendingPasses.iterator(); it.hasNext(); ) {
                    batch.add(it.next());
                    it.remove();
                }
                if (!closed) {
                    passOver(metadata.image(), byTopic(batch));
                }
            });
        }
    }

    /** Runs {@code r} on the manager thread, unless closed. */
    private void submit(Runnable r) {
        if (!closed) {
            try {
                thread.execute(() -> {
                    try {
                        r.run();
                    } catch (Throwable e) { // broad: an Error too; logged with its trace, and the manager goes on
                        log.error("Mirror manager task failed", e);
                    }
                });
            } catch (RejectedExecutionException ignored) {
                // closing
            }
        }
    }

    /**
     * Workers are started for the mirrors with topics in the image and stopped for those without; every led mirror
     * partition gets a pass, the definitions are read again, and each worker does its housekeeping.
     */
    private void tick() {
        if (closed) {
            return;
        }
        MetadataImage image = metadata.image();
        Map<String, Collection<Integer>> all = new HashMap<>();
        for (String topic : image.mirrors().topics().keySet()) {
            image.topic(topic).ifPresent(t -> all.put(topic, t.partitions().keySet()));
        }
        Set<String> mirrors = image.mirrors().topics().values().stream().map(MirrorImage.MirrorTopic::mirror)
                .collect(Collectors.toSet());
        for (Iterator<Map.Entry<String, MirrorWorker>> it = workers.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, MirrorWorker> e = it.next();
            if (!mirrors.contains(e.getKey())) {
                log.debug("[Mirror {}] no topic of it is left in the metadata; its worker stops", e.getKey());
                e.getValue().stop();
                it.remove();
            }
        }
        workers.values().forEach(MirrorWorker::beginTick);
        passOver(image, all);
        Set<TopicPartition> led = new HashSet<>();
        for (MirrorWorker worker : workers.values()) {
            worker.handleTick(image);
            led.addAll(worker.ledPartitions());
        }
        metrics.retainPartitions(led);
        metrics.retainMirrors(mirrors);
    }

    private static Map<String, Collection<Integer>> byTopic(Collection<TopicPartition> partitions) {
        Map<String, Collection<Integer>> byTopic = new HashMap<>();
        partitions.forEach(tp -> byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition()));
        return byTopic;
    }

    /**
     * A pass over some mirror partitions, each handed to its mirror's worker (started if it has none yet): they
     * decide, then each worker writes its records, then the failover steps of all of them run.
     */
    private void passOver(MetadataImage image, Map<String, Collection<Integer>> partitionsByTopic) {
        Map<MirrorWorker, Set<TopicPartition>> written = Map.of();
        try {
            passWithoutWriting(image, partitionsByTopic);
        } finally {
            written = flushAll(); // every partition's records of this pass, together per mirror
            services.runFailoverSteps();
        }
        if (written.isEmpty() || closed) {
            return;
        }
        // a partition whose new record was just written decides again at once (its driver goes by its own write)
        // rather than when the image shows the write, one ZooKeeper round trip later: a failover appends its
        // barrier right after recording its last mirrored offset. Once only: the follow-up's writes wait for the
        // image like any other.
        MetadataImage now = metadata.image();
        try {
            written.forEach((worker, tps) -> worker.handlePass(now, byTopic(tps)));
        } finally {
            flushAll();
            services.runFailoverSteps();
        }
    }

    private void passWithoutWriting(MetadataImage image, Map<String, Collection<Integer>> partitionsByTopic) {
        Map<String, Map<String, Collection<Integer>>> byMirror = new LinkedHashMap<>();
        for (Map.Entry<String, Collection<Integer>> e : partitionsByTopic.entrySet()) {
            MirrorImage.MirrorTopic mt = image.mirrors().topics().get(e.getKey());
            if (mt != null && image.topic(e.getKey()).isPresent()) {
                byMirror.computeIfAbsent(mt.mirror(), m -> new HashMap<>()).put(e.getKey(), e.getValue());
            }
        }
        byMirror.forEach((mirror, topics) -> workers.computeIfAbsent(mirror, m -> new MirrorWorker(m, services))
                .handlePass(image, topics));
    }

    /** Each worker's records of the pass; the partitions whose state was written, by worker. */
    private Map<MirrorWorker, Set<TopicPartition>> flushAll() {
        Map<MirrorWorker, Set<TopicPartition>> written = new LinkedHashMap<>();
        for (MirrorWorker worker : List.copyOf(workers.values())) {
            Set<TopicPartition> tps = worker.flush();
            if (!tps.isEmpty()) {
                written.put(worker, tps);
            }
        }
        return written;
    }

    /** The mirrors with a worker now (the test's view). */
    Set<String> workerNames() {
        return Set.copyOf(workers.keySet());
    }

    @Override
    public void close() {
        closed = true;
        thread.shutdownNow();
        try {
            thread.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        barriers.close();
        workers.values().forEach(MirrorWorker::close);
        workers.clear();
        fetcherCloser.shutdown();
        try {
            fetcherCloser.awaitTermination(15, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
