package io.twinlog.server.mirror;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.mirror.DesiredMirrorState;
import io.twinlog.mirror.LastMirroredTruncation;
import io.twinlog.mirror.MirrorPartitionSink;
import io.twinlog.mirror.MirrorPartitionState;
import io.twinlog.mirror.MirrorTransitions;
import io.twinlog.mirror.fetcher.MirrorFetchListener;
import io.twinlog.mirror.fetcher.MirrorFetcherThread;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorProgress;
import io.twinlog.mirror.store.MirrorStore;
import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Runs the mirror partition state machine for the mirror partitions this broker leads.
 *
 * <p>Threading: one thread. Every half second, and after every metadata change, it compares each led mirror
 * partition's desired state (per topic, set by start/stop/pause/resume) with its durable state record and moves it
 * with {@link #transition}: the one method that checks legality ({@link MirrorTransitions}), logs from → to with the
 * reason, and writes the record to ZooKeeper <em>before</em> acting on it. A new leader (after a broker kill) reads
 * the record and continues from there. Fetcher callbacks are handed to this thread as events.
 *
 * <p>Epochs: a mirror partition's leader epoch history is the source's (batches keep their source epochs and the
 * leader does not add epochs of its own while mirroring); EPOCH_FENCING asks the controller, through the record's
 * {@code minLeaderEpoch}, to raise the local epoch above every source epoch (source epoch + {@value #EPOCH_MARGIN}).
 */
public final class MirrorManager implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorManager.class);
    static final int EPOCH_MARGIN = 10;
    private static final long TICK_MS = 500;
    private static final long RETRY_INITIAL_MS = 1_000;
    private static final long RETRY_MAX_MS = 30_000;

    private final int brokerId;
    private final MirrorStore store;
    private final MirrorStateWriter writer;
    private final MetadataWatcher metadata;
    private final ReplicaManager replicaManager;
    private final Time time;
    private final ScheduledExecutorService thread;
    private final Map<String, MirrorFetcherThread> fetchers = new HashMap<>();
    private final Map<TopicPartition, Written> written = new HashMap<>();
    private final Map<TopicPartition, Long> failedAtMs = new HashMap<>();
    /** Since when this leader has waited for the controller in EPOCH_FENCING or STOPPING (reset on any change). */
    private final Map<TopicPartition, Long> waitingSinceMs = new HashMap<>();
    private final long stateTimeoutMs;
    private final Map<TopicPartition, Long> sourceHighWatermarks = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Long> lastProgressWriteMs = new HashMap<>();
    private static final long PROGRESS_INTERVAL_MS = 5_000;
    private static final long CATCH_UP_REPORT_MS = 30_000;
    private static final long CATCH_UP_REPORT_MIN_LAG = 10_000;
    /** Partitions with a backlog being copied, and when their progress was last logged. */
    private final Map<TopicPartition, Long> catchUpReportedMs = new HashMap<>();
    /** Within one pass: the peer's last-mirrored records per mirror and topic (LOG_TRUNCATION of a failback). */
    private final Map<String, PeerAnswer> peerAnswers = new HashMap<>();
    private final Random random = new Random();
    private volatile boolean closed;

    /** The last record this broker wrote, preferred over an image that has not caught up with it yet. */
    private record Written(MirrorPartitionRecord record, int version) {
    }

    /**
     * @param stateTimeoutMs how long a partition may wait for the controller's epoch bump (EPOCH_FENCING, STOPPING),
     *                       or for its source partition to have a leader, before it goes FAILED with the reason
     *                       (retried with backoff)
     */
    public MirrorManager(int brokerId, MirrorStore store, CuratorFramework zk, MetadataWatcher metadata,
                         ReplicaManager replicaManager, long stateTimeoutMs, Time time) {
        this.brokerId = brokerId;
        this.stateTimeoutMs = stateTimeoutMs;
        this.store = store;
        this.writer = new MirrorStateWriter(zk);
        this.metadata = metadata;
        this.replicaManager = replicaManager;
        this.time = time;
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "twinlog-mirror-manager-" + brokerId);
            t.setDaemon(true);
            return t;
        });
    }

    public void start() {
        metadata.addListener((previous, next) -> submit(this::tick));
        thread.scheduleWithFixedDelay(this::tickSafely, TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
    }

    private void submit(Runnable r) {
        if (!closed) {
            try {
                thread.execute(() -> {
                    try {
                        r.run();
                    } catch (RuntimeException e) {
                        log.error("Mirror manager task failed", e);
                    }
                });
            } catch (java.util.concurrent.RejectedExecutionException ignored) {
                // closing
            }
        }
    }

    private void tickSafely() {
        try {
            tick();
        } catch (RuntimeException e) {
            log.error("Mirror manager tick failed", e);
        }
    }

    private void tick() {
        if (closed) {
            return;
        }
        peerAnswers.clear(); // asked at most once per mirror and topic per pass, for all its partitions at once
        MetadataImage image = metadata.image();
        Map<String, MirrorDefinition> definitions = new HashMap<>();
        for (Map.Entry<String, MirrorImage.MirrorTopic> e : image.mirrors().topics().entrySet()) {
            String topic = e.getKey();
            MirrorImage.MirrorTopic mt = e.getValue();
            Optional<TopicImage> t = image.topic(topic);
            if (t.isEmpty()) {
                continue;
            }
            MirrorDefinition def = definitions.computeIfAbsent(mt.mirror(), this::definition);
            if (def == null) {
                continue;
            }
            Optional<String> clusterIdProblem = checkSourceClusterId(def);
            DesiredMirrorState desired = DesiredMirrorState.valueOf(mt.desiredState());
            for (Integer p : t.get().partitions().keySet()) {
                TopicPartition tp = new TopicPartition(topic, p);
                Optional<Partition> partition = replicaManager.partition(tp);
                if (partition.isEmpty() || !partition.get().isLeader()) {
                    written.remove(tp);
                    waitingSinceMs.remove(tp);
                    catchUpReportedMs.remove(tp);
                    fetcherFor(def).removePartition(tp);
                    continue;
                }
                try {
                    MirrorImage.MirrorPartition mp = image.mirrors().partitions().get(tp);
                    boolean failingOver = desired == DesiredMirrorState.STOPPED || (mp != null
                            && (mp.state().equals("STOPPING") || mp.state().equals("STOPPED")));
                    if (clusterIdProblem.isPresent() && !failingOver) {
                        failPartition(tp, partition.get(), def, image.mirrors().partitions().get(tp),
                                clusterIdProblem.get());
                        continue;
                    }
                    step(tp, partition.get(), def, desired, image.mirrors().partitions().get(tp));
                } catch (Exception ex) {
                    log.warn("[Mirror {} {}] step failed: {}", def.name(), tp, ex.toString());
                }
            }
        }
    }

    /**
     * The source's cluster ID as the fetcher last saw it, against the one recorded: recorded at first contact if the
     * mirror was created before the source was reachable; a different one means the mirror now points at another
     * cluster (a rebuilt source, a wrong DNS entry) and mirroring must stop rather than mix two histories.
     */
    private Optional<String> checkSourceClusterId(MirrorDefinition def) {
        Optional<String> seen = fetcherFor(def).sourceClusterId();
        if (seen.isEmpty()) {
            return Optional.empty();
        }
        if (def.sourceClusterId().isEmpty()) {
            try {
                if (store.update(def, def.withSourceClusterId(seen.get())
                        .withState(MirrorDefinition.STATE_ACTIVE, Optional.empty()))) {
                    log.info("[Mirror {}] recorded the source cluster ID {} at first contact", def.name(), seen.get());
                }
            } catch (Exception e) {
                log.warn("[Mirror {}] could not record the source cluster ID: {}", def.name(), e.toString());
            }
            return Optional.empty();
        }
        if (!def.sourceClusterId().get().equals(seen.get())) {
            String reason = "The source cluster ID changed from " + def.sourceClusterId().get() + " to " + seen.get()
                    + " (" + def.sourceBootstrap() + " is now another cluster); mirroring stopped";
            if (!MirrorDefinition.STATE_FAILED.equals(def.state())) {
                try {
                    store.update(def, def.withState(MirrorDefinition.STATE_FAILED, Optional.of(reason)));
                    log.error("[Mirror {}] {}", def.name(), reason);
                } catch (Exception e) {
                    log.warn("[Mirror {}] could not record the failure: {}", def.name(), e.toString());
                }
            }
            return Optional.of(reason);
        }
        return Optional.empty();
    }

    private void failPartition(TopicPartition tp, Partition partition, MirrorDefinition def,
                               MirrorImage.MirrorPartition fromImage, String reason) throws Exception {
        fetcherFor(def).removePartition(tp);
        Written w = current(tp, partition, fromImage);
        MirrorPartitionState s = w.record().state();
        if (s == MirrorPartitionState.STOPPING || s == MirrorPartitionState.STOPPED
                || (s == MirrorPartitionState.FAILED && w.record().retryAttempt() < 0)) {
            return; // failover still works; a non-retriable failure is already recorded
        }
        transition(tp, partition, def, w, w.record().failed(reason, false, partition.leaderEpoch()), reason);
    }

    private MirrorDefinition definition(String name) {
        try {
            return store.get(name).orElse(null);
        } catch (Exception e) {
            if (!closed) { // an interrupted read while the broker shuts down is expected
                log.warn("Could not read cluster mirror {}: {}", name, e.toString());
            }
            return null;
        }
    }

    private Written current(TopicPartition tp, Partition partition, MirrorImage.MirrorPartition fromImage) {
        Written mine = written.get(tp);
        Written image = fromImage == null ? null
                : new Written(MirrorPartitionRecord.fromJson(fromImage.json()), fromImage.version());
        if (mine != null && (image == null || mine.version() >= image.version())) {
            return mine;
        }
        if (image != null) {
            return image;
        }
        return new Written(MirrorPartitionRecord.initial(partition.leaderEpoch()), -1);
    }

    private void step(TopicPartition tp, Partition partition, MirrorDefinition def, DesiredMirrorState desired,
                      MirrorImage.MirrorPartition fromImage) throws Exception {
        Written w = current(tp, partition, fromImage);
        MirrorPartitionRecord rec = w.record();
        if (rec.writerLeaderEpoch() > partition.leaderEpoch()) {
            return; // written by a newer leader: this broker's leadership is stale
        }
        boolean failedStopping = rec.state() == MirrorPartitionState.FAILED
                && rec.previousState() == MirrorPartitionState.STOPPING && rec.retryAttempt() >= 0;
        // a failover that timed out retries STOPPING on the backoff schedule, not at once on every tick
        Optional<MirrorPartitionState> next = failedStopping ? Optional.empty()
                : MirrorTransitions.reconcile(desired, rec.state());
        if (next.isPresent()) {
            transition(tp, partition, def, w, rec.transitionTo(next.get(), partition.leaderEpoch()),
                    "desired state " + desired);
            return;
        }
        switch (rec.state()) {
            case LOG_TRUNCATION -> {
                if (partition.log().logEndOffset() > 0 && !truncateForMirroring(tp, partition, def, w)) {
                    return;
                }
                transition(tp, partition, def, w, rec.transitionTo(MirrorPartitionState.EPOCH_FENCING,
                        partition.leaderEpoch()).withMinLeaderEpoch(fenceTarget(partition, -1)),
                        "log aligned at offset " + partition.log().logEndOffset());
            }
            case EPOCH_FENCING -> {
                if (rec.minLeaderEpoch() < 0) {
                    transition(tp, partition, def, w, rec.withMinLeaderEpoch(fenceTarget(partition, -1)), "fencing");
                } else if (partition.leaderEpoch() >= rec.minLeaderEpoch()) {
                    transition(tp, partition, def, w, rec.transitionTo(MirrorPartitionState.MIRRORING,
                            partition.leaderEpoch()), "local leader epoch " + partition.leaderEpoch()
                            + " is above every mirrored source epoch");
                } else {
                    failIfWaitedTooLong(tp, partition, def, w, "epoch fencing");
                }
            }
            case MIRRORING -> {
                fetcherFor(def).addPartition(tp, new PartitionSink(partition));
                maybeRecordProgress(tp, partition, w);
                maybeReportCatchUp(tp, def, partition);
            }
            case PAUSING -> {
                fetcherFor(def).removePartition(tp);
                transition(tp, partition, def, w, rec.transitionTo(MirrorPartitionState.PAUSED, partition.leaderEpoch()),
                        "fetcher removed");
            }
            case STOPPING -> stopStep(tp, partition, def, w);
            case FAILED -> {
                fetcherFor(def).removePartition(tp);
                if (rec.retryAttempt() < 0) {
                    return;
                }
                long since = failedAtMs.computeIfAbsent(tp, k -> time.milliseconds());
                long backoff = MirrorTransitions.retryBackoffMs(rec.retryAttempt(), RETRY_INITIAL_MS, RETRY_MAX_MS,
                        random.nextDouble());
                if (time.milliseconds() - since >= backoff) {
                    failedAtMs.remove(tp);
                    MirrorPartitionState retryTo = rec.previousState() == MirrorPartitionState.UNKNOWN
                            || rec.previousState() == MirrorPartitionState.LOG_TRUNCATION
                            ? MirrorPartitionState.LOG_TRUNCATION : MirrorPartitionState.MIRRORING;
                    if (rec.previousState() == MirrorPartitionState.STOPPING) {
                        retryTo = MirrorPartitionState.STOPPING;
                    }
                    transition(tp, partition, def, w, new MirrorPartitionRecord(retryTo, partition.leaderEpoch(),
                            rec.minLeaderEpoch(), rec.lastMirroredEpoch(), rec.lastMirroredOffset(), rec.retryAttempt(),
                            rec.lastError(), MirrorPartitionState.FAILED, rec.progress()),
                            "retry " + rec.retryAttempt() + " after " + backoff + " ms");
                }
            }
            default -> {
            }
        }
    }

    /**
     * A long copy (a new mirror of a big topic, re-mirroring after a truncation) says how far it is: every
     * {@value #CATCH_UP_REPORT_MS} ms while the partition is more than {@value #CATCH_UP_REPORT_MIN_LAG} records
     * behind its source, and once when it has caught up.
     */
    private void maybeReportCatchUp(TopicPartition tp, MirrorDefinition def, Partition partition) {
        Long sourceHw = sourceHighWatermarks.get(tp);
        if (sourceHw == null) {
            return;
        }
        long end = partition.log().logEndOffset();
        long lag = Math.max(0, sourceHw - end);
        long now = time.milliseconds();
        Long reportedAt = catchUpReportedMs.get(tp);
        if (lag > CATCH_UP_REPORT_MIN_LAG) {
            if (reportedAt == null) {
                catchUpReportedMs.put(tp, now); // first sight of a backlog: report only if it lasts
            } else if (now - reportedAt >= CATCH_UP_REPORT_MS) {
                catchUpReportedMs.put(tp, now);
                log.info("[Mirror {} {}] catching up: {} of the source's {} records mirrored, {} to go", def.name(),
                        tp, end, sourceHw, lag);
            }
        } else if (reportedAt != null && lag == 0) {
            catchUpReportedMs.remove(tp);
            log.info("[Mirror {} {}] caught up with the source at offset {}", def.name(), tp, end);
        }
    }

    /**
     * Every {@value #PROGRESS_INTERVAL_MS} ms at most, when either end has moved, the source high watermark the
     * fetcher last saw and this leader's log end go into the record (no state change), so every broker reports the
     * same offsets and lag whichever is asked.
     */
    private void maybeRecordProgress(TopicPartition tp, Partition partition, Written w) throws Exception {
        MirrorProgress progress = progress(tp, partition, w.record());
        long now = time.milliseconds();
        if (progress.equals(w.record().progress())
                || now - lastProgressWriteMs.getOrDefault(tp, 0L) < PROGRESS_INTERVAL_MS) {
            return;
        }
        lastProgressWriteMs.put(tp, now);
        MirrorPartitionRecord next = w.record().withProgress(progress);
        int version = writer.write(tp, next, w.version());
        if (version >= 0) {
            written.put(tp, new Written(next, version));
        } else {
            written.remove(tp);
        }
    }

    /**
     * Failover of one partition: the fetcher goes; the last mirrored epoch and offset are recorded; the controller
     * raises the leader epoch above them; then the partition is STOPPED and writable. Works with the source down:
     * nothing here talks to it.
     */
    private void stopStep(TopicPartition tp, Partition partition, MirrorDefinition def, Written w) throws Exception {
        fetcherFor(def).removePartition(tp);
        MirrorPartitionRecord rec = w.record();
        if (rec.minLeaderEpoch() <= rec.lastMirroredEpoch() || rec.lastMirroredOffset() < 0) {
            int lme = partition.log().latestEpoch().orElse(-1);
            long lmo = partition.log().logEndOffset();
            int target = Math.max(partition.leaderEpoch(), lme) + 1;
            transition(tp, partition, def, w, rec.withLastMirrored(lme, lmo).withMinLeaderEpoch(target),
                    "recording last mirrored epoch " + lme + " and offset " + lmo + "; raising the leader epoch to "
                            + target);
            return;
        }
        if (partition.leaderEpoch() >= rec.minLeaderEpoch()) {
            java.util.List<Long> aborted = partition.abortOpenTransactions(time.milliseconds());
            if (!aborted.isEmpty()) {
                log.info("[Mirror {} {}] aborted the open transactions of source producers {} at failover",
                        def.name(), tp, aborted);
            }
            // the producers copied from the source are forgotten on every replica before the topic is writable:
            // this cluster allocates producer ids from the same range (decision 24)
            long barrier = partition.appendProducerStateBarrier(time.milliseconds());
            log.info("[Mirror {} {}] producer-state barrier written at offset {}", def.name(), tp, barrier);
            transition(tp, partition, def, w, rec.transitionTo(MirrorPartitionState.STOPPED, partition.leaderEpoch()),
                    "failed over at offset " + rec.lastMirroredOffset() + " (last mirrored epoch "
                            + rec.lastMirroredEpoch() + "); leader epoch now " + partition.leaderEpoch()
                            + ", the topic is writable");
        } else {
            failIfWaitedTooLong(tp, partition, def, w, "failover");
        }
    }

    /**
     * The controller raises mirror partition epochs; if it does not (no controller elected, ZooKeeper unreachable
     * from it) the partition must not sit in a waiting state for ever with nothing to show: after the deadline it
     * goes FAILED with the reason, retriable, so the retry schedule tries again and describe says why.
     */
    private void failIfWaitedTooLong(TopicPartition tp, Partition partition, MirrorDefinition def, Written w,
                                     String what) throws Exception {
        long now = time.milliseconds();
        long since = waitingSinceMs.computeIfAbsent(tp, k -> now);
        if (now - since < stateTimeoutMs) {
            return;
        }
        waitingSinceMs.remove(tp);
        String reason = "The " + what + " of " + tp + " waited " + (now - since) + " ms (mirror.state.timeout.ms) for"
                + " the controller to raise the leader epoch to " + w.record().minLeaderEpoch() + "; it is still "
                + partition.leaderEpoch() + " (is a controller elected and connected to ZooKeeper?)";
        log.warn("[Mirror {} {}] {}", def.name(), tp, reason);
        transition(tp, partition, def, w, w.record().failed(reason, true, partition.leaderEpoch()), reason);
    }

    /**
     * Cuts a non-empty local log before mirroring into it: a failback keeps what the peer mirrored from this
     * cluster (up to its last mirrored epoch and offset) and cuts the rest; without such a record, everything goes
     * and is mirrored again. False (and the partition FAILED, retried) while the peer cannot be reached.
     */
    private boolean truncateForMirroring(TopicPartition tp, Partition partition, MirrorDefinition def, Written w)
            throws Exception {
        PeerAnswer answer = peerAnswers.computeIfAbsent(def.name() + "/" + tp.topic(), k -> askPeer(def, tp.topic()));
        if (answer.unreachable() != null) {
            String reason = "Cannot ask the source for the last mirrored epoch of " + tp + " before truncating: "
                    + answer.unreachable().getMessage();
            transition(tp, partition, def, w, w.record().failed(reason, true, partition.leaderEpoch()), reason);
            return false;
        }
        Optional<LastMirroredTruncation.LastMirrored> peer = Optional.ofNullable(answer.records().get(tp.partition()));
        long end = partition.log().logEndOffset();
        java.util.OptionalLong endOfEpoch = java.util.OptionalLong.empty();
        if (peer.isPresent()) {
            var local = partition.log().endOffsetForEpoch(peer.get().epoch());
            if (local.isPresent()) {
                endOfEpoch = java.util.OptionalLong.of(local.get().offset());
            }
        }
        long to = LastMirroredTruncation.truncationOffset(end, peer, endOfEpoch);
        if (to == 0) {
            partition.truncateFullyAndStartAt(0, "mirror " + def.name() + " starts with no last mirrored epoch"
                    + " from the source: everything is mirrored again");
        } else if (to < end) {
            partition.truncateTo(to, "failback from mirror " + def.name() + ": the source mirrored this log up to "
                    + "offset " + peer.get().offset() + " in epoch " + peer.get().epoch() + "; " + (end - to)
                    + " records written here after that are cut");
        }
        log.info("[Mirror {} {}] log aligned for mirroring at offset {} (was {}; source's last mirrored {})",
                def.name(), tp, to, end, peer.map(p -> "epoch " + p.epoch() + " offset " + p.offset())
                        .orElse("none"));
        return true;
    }

    /** The peer's last-mirrored records for one topic, or why it could not be asked. */
    private record PeerAnswer(Map<Integer, LastMirroredTruncation.LastMirrored> records, IOException unreachable) {
    }

    private PeerAnswer askPeer(MirrorDefinition def, String topic) {
        java.util.List<Integer> partitions = metadata.image().topic(topic)
                .map(t -> java.util.List.copyOf(t.partitions().keySet())).orElse(java.util.List.of());
        try {
            return new PeerAnswer(PeerLastMirrored.lookup(def, metadata.image().clusterId(), topic, partitions), null);
        } catch (io.twinlog.clients.mirror.MirrorAdmin.UnreachableException e) {
            return new PeerAnswer(Map.of(), e);
        }
    }

    private int fenceTarget(Partition partition, int sourceEpoch) {
        int held = Math.max(sourceEpoch, partition.log().latestEpoch().orElse(-1));
        return Math.max(partition.leaderEpoch(), held + EPOCH_MARGIN);
    }

    /** The one guarded transition: legality, durable write, then the in-memory effect and a log line. */
    /** What this leader knows now: its fetcher's last source high watermark (else the recorded one), its log end. */
    private MirrorProgress progress(TopicPartition tp, Partition partition, MirrorPartitionRecord rec) {
        Long sourceHw = sourceHighWatermarks.get(tp);
        return new MirrorProgress(sourceHw != null ? sourceHw : rec.progress().sourceHighWatermark(),
                partition.log().logEndOffset());
    }

    private void transition(TopicPartition tp, Partition partition, MirrorDefinition def, Written from,
                            MirrorPartitionRecord proposed, String reason) throws Exception {
        // every state write also records where the partition is, so describe is current right after a change
        MirrorPartitionRecord to = proposed.withProgress(progress(tp, partition, proposed));
        MirrorPartitionState fromState = from.record().state();
        if (!MirrorTransitions.isValid(fromState, to.state())) {
            throw new IllegalStateException("Illegal mirror transition " + fromState + " -> " + to.state() + " for " + tp);
        }
        int version = writer.write(tp, to, from.version());
        if (version < 0) {
            log.info("[Mirror {} {}] state record changed concurrently; re-reading", def.name(), tp);
            written.remove(tp);
            return;
        }
        written.put(tp, new Written(to, version));
        if (fromState != to.state()) {
            waitingSinceMs.remove(tp);
            log.info("[Mirror {} {}] {} -> {}: {} (leader epoch {}, log end offset {})", def.name(), tp, fromState,
                    to.state(), reason, partition.leaderEpoch(), partition.log().logEndOffset());
        } else {
            log.info("[Mirror {} {}] {}: {}", def.name(), tp, to.state(), reason);
        }
        if (to.state() == MirrorPartitionState.FAILED) {
            failedAtMs.put(tp, time.milliseconds());
        }
    }

    private final Map<String, Map<String, String>> fetcherConfigs = new HashMap<>();

    private MirrorFetcherThread fetcherFor(MirrorDefinition def) {
        Map<String, String> clientConfigs = def.sourceClientConfigs();
        Map<String, String> previous = fetcherConfigs.put(def.name(), clientConfigs);
        if (previous != null && !previous.equals(clientConfigs)) {
            // the mirror now points elsewhere or connects differently: a new fetcher, nothing of the old lingers
            MirrorFetcherThread old = fetchers.remove(def.name());
            if (old != null) {
                log.info("[Mirror {}] source address or client configs changed; restarting its fetcher (now {})",
                        def.name(), def.sourceBootstrap());
                old.shutdown();
            }
        }
        return fetchers.computeIfAbsent(def.name(), name -> {
            MirrorFetcherThread f = new MirrorFetcherThread(name, clientConfigs, stateTimeoutMs, new Listener(def),
                    time);
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
            submit(() -> withLeader(tp, (partition, w) -> transition(tp, partition, def, w,
                    w.record().transitionTo(MirrorPartitionState.EPOCH_FENCING, partition.leaderEpoch())
                            .withMinLeaderEpoch(fenceTarget(partition, sourceEpoch)),
                    "a source batch has epoch " + sourceEpoch + " >= local leader epoch " + partition.leaderEpoch())));
        }

        @Override
        public void onProgress(TopicPartition tp, long sourceHighWatermark, long localLogEndOffset) {
            sourceHighWatermarks.put(tp, sourceHighWatermark);
        }

        @Override
        public void onFailure(TopicPartition tp, String reason, boolean retriable) {
            submit(() -> withLeader(tp, (partition, w) -> {
                if (w.record().state() == MirrorPartitionState.MIRRORING) {
                    transition(tp, partition, def, w, w.record().failed(reason, retriable, partition.leaderEpoch()),
                            reason + (retriable ? " (will retry)" : " (not retriable: stop and start the topic)"));
                }
            }));
        }

        private void withLeader(TopicPartition tp, PartitionAction action) {
            Optional<Partition> p = replicaManager.partition(tp);
            if (p.isEmpty() || !p.get().isLeader()) {
                return;
            }
            try {
                action.run(p.get(), current(tp, p.get(), metadata.image().mirrors().partitions().get(tp)));
            } catch (Exception e) {
                log.warn("[Mirror {} {}] could not record a fetcher event: {}", def.name(), tp, e.toString());
            }
        }
    }

    @FunctionalInterface
    private interface PartitionAction {
        void run(Partition partition, Written current) throws Exception;
    }

    /** The local partition as the mirror fetcher sees it. */
    private final class PartitionSink implements MirrorPartitionSink {
        private final Partition partition;

        PartitionSink(Partition partition) {
            this.partition = partition;
        }

        @Override
        public boolean isLeader() {
            return partition.isLeader();
        }

        @Override
        public int leaderEpoch() {
            return partition.leaderEpoch();
        }

        @Override
        public long logEndOffset() {
            return partition.log().logEndOffset();
        }

        @Override
        public long logStartOffset() {
            return partition.log().logStartOffset();
        }

        @Override
        public Optional<Integer> latestEpoch() {
            return partition.log().latestEpoch();
        }

        @Override
        public void appendMirrored(MemoryRecords records) throws IOException {
            partition.appendMirroredRecords(records);
            replicaManager.completeDelayedRequests(partition.topicPartition());
        }

        @Override
        public void truncateFullyAndStartAt(long offset, String reason) {
            partition.truncateFullyAndStartAt(offset, reason);
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
        fetchers.values().forEach(MirrorFetcherThread::shutdown);
        fetchers.clear();
    }
}
