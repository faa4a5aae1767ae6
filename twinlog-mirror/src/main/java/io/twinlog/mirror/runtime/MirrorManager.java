package io.twinlog.mirror.runtime;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.mirror.MirrorTopicConfigs;
import io.twinlog.common.progress.ProgressReporter;
import io.twinlog.controller.metadata.MetadataDelta;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.mirror.LastMirroredTruncation;
import io.twinlog.mirror.fetcher.MirrorFetchListener;
import io.twinlog.mirror.fetcher.MirrorFetchQuota;
import io.twinlog.mirror.fetcher.MirrorFetcher;
import io.twinlog.mirror.partition.FailbackDecision;
import io.twinlog.mirror.partition.MirrorAction;
import io.twinlog.mirror.partition.MirrorDecision;
import io.twinlog.mirror.partition.MirrorEvent;
import io.twinlog.mirror.partition.MirrorPartitionDriver;
import io.twinlog.mirror.partition.MirrorPartitionHost;
import io.twinlog.mirror.partition.MirrorPartitionMachine;
import io.twinlog.mirror.partition.MirrorSettings;
import io.twinlog.mirror.partition.PartitionView;
import io.twinlog.mirror.partition.PeerLookup;
import io.twinlog.mirror.partition.SourceProblem;
import io.twinlog.mirror.partition.VersionedRecord;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorProgress;
import io.twinlog.mirror.store.MirrorStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The shell around the mirror partition state machine ({@link MirrorPartitionMachine}) for the mirror partitions
 * this broker leads: it feeds each decision what it needs (the durable record, a view of the partition, the desired
 * state, the fetcher's reports), runs the actions it returns against the partition, the fetcher and the source, and
 * writes the record it returns to ZooKeeper (version-checked) — the decisions themselves are pure and live in
 * {@code twinlog-mirror}.
 *
 * <p>Threading: one thread for every mirror, which never waits on a mirror's peer. Every half second, and after
 * every metadata change, each led mirror partition gets a pass; fetcher callbacks are handed to this thread as
 * events. The calls that wait on a peer or a long copy — the last-mirrored lookup, the comparison with the peer's
 * log, the quarantine copy before a cut — run on the mirror's own thread ({@link MirrorCalls}, one per mirror with a
 * partition led here, closed once none is): the pass that needs one starts it and ends with the partition waiting;
 * its outcome comes back to this thread as an event that gives the partition a pass, in which the state machine
 * decides again and finds it ({@link PartitionCalls}: kept per partition on the leader epoch and record version it
 * was asked on, so a leadership change or a new record makes it stale). A cut is applied only in a pass that found
 * the quarantine copy of exactly that tail finished. So one mirror's slow or dead peer never delays another
 * mirror's passes (issue 25, point 3). A failover's log steps (aborts, barriers) decided in a pass run side by side
 * on {@link FailoverBarriers}' threads at its end, while this thread waits. Per-partition memory (the last record
 * written, the state machine's clocks, its calls, catch-up reporting) is one {@link MirrorPartitionContext},
 * created when this broker leads the partition and dropped when it stops, so a new leader starts from the durable
 * record alone.
 */
public final class MirrorManager implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorManager.class);
    /** A source end fetched longer ago than this, with the fetch since unanswered, is shown unknown (decision 80). */
    static final long SOURCE_END_STALE_MS = 10_000;
    private static final long TICK_MS = 500;
    private static final long CATCH_UP_REPORT_MIN_LAG = 10_000;

    private final int brokerId;
    private final MirrorStore store;
    private final MirrorStateWriter writer;
    private final MetadataWatcher metadata;
    private final LocalPartitions partitions;
    private final Time time;
    private final long stateTimeoutMs;
    private final MirrorPartitionMachine machine;
    private final ScheduledExecutorService thread;
    /**
     * Ends the fetchers nothing needs any more: their threads may be inside a fetch from a blackholed source for a
     * request timeout, which the manager's thread, every mirror's passes and failovers, must not wait for (issue 25,
     * point 3).
     */
    private final ExecutorService fetcherCloser;
    private final Map<String, MirrorFetcher> fetchers = new HashMap<>();
    /** The mirror partitions this broker leads; touched only by the manager thread. */
    private final Map<TopicPartition, MirrorPartitionContext> contexts = new HashMap<>();
    /** Written by the fetcher threads, read by the manager thread. */
    private final Map<TopicPartition, Long> sourceHighWatermarks = new ConcurrentHashMap<>();
    /**
     * Per mirror with a partition led here: the thread its peer lookups, comparisons and quarantine copies run on,
     * created at its first call and closed once this broker leads none of the mirror's partitions; manager thread
     * only.
     */
    private final MirrorCallRouter calls;
    private final MirrorFetchQuota.Windows quotaWindows;
    /** The mirror definitions as read at the last tick (a pass between ticks does not read ZooKeeper for them). */
    private final Map<String, MirrorDefinition> definitions = new HashMap<>();
    /**
     * Led partitions in STOPPING: each step left waits on the high watermark (reaching the log end before the last
     * mirrored offset is recorded; passing the barrier before the topic is writable), so its move gives them a pass
     * rather than the next tick.
     */
    private final Set<TopicPartition> awaitingHighWatermark = ConcurrentHashMap.newKeySet();
    /** Partitions a new image (or a high watermark move) changed, waiting for their pass. */
    private final Set<TopicPartition> pendingPasses = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean passQueued = new AtomicBoolean();
    /** Records decided in the current pass, written together at its end; manager thread only. */
    private final Map<TopicPartition, DeferredWrite> deferred = new LinkedHashMap<>();
    /** Failover steps decided in the current pass, run together after its records are written. */
    private final FailoverBarriers barriers;
    /** Where a leader's cut records go first (issue 12, point 5). */
    private final MirrorQuarantine quarantine;
    /** Partition states, lag, failovers and the other mirror metrics of this broker. */
    private final MirrorMetrics metrics;
    private volatile boolean closed;

    /** The manager's memory of one partition it leads. */
    private final class MirrorPartitionContext {
        private final MirrorPartitionDriver driver = new MirrorPartitionDriver(machine);
        /** Its calls off this thread (peer, comparison, quarantine), pending or answered. */
        private final PartitionCalls calls = new PartitionCalls();
        /** The mirror it was last passed under. */
        private String mirror;
        /** How far a backlog is copied, while one is (see {@link #maybeReportCatchUp}). */
        private ProgressReporter catchUp;
        /** A deferred write of the current pass was refused. */
        private boolean refused;
        /**
         * Failed over and meant to stay so (desired and recorded STOPPED): its mirror's fetcher is not kept for it,
         * and its pass is given no source problem (the machine ignores them once failing over).
         */
        private boolean failedOver;
        /**
         * The image's record of the partition last read, and what it parsed to: a pass reads the stored record for
         * every decision, and parsing each partition's JSON on every tick was most of the manager thread's CPU at
         * 10,000 partitions. The image replaces a partition's record object whenever the record changes.
         */
        private MirrorImage.MirrorPartition storedFrom;
        private MirrorPartitionRecord stored;
    }

    /**
     * @param stateTimeoutMs how long a partition may wait for the controller's epoch bump (EPOCH_FENCING, STOPPING),
     *                       or for its source partition to have a leader, before it goes FAILED with the reason
     *                       (retried with backoff)
     * @param quotaWindows   how each mirror's bandwidth cap is measured (Kafka's replication quota windows)
     */
    MirrorManager(int brokerId, MirrorStore store, CuratorFramework zk, MetadataWatcher metadata,
                  LocalPartitions partitions, MirrorQuarantine quarantine, MirrorMetrics metrics, long stateTimeoutMs,
                  MirrorFetchQuota.Windows quotaWindows, Time time) {
        this.quarantine = quarantine;
        this.quotaWindows = quotaWindows;
        this.metrics = metrics;
        this.brokerId = brokerId;
        this.stateTimeoutMs = stateTimeoutMs;
        this.store = store;
        this.writer = new MirrorStateWriter(zk);
        this.metadata = metadata;
        this.partitions = partitions;
        this.time = time;
        this.machine = new MirrorPartitionMachine(MirrorSettings.defaults(stateTimeoutMs), new Random());
        this.barriers = new FailoverBarriers(brokerId, time);
        this.calls = new MirrorCallRouter(mirror -> new MirrorCalls(brokerId, mirror, this::submit));
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "twinlog-mirror-manager-" + brokerId);
            t.setDaemon(true);
            return t;
        });
        // one thread while there is something to close, none otherwise (a broker that stops mirroring keeps none)
        ThreadPoolExecutor closer = new ThreadPoolExecutor(1, 1, 5, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> {
                    Thread t = new Thread(r, "twinlog-mirror-fetcher-closer-" + brokerId);
                    t.setDaemon(true);
                    return t;
                });
        closer.allowCoreThreadTimeOut(true);
        this.fetcherCloser = closer;
    }

    public void start() {
        metadata.addListener((previous, next, delta) -> onImage(delta, next));
        partitions.watchHighWatermarks(tp -> {
            if (awaitingHighWatermark.contains(tp)) {
                queuePasses(Set.of(tp));
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
                pass(batch);
            });
        }
    }

    private void submit(Runnable r) {
        if (!closed) {
            try {
                thread.execute(() -> {
                    try {
                        r.run();
                    } catch (Throwable e) { // an Error too: logged, and the manager goes on
                        log.error("Mirror manager task failed", e);
                    }
                });
            } catch (RejectedExecutionException ignored) {
                // closing
            }
        }
    }

    /** Every led mirror partition gets a pass; the mirror definitions are read again. */
    private void tick() {
        if (closed) {
            return;
        }
        definitions.clear();
        MetadataImage image = metadata.image();
        Map<String, Collection<Integer>> all = new HashMap<>();
        for (String topic : image.mirrors().topics().keySet()) {
            image.topic(topic).ifPresent(t -> all.put(topic, t.partitions().keySet()));
        }
        passOver(image, all);
        // a changed bandwidth cap applies live: no fetcher restarts for a mirror.* setting
        fetchers.forEach((name, fetcher) -> {
            MirrorDefinition def = definitions.get(name);
            if (def != null) {
                fetcher.updateReplicationQuota(def.replicationThrottledRate());
            }
        });
        // partitions no longer mirrored (topic deleted, mirror gone): nothing of them lingers, in the fetcher neither
        for (Map.Entry<TopicPartition, MirrorPartitionContext> e : List.copyOf(contexts.entrySet())) {
            if (!image.mirrors().topics().containsKey(e.getKey().topic())) {
                forget(e.getKey(), e.getValue().mirror);
            }
        }
        awaitingHighWatermark.removeIf(tp -> !contexts.containsKey(tp));
        sourceHighWatermarks.keySet().removeIf(tp -> !contexts.containsKey(tp));
        calls.closeIdle(contexts.values().stream().map(c -> c.mirror).collect(Collectors.toSet()));
        closeIdleFetchers();
        metrics.retainPartitions(contexts.keySet());
        metrics.retainMirrors(image.mirrors().topics().values().stream().map(MirrorImage.MirrorTopic::mirror)
                .collect(Collectors.toSet()));
    }

    /** A pass over some mirror partitions (those a new image changed). */
    private void pass(Set<TopicPartition> affected) {
        if (closed) {
            return;
        }
        Map<String, Collection<Integer>> byTopic = new HashMap<>();
        affected.forEach(tp -> byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition()));
        passOver(metadata.image(), byTopic);
    }

    private void passOver(MetadataImage image, Map<String, Collection<Integer>> partitionsByTopic) {
        Set<TopicPartition> written = Set.of();
        try {
            passOverDeferred(image, partitionsByTopic);
        } finally {
            written = flush(); // every partition's records of this pass, together
            runFailoverSteps();
        }
        if (written.isEmpty() || closed) {
            return;
        }
        // a partition whose new record was just written decides again at once (its driver goes by its own write)
        // rather than when the image shows the write, one ZooKeeper round trip later: a failover appends its
        // barrier right after recording its last mirrored offset. Once only: the follow-up's writes wait for the
        // image like any other.
        Map<String, Collection<Integer>> followUp = new HashMap<>();
        written.forEach(tp -> followUp.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition()));
        try {
            passOverDeferred(metadata.image(), followUp);
        } finally {
            flush();
            runFailoverSteps();
        }
    }

    /** The barriers (and aborts) this pass decided, after its records: see {@link FailoverBarriers}. */
    private void runFailoverSteps() {
        try {
            barriers.runQueued();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // closing
        }
    }

    private void passOverDeferred(MetadataImage image, Map<String, Collection<Integer>> partitionsByTopic) {
        for (Map.Entry<String, Collection<Integer>> e : partitionsByTopic.entrySet()) {
            String topic = e.getKey();
            MirrorImage.MirrorTopic mt = image.mirrors().topics().get(topic);
            if (mt == null || image.topic(topic).isEmpty()) {
                continue;
            }
            MirrorDefinition def = definitions.computeIfAbsent(mt.mirror(), this::definition);
            if (def == null) {
                definitions.remove(mt.mirror()); // not cached: read again at the next pass
                continue;
            }
            checkSourceClusterId(def);
            Uuid localTopicId = image.topic(topic).get().topicId();
            DesiredMirrorState desired = mt.desired();
            // only a partition to mirror needs the fetcher: a follower's broker, or a failed-over topic, starts none
            boolean needsSource = desired != DesiredMirrorState.STOPPED;
            for (Integer p : e.getValue()) {
                TopicPartition tp = new TopicPartition(topic, p);
                Optional<MirrorLocalPartition> partition = partitions.partition(tp);
                if (partition.isEmpty() || !partition.get().isLeader()) {
                    forget(tp, def.name());
                    continue;
                }
                try {
                    run(tp, partition.get(), def, desired, MirrorEvent.TICK,
                            needsSource ? fetcherFor(def).sourceProblem(topic, localTopicId) : Optional.empty(), true);
                } catch (WriteFirst ex) {
                    // its record goes with the others of this pass; the follow-up pass runs the action
                } catch (ConcurrentRecordChange ex) {
                    log.info("[Mirror {} {}] {}; deciding again at the next pass", def.name(), tp, ex.getMessage());
                } catch (FailoverStepsQueued ex) {
                    // its barrier is appended at the end of this pass; the pass after it goes on
                } catch (MirrorCallRouter.AwaitingCall ex) {
                    // its call's outcome gives it a pass
                } catch (Exception ex) {
                    log.warn("[Mirror {} {}] step failed; deciding again at the next pass", def.name(), tp, ex);
                }
            }
        }
    }

    /**
     * This broker no longer leads {@code tp} (or it is no longer mirrored): its fetch and every memory of it go. A
     * mirror's fetcher is not started for it; the tick closes one left with nothing to fetch.
     */
    private void forget(TopicPartition tp, String mirror) {
        contexts.remove(tp);
        awaitingHighWatermark.remove(tp);
        sourceHighWatermarks.remove(tp);
        metrics.removePartition(tp);
        existingFetcher(mirror).ifPresent(f -> f.removePartition(tp));
    }

    /**
     * Records the source's cluster ID at first contact if the mirror was created before the source was reachable,
     * and gives the recorded one to the fetcher, which adopts no other cluster's metadata (decision 68): an address
     * that answers for another cluster (a rebuilt source, a wrong DNS entry) is the partitions' source problem
     * (WRONG_CLUSTER, retriable) rather than a reason to fail the mirror for good, so mirroring resumes by itself once
     * the source cluster answers again. While it lasts the mirror's state reason says so too.
     */
    private void checkSourceClusterId(MirrorDefinition def) {
        Optional<MirrorFetcher> existing = existingFetcher(def.name());
        if (existing.isEmpty()) {
            return; // no partition this broker leads needs the source (decision 64): nothing was seen, none is made
        }
        MirrorFetcher fetcher = existing.get();
        fetcher.expectClusterId(def.sourceClusterId());
        Optional<String> seen = fetcher.sourceClusterId();
        if (def.sourceClusterId().isEmpty()) {
            if (seen.isEmpty()) {
                return;
            }
            try {
                if (store.update(def, def.withSourceClusterId(seen.get())
                        .withState(MirrorDefinition.State.ACTIVE, Optional.empty()))) {
                    log.info("[Mirror {}] recorded the source cluster ID {} at first contact", def.name(), seen.get());
                }
            } catch (Exception e) {
                log.warn("[Mirror {}] could not record the source cluster ID", def.name(), e);
            }
            return;
        }
        Optional<String> wrongCluster = fetcher.wrongClusterReason();
        boolean shown = def.stateReason().filter(r -> r.startsWith(MirrorFetcher.WRONG_CLUSTER_PREFIX)).isPresent();
        Optional<String> reason = wrongCluster.isPresent() ? wrongCluster : shown ? Optional.empty() : def.stateReason();
        if (def.state() == MirrorDefinition.State.ACTIVE && !reason.equals(def.stateReason())) {
            try {
                store.update(def, def.withState(MirrorDefinition.State.ACTIVE, reason));
            } catch (Exception e) {
                log.warn("[Mirror {}] could not record its state reason", def.name(), e);
            }
        }
    }

    private MirrorDefinition definition(String name) {
        try {
            return store.get(name).orElse(null);
        } catch (MirrorStore.UnreadableMirrorException e) {
            return null; // reported once by the store
        } catch (Exception e) {
            if (!closed) { // an interrupted read while the broker shuts down is expected
                log.warn("Could not read cluster mirror {}", name, e);
            }
            return null;
        }
    }

    /**
     * A long copy (a new mirror of a big topic, re-mirroring after a truncation) says how far it is: once a partition
     * is more than {@value #CATCH_UP_REPORT_MIN_LAG} records behind its source, a {@link ProgressReporter} logs the
     * percentage of the backlog copied, the rate and the time left at most every 30 s, and once that it caught up
     * (nothing for a backlog copied within 30 s). A partition leaving MIRRORING ends its report.
     */
    private void maybeReportCatchUp(TopicPartition tp, MirrorDefinition def, MirrorLocalPartition partition,
                                    MirrorPartitionContext ctx, MirrorPartitionState state) {
        if (state != MirrorPartitionState.MIRRORING) {
            if (ctx.catchUp != null) {
                ctx.catchUp.finish("interrupted in state " + state);
                ctx.catchUp = null;
            }
            return;
        }
        Long sourceHw = sourceHighWatermarks.get(tp);
        if (sourceHw == null) {
            return;
        }
        long end = partition.logEndOffset();
        long lag = Math.max(0, sourceHw - end);
        if (ctx.catchUp == null && lag > CATCH_UP_REPORT_MIN_LAG) {
            ctx.catchUp = new ProgressReporter(log, "[Mirror " + def.name() + " " + tp + "] catching up with the "
                    + "source from offset " + end, "records", time);
        }
        if (ctx.catchUp != null) {
            ctx.catchUp.update(end, sourceHw);
            if (lag == 0) {
                ctx.catchUp.finish("caught up with the source at offset " + end);
                ctx.catchUp = null;
            }
        }
    }

    /** The peer's last-mirrored records for one topic, or why they could not be had (a doubt: nothing is cut). */
    private record PeerAnswer(Map<Integer, LastMirroredTruncation.LastMirrored> records, IOException failure) {
    }

    /** On the mirror's thread: asks the peer about every partition of {@code topic}; an I/O failure is the answer. */
    private static PeerAnswer askPeer(MirrorDefinition def, String localClusterId, String topic,
                                      List<Integer> partitions) {
        try {
            return new PeerAnswer(PeerLastMirrored.lookup(def, localClusterId, topic, partitions), null);
        } catch (IOException e) {
            return new PeerAnswer(Map.of(), e);
        }
    }

    /** One pass of the state machine over a partition this broker leads (or a fetcher report about it). */
    private void run(TopicPartition tp, MirrorLocalPartition partition, MirrorDefinition def, DesiredMirrorState desired,
                     MirrorEvent event, Optional<SourceProblem> sourceProblem, boolean batched) throws Exception {
        MirrorPartitionContext ctx = contexts.computeIfAbsent(tp, k -> new MirrorPartitionContext());
        ctx.refused = false;
        ctx.mirror = def.name();
        Long sourceHw = sourceHighWatermarks.get(tp);
        boolean outOfDate = sourceHw != null && sourceEndOutOfDate(def.name(), tp);
        if (outOfDate) {
            sourceHw = MirrorProgress.UNKNOWN.sourceHighWatermark(); // describe's lag -1, not a figure from before
        }
        metrics.onSourceEndOutOfDate(tp, outOfDate); // and the lag gauges alike
        BrokerHost host = new BrokerHost(tp, ctx, partition, def, batched);
        try {
            ctx.driver.pass(host, desired, event, sourceProblem,
                    sourceHw == null ? OptionalLong.empty() : OptionalLong.of(sourceHw), time.milliseconds());
        } finally { // a pass that stopped early (a queued barrier) still waits on the high watermark
            MirrorPartitionState state = ctx.driver.current(host, partition.leaderEpoch()).record().state();
            ctx.failedOver = desired == DesiredMirrorState.STOPPED && state == MirrorPartitionState.STOPPED;
            metrics.onPartitionState(def.name(), tp, partition, state);
            if (state == MirrorPartitionState.STOPPING) {
                awaitingHighWatermark.add(tp);
            } else {
                awaitingHighWatermark.remove(tp);
            }
            maybeReportCatchUp(tp, def, partition, ctx, state);
        }
    }

    /** The state machine's surroundings in this broker: the partition, the mirror's fetcher, the peer, ZooKeeper. */
    private final class BrokerHost implements MirrorPartitionHost {
        private final TopicPartition tp;
        private final MirrorPartitionContext ctx;
        private final MirrorLocalPartition partition;
        private final MirrorDefinition def;
        /** The peer's answer as the driver has it in this pass: what the decision written next was made with. */
        private PeerLookup peer = PeerLookup.NOT_ASKED;
        /**
         * Part of a pass over many partitions: an action that must follow this partition's deferred record stops its
         * pass ({@link WriteFirst}) rather than writing that record alone, so a pass over 1,000 starting partitions
         * writes their records in a few transactions instead of one each (decision 94).
         */
        private final boolean batched;

        BrokerHost(TopicPartition tp, MirrorPartitionContext ctx, MirrorLocalPartition partition, MirrorDefinition def,
                   boolean batched) {
            this.tp = tp;
            this.ctx = ctx;
            this.partition = partition;
            this.def = def;
            this.batched = batched;
        }

        @Override
        public Optional<VersionedRecord> stored() {
            MirrorImage.MirrorPartition mp = metadata.image().mirrors().partitions().get(tp);
            if (mp == null) {
                return Optional.empty();
            }
            if (mp != ctx.storedFrom) {
                ctx.stored = MirrorPartitionRecord.fromJson(mp.json());
                ctx.storedFrom = mp;
            }
            return Optional.of(new VersionedRecord(ctx.stored, mp.version()));
        }

        @Override
        public PartitionView view() throws IOException {
            MetadataImage image = metadata.image();
            return partition.view().withCluster(
                    MirrorTopicConfigs.supportsUncleanLeaderElection(image.topicConfig(tp.topic())),
                    image.mirrors().truncationsApplied(tp));
        }

        @Override
        public PeerLookup execute(MirrorAction action, PeerLookup peer) throws Exception {
            if (!(action instanceof MirrorAction.RemoveFetcher) && deferred.containsKey(tp)) {
                // an action follows a write of this pass: the record goes first, as the machine decided them (not
                // for removing the fetcher: no longer copying is safe under any record)
                if (batched) {
                    throw new WriteFirst(tp);
                }
                flush();
                if (!contexts.containsKey(tp) || contexts.get(tp).refused) {
                    throw new ConcurrentRecordChange(tp);
                }
            }
            PeerLookup after = MirrorManager.this.execute(action, tp, partition, def, peer, this);
            this.peer = after;
            if (action instanceof MirrorAction.AppendProducerStateBarrier) {
                throw new FailoverStepsQueued(tp); // nothing to decide on before the barrier is in the log
            }
            return after;
        }

        @Override
        public int write(VersionedRecord current, MirrorDecision decision) {
            return defer(tp, partition, def, current, decision,
                    FailbackDecision.recordsFailback(current.record().state(), decision, peer));
        }
    }

    /** A deferred write of this pass was refused: the partition's pass stops, the next one re-reads the record. */
    private static final class ConcurrentRecordChange extends Exception {
        ConcurrentRecordChange(TopicPartition tp) {
            super("the state record of " + tp + " changed concurrently");
        }
    }

    /**
     * An action must follow the partition's record, which waits for the others of the pass: its pass stops here, and
     * the follow-up pass after the records are written (see {@link #passOver}) runs the action.
     */
    private static final class WriteFirst extends Exception {
        WriteFirst(TopicPartition tp) {
            super("the record of " + tp + " is written before its next action", null, false, false);
        }
    }

    /** The partition's barrier is queued for the end of the pass ({@link FailoverBarriers}): its pass stops here. */
    private static final class FailoverStepsQueued extends Exception {
        FailoverStepsQueued(TopicPartition tp) {
            super("the failover steps of " + tp + " are queued", null, false, false);
        }
    }

    /**
     * A decision's record, written with the others of the same pass at its end; {@code failback}: it records the
     * truncation point of a failback ({@link FailbackDecision}), counted once written.
     */
    private record DeferredWrite(TopicPartition tp, MirrorLocalPartition partition, MirrorDefinition def,
                                 VersionedRecord from, MirrorDecision decision, boolean failback) {
    }

    /**
     * Defers a decision's record to the end of the pass, where every partition's records go to ZooKeeper together
     * (see {@link #flush}); returns the version the record will have once written, which the driver goes by. A
     * progress-only decision keeps its version; a partition's second decision in a pass joins its first write.
     */
    private int defer(TopicPartition tp, MirrorLocalPartition partition, MirrorDefinition def, VersionedRecord from,
                      MirrorDecision d, boolean failback) {
        DeferredWrite earlier = deferred.get(tp);
        DeferredWrite write;
        if (earlier == null) {
            write = new DeferredWrite(tp, partition, def, from, d, failback);
        } else {
            // a second decision of the same pass (STOPPING, then its last mirrored offset): one write of the last
            // record, from the version the first found
            MirrorDecision first = earlier.decision();
            String reason = first.reason().isEmpty() ? d.reason()
                    : d.reason().isEmpty() ? first.reason() : first.reason() + "; " + d.reason();
            write = new DeferredWrite(tp, partition, def, earlier.from(), new MirrorDecision(d.actions(), d.write(),
                    reason, first.progressOnly() && d.progressOnly(), d.timers()), earlier.failback() || failback);
        }
        deferred.put(tp, write);
        VersionedRecord base = write.from();
        if (write.decision().progressOnly() && base.version() >= 0) {
            return base.version();
        }
        return base.version() < 0 ? 0 : base.version() + 1;
    }

    /**
     * Writes the deferred records: state records version-checked, in a few ZooKeeper transactions; then progress.
     * A state record refused (changed meanwhile) makes its partition's driver forget what it wrote, so its next pass
     * starts from the stored record.
     */
    private Set<TopicPartition> flush() {
        if (deferred.isEmpty()) {
            return Set.of();
        }
        List<DeferredWrite> batch = new ArrayList<>(deferred.values());
        deferred.clear();
        List<DeferredWrite> stateWrites = new ArrayList<>();
        Map<TopicPartition, MirrorProgress> progress = new LinkedHashMap<>();
        for (DeferredWrite w : batch) {
            MirrorPartitionRecord to = w.decision().write().get();
            if (!(w.decision().progressOnly() && w.from().version() >= 0)) {
                stateWrites.add(w);
            }
            if (!to.progress().equals(w.from().record().progress()) || w.from().version() < 0
                    || w.decision().progressOnly()) {
                progress.put(w.tp(), to.progress());
            }
        }
        MirrorStateWriter.Outcome outcome = writer.writeAll(stateWrites.stream().map(w ->
                new MirrorStateWriter.StateWrite(w.tp(), w.decision().write().get(), w.from().version())).toList());
        List<Integer> versions = outcome.versions();
        if (outcome.failure().isPresent()) {
            long notWritten = versions.stream().filter(v -> v == MirrorStateWriter.NOT_WRITTEN).count();
            log.warn("Could not write the state records of {} of {} mirror partitions (the others are written); they "
                    + "decide again at their next pass", notWritten, stateWrites.size(), outcome.failure().get());
        }
        Set<TopicPartition> written = new HashSet<>();
        for (int i = 0; i < stateWrites.size(); i++) {
            DeferredWrite w = stateWrites.get(i);
            if (versions.get(i) == MirrorStateWriter.NOT_WRITTEN) {
                refused(w.tp());
                progress.remove(w.tp());
            } else if (versions.get(i) == MirrorStateWriter.CHANGED) {
                log.info("[Mirror {} {}] state record changed concurrently; re-reading", w.def().name(), w.tp());
                refused(w.tp());
                progress.remove(w.tp());
            } else {
                logTransition(w);
                if (!w.decision().progressOnly()) {
                    written.add(w.tp());
                    metrics.onTransition(w.def().name(), w.from().record().state(), w.decision().write().get().state());
                }
                if (w.failback()) {
                    metrics.onFailback(w.def().name()); // the source mirrored this log before: mirroring back
                }
            }
        }
        try {
            store.writeProgressAll(progress);
        } catch (Exception e) {
            log.warn("Could not record the progress of {} mirror partitions", progress.size(), e);
        }
        return written;
    }

    private void refused(TopicPartition tp) {
        MirrorPartitionContext ctx = contexts.get(tp);
        if (ctx != null) {
            ctx.driver.forgetWritten();
            ctx.refused = true;
        }
    }

    private void logTransition(DeferredWrite w) {
        if (w.decision().progressOnly()) {
            return;
        }
        MirrorPartitionState fromState = w.from().record().state();
        MirrorPartitionRecord to = w.decision().write().get();
        if (fromState != to.state()) {
            log.info("[Mirror {} {}] {} -> {}: {} (leader epoch {}, log end offset {})", w.def().name(), w.tp(),
                    fromState, to.state(), w.decision().reason(), w.partition().leaderEpoch(),
                    w.partition().logEndOffset());
        } else {
            log.info("[Mirror {} {}] {}: {}", w.def().name(), w.tp(), to.state(), w.decision().reason());
        }
    }

    /**
     * Runs one action; returns the peer's answer as known afterwards. The peer lookup, the comparison and the
     * quarantine copy run on the mirror's own thread: the first pass that needs one starts it and stops
     * ({@link MirrorCallRouter.AwaitingCall}), and the pass its outcome brings finds it here.
     */
    private PeerLookup execute(MirrorAction action, TopicPartition tp, MirrorLocalPartition partition, MirrorDefinition def,
                               PeerLookup peer, MirrorPartitionHost host) throws Exception {
        if (action instanceof MirrorAction.AddFetcher) {
            fetcherFor(def).addPartition(tp, partition);
        } else if (action instanceof MirrorAction.RemoveFetcher) {
            existingFetcher(def.name()).ifPresent(f -> f.removePartition(tp));
        } else if (action instanceof MirrorAction.AskPeer) {
            String topic = tp.topic();
            List<Integer> all = metadata.image().topic(topic)
                    .map(t -> List.copyOf(t.partitions().keySet())).orElse(List.of());
            String clusterId = metadata.image().clusterId();
            // one lookup per mirror and topic in flight, for all its partitions at once
            PeerAnswer answer = outcomeOf(tp, partition, host, new PartitionCalls.Key.AskPeer(), "ask/" + topic,
                    "asking the source for the last mirrored epochs of " + topic,
                    () -> askPeer(def, clusterId, topic, all), outcome -> { });
            if (answer.failure() != null) {
                return PeerFailures.failed("asking the source for its last mirrored epoch", answer.failure());
            }
            // a failback (the source mirrored this log before) is counted once its point is written (flush)
            return new PeerLookup.Answered(Optional.ofNullable(answer.records().get(tp.partition())));
        } else if (action instanceof MirrorAction.ComparePeer compare) {
            Optional<LastMirroredTruncation.LastMirrored> answer = peer instanceof PeerLookup.Answered a
                    ? a.lastMirrored() : Optional.empty();
            MirrorCalls mirrorCalls = calls.callsFor(def.name());
            // the comparison of the call thread that runs it: each of the mirror's threads has its own connection
            CompareResult result = outcomeOf(tp, partition, host, new PartitionCalls.Key.ComparePeer(compare.upTo()),
                    "compare/" + tp + "/" + compare.upTo(), "comparing " + tp + " with the source below offset "
                            + compare.upTo(),
                    () -> compareWithPeer(mirrorCalls.comparison(), def, tp, partition, compare.upTo()),
                    outcome -> {
                        if (!outcome.isFailure()) { // counted once per comparison, not per pass that reads it
                            metrics.onReconciliation(def.name(), outcome.value().failure() == null,
                                    outcome.value().matchedBelow(compare.upTo()));
                        }
                    });
            if (result.failure() != null) {
                return PeerFailures.failed("comparing this log with the source's", result.failure());
            }
            return new PeerLookup.Compared(answer, result.firstDifference());
        } else if (action instanceof MirrorAction.ApplyTruncationPoint point) {
            long end = partition.logEndOffset();
            // nothing is cut before it is kept: the copy of exactly this tail (from the point to this log end) has
            // been acknowledged, or the cut waits for it; a copy that failed throws, and the next pass copies again
            MirrorQuarantine.Copied copied = outcomeOf(tp, partition, host,
                    new PartitionCalls.Key.CopyToQuarantine(point.offset(), end), "copy/" + tp + "/" + point.offset()
                            + "/" + end, "copying offsets " + point.offset() + " to " + end + " of " + tp
                            + " to the quarantine",
                    () -> quarantine.copy(def.name(), tp, partition, point.offset(), point.reason()), outcome -> { });
            partition.applyTruncationPoint(point.id(), point.offset(), "mirror " + def.name() + ": " + point.reason());
            metrics.onTruncation(def.name(), end - point.offset(), copied.records());
            log.debug("[Mirror {} {}] truncation point {} at offset {} applied on the leader (log end was {}); every "
                    + "replica that must take part applies it next: {}", def.name(), tp, point.id(), point.offset(),
                    end, point.reason());
        } else if (action instanceof MirrorAction.AbortOpenTransactions) {
            barriers.queueAbort(def.name(), tp, partition);
        } else if (action instanceof MirrorAction.AppendProducerStateBarrier) {
            barriers.queueBarrier(def.name(), tp, partition);
        } else {
            throw new IllegalArgumentException("Unknown mirror action " + action);
        }
        return peer;
    }

    /** A comparison's result: where the logs first differ, or why they could not be compared. */
    private record CompareResult(OptionalLong firstDifference, IOException failure) {
        boolean matchedBelow(long upTo) {
            return firstDifference.isEmpty() || firstDifference.getAsLong() >= upTo;
        }
    }

    /** On the mirror's thread: an I/O failure of the comparison is its result. */
    private static CompareResult compareWithPeer(PeerComparison comparison, MirrorDefinition def, TopicPartition tp,
                                                 MirrorLocalPartition partition, long upTo) {
        try {
            return new CompareResult(comparison.firstDifference(def, tp, partition, upTo), null);
        } catch (IOException e) {
            return new CompareResult(OptionalLong.empty(), e);
        }
    }

    /**
     * The outcome of a call of this partition on the current leadership and record, or the call started on the
     * mirror's thread and the pass ended ({@link MirrorCallRouter#outcomeOf}).
     */
    private <T> T outcomeOf(TopicPartition tp, MirrorLocalPartition partition, MirrorPartitionHost host,
                            PartitionCalls.Key key, String sharedKey, String what, Callable<T> work,
                            Consumer<MirrorCalls.Outcome<T>> onAccepted) throws Exception {
        MirrorPartitionContext ctx = contexts.get(tp);
        int epoch = partition.leaderEpoch();
        PartitionCalls.Basis basis = new PartitionCalls.Basis(epoch, ctx.driver.current(host, epoch).version());
        return calls.outcomeOf(tp, ctx.mirror, ctx.calls, basis, key, sharedKey, what, work, onAccepted,
                () -> contexts.get(tp) == ctx, () -> queuePasses(Set.of(tp)));
    }

    /**
     * The fetchers of mirrors this broker has nothing to fetch for any more end, with their threads, connections and
     * fetch metrics: every partition of the mirror it led is failed over, deleted, or led elsewhere now. The next
     * partition to mirror starts a new one ({@link #fetcherFor}).
     */
    private void closeIdleFetchers() {
        Set<String> needed = contexts.values().stream().filter(c -> !c.failedOver).map(c -> c.mirror)
                .collect(Collectors.toSet());
        for (Iterator<Map.Entry<String, MirrorFetcher>> it = fetchers.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, MirrorFetcher> e = it.next();
            if (!needed.contains(e.getKey())) {
                log.info("[Mirror {}] this broker has no partition of it to mirror now ({} fetched until now); its "
                        + "fetcher stops", e.getKey(), e.getValue().partitions().size());
                closeInBackground(e.getKey(), e.getValue());
                it.remove();
                fetcherConfigs.remove(e.getKey());
            }
        }
    }

    /**
     * Whether the source broker fetched for {@code tp} has left a fetch unanswered for longer than
     * {@value #SOURCE_END_STALE_MS} ms (a fetch returns within its 500 ms wait): then the source end last fetched
     * is no longer known to be current, and describe shows the lag unknown rather than, say, 0 for the 30 s the
     * fetch takes to time out through a network that drops packets (issue 25, point 10; decision 80).
     */
    private boolean sourceEndOutOfDate(String mirror, TopicPartition tp) {
        OptionalLong answered = existingFetcher(mirror).map(f -> f.lastAnsweredMs(tp)).orElse(OptionalLong.empty());
        return answered.isPresent() && time.hiResClockMs() - answered.getAsLong() > SOURCE_END_STALE_MS;
    }

    /** Detaches {@code fetcher} now (nothing appended after this) and waits for its threads on the closer. */
    private void closeInBackground(String mirror, MirrorFetcher fetcher) {
        fetcher.detach();
        try {
            fetcherCloser.execute(() -> {
                try {
                    fetcher.shutdown();
                } catch (Throwable t) {
                    log.error("[Mirror {}] closing its stopped fetcher failed", mirror, t);
                }
            });
        } catch (RejectedExecutionException closing) {
            fetcher.shutdown(); // the manager is closing: it waits for its fetchers anyway
        }
    }

    private Optional<MirrorFetcher> existingFetcher(String mirror) {
        return Optional.ofNullable(fetchers.get(mirror));
    }

    private final Map<String, Map<String, String>> fetcherConfigs = new HashMap<>();

    private MirrorFetcher fetcherFor(MirrorDefinition def) {
        Map<String, String> clientConfigs = def.sourceClientConfigs();
        Map<String, String> previous = fetcherConfigs.put(def.name(), clientConfigs);
        if (previous != null && !previous.equals(clientConfigs)) {
            // the mirror now points elsewhere or connects differently: a new fetcher, nothing of the old lingers
            MirrorFetcher old = fetchers.remove(def.name());
            if (old != null) {
                log.info("[Mirror {}] source address or client configs changed; restarting its fetcher (now {})",
                        def.name(), def.sourceBootstrap());
                closeInBackground(def.name(), old);
            }
            calls.close(def.name()); // their connections to the old source go; pending calls are asked again
        }
        return fetchers.computeIfAbsent(def.name(), name -> {
            MirrorFetcher f = new MirrorFetcher(name, clientConfigs, stateTimeoutMs, new Listener(def),
                    metrics.fetchMetrics(name), new MirrorFetchQuota(quotaWindows, time), time);
            f.expectClusterId(def.sourceClusterId()); // before its first metadata round: it adopts no other cluster's
            f.updateReplicationQuota(def.replicationThrottledRate()); // capped from its first fetch
            f.start();
            return f;
        });
    }

    /** Fetcher callbacks, moved onto the manager thread. */
    private final class Listener implements MirrorFetchListener {
        private final MirrorDefinition def;

        Listener(MirrorDefinition def) {
            this.def = def;
        }

        @Override
        public void onEpochFencingNeeded(TopicPartition tp, int sourceEpoch) {
            submit(() -> decide(tp, new MirrorEvent.EpochFencingNeeded(sourceEpoch)));
        }

        @Override
        public void onProgress(TopicPartition tp, long sourceHighWatermark, long localLogEndOffset) {
            sourceHighWatermarks.put(tp, sourceHighWatermark);
        }

        @Override
        public void onSourceDiverged(TopicPartition tp, int sourceEpoch, long sourceEndOffset, String reason) {
            submit(() -> decide(tp, new MirrorEvent.SourceDiverged(sourceEpoch, sourceEndOffset, reason)));
        }

        @Override
        public void onFailure(TopicPartition tp, String reason, boolean retriable) {
            submit(() -> decide(tp, new MirrorEvent.FetchFailed(reason, retriable)));
        }

        /** A fetcher report, decided on the manager thread if this broker still leads the partition. */
        private void decide(TopicPartition tp, MirrorEvent event) {
            Optional<MirrorLocalPartition> p = partitions.partition(tp);
            MirrorImage.MirrorTopic mt = metadata.image().mirrors().topics().get(tp.topic());
            if (p.isEmpty() || !p.get().isLeader() || mt == null) {
                return;
            }
            try {
                run(tp, p.get(), def, mt.desired(), event, Optional.empty(), false);
            } catch (FailoverStepsQueued e) {
                // appended just below
            } catch (MirrorCallRouter.AwaitingCall e) {
                // its call's outcome gives it a pass
            } catch (Exception e) {
                log.warn("[Mirror {} {}] could not record a fetcher event", def.name(), tp, e);
            } finally {
                flush();
                runFailoverSteps();
            }
        }
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
        calls.closeAll();
        fetchers.values().forEach(MirrorFetcher::shutdown);
        fetchers.clear();
        fetcherCloser.shutdown();
        try {
            fetcherCloser.awaitTermination(15, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
