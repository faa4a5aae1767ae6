package io.twinlog.mirror.runtime;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.mirror.MirrorTopicConfigs;
import io.twinlog.common.progress.ProgressReporter;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.mirror.fetcher.MirrorFetchListener;
import io.twinlog.mirror.partition.FailbackDecision;
import io.twinlog.mirror.partition.MirrorAction;
import io.twinlog.mirror.partition.MirrorDecision;
import io.twinlog.mirror.partition.MirrorEvent;
import io.twinlog.mirror.partition.MirrorPartitionHost;
import io.twinlog.mirror.partition.MirrorPartitionMachine;
import io.twinlog.mirror.partition.PartitionView;
import io.twinlog.mirror.partition.TimeCut;
import io.twinlog.mirror.partition.PeerLookup;
import io.twinlog.mirror.partition.SourceProblem;
import io.twinlog.mirror.partition.VersionedRecord;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorProgress;
import io.twinlog.mirror.store.MirrorStore;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The mirror runtime of one mirror on this broker: the partitions of it this broker leads (a {@link WorkerPartition}
 * each, with the driver of its {@link MirrorPartitionMachine}), its fetcher
 * ({@link MirrorSourceLink}), its calls to the peer and the quarantine ({@link MirrorCallRouter} over its own
 * {@link MirrorCalls} threads), its pending state writes ({@link PendingWrites}) and its partitions' metrics. Started
 * and stopped by the {@link MirrorManager} from the metadata, which hands it its events; what to do is decided by
 * the pure machine, the worker runs the actions it returns and writes the record it returns.
 *
 * <p>Events, each handled on the manager's thread (so a worker's state has one owner and needs no lock):
 * <ul>
 *   <li>{@link #handlePass}: partitions of the mirror get a pass (a new image changed them, the periodic tick, the
 *       outcome of a call, a high watermark a failover waits on); their records are deferred to {@link #flush};</li>
 *   <li>{@link #handleFetcherReport}: the fetcher saw something (a source epoch to fence, a divergence, a failure);</li>
 *   <li>{@link #handleTick}: the periodic housekeeping (quota, partitions no longer the mirror's, idle threads);</li>
 *   <li>{@link #stop}: the mirror is gone from the metadata; {@link #close}: the broker stops.</li>
 * </ul>
 * The calls that may wait on the peer or a long copy run on the mirror's own threads: the pass that needs one starts
 * it and ends with the partition waiting; its outcome comes back as a pass ({@link PartitionCalls}: kept per
 * partition on the leader epoch and record version it was asked on). So one mirror's slow or dead peer never delays
 * another mirror's passes (issue 25, point 3).
 */
final class MirrorWorker implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MirrorWorker.class);
    private static final long CATCH_UP_REPORT_MIN_LAG = 10_000;

    private final String name;
    private final MirrorWorkerServices services;
    private final MirrorSourceLink source;
    private final MirrorCallRouter calls;
    private final PendingWrites writes;
    private final WorkerActions actions;
    /** The partitions of the mirror this broker leads; manager thread only. */
    private final Map<TopicPartition, WorkerPartition> partitions = new HashMap<>();
    /** Written by the fetcher threads, read on the manager thread. */
    private final Map<TopicPartition, Long> sourceHighWatermarks = new ConcurrentHashMap<>();
    /** The newest mirrored timestamp and mirrored-up-to time of each led partition (decision 122). */
    private final MirroredTimes mirroredTimes;
    /**
     * Led partitions in STOPPING: each step left waits on the high watermark (reaching the log end before the last
     * mirrored offset is recorded; passing the barrier before the topic is writable), so its move gives them a pass
     * rather than the next tick. Read by the thread that moved the high watermark.
     */
    private final Set<TopicPartition> awaitingHighWatermark = ConcurrentHashMap.newKeySet();
    /** The definition as read at the last tick (a pass between ticks does not read ZooKeeper for it); or null. */
    private MirrorDefinition definition;
    /** Stopped or closed: a late event (a fetcher report, a call's outcome) finds nothing to do. */
    private boolean stopped;

    MirrorWorker(String name, MirrorWorkerServices services) {
        this.name = name;
        this.services = services;
        this.source = new MirrorSourceLink(name, services.sources(), services.records(), services.fetcherCloser(),
                services.time(), FetcherReports::new);
        this.calls = new MirrorCallRouter(mirror -> new MirrorCalls(services.brokerId(), mirror,
                services.managerThread()));
        this.writes = new PendingWrites(name, services.records(), services.metrics(), this::refused);
        this.actions = new WorkerActions(name, services, source, calls);
        this.mirroredTimes = new MirroredTimes(name, services.metrics());
    }

    String name() {
        return name;
    }

    /** The partitions of the mirror this broker leads, as of its last pass. */
    Set<TopicPartition> ledPartitions() {
        return partitions.keySet();
    }

    /** Whether a move of {@code tp}'s high watermark should give it a pass; any thread. */
    boolean awaitsHighWatermark(TopicPartition tp) {
        return awaitingHighWatermark.contains(tp);
    }

    /** A tick begins: the definition is read again at its first pass. */
    void beginTick() {
        definition = null;
    }

    /**
     * Event: a pass over some of the mirror's partitions, by topic; each led one runs its state machine, the others
     * are forgotten. Their records wait for {@link #flush}.
     */
    void handlePass(MetadataImage image, Map<String, Collection<Integer>> partitionsByTopic) {
        MirrorDefinition def = stopped ? null : definition();
        if (def == null) {
            return;
        }
        source.checkSourceClusterId(def);
        for (Map.Entry<String, Collection<Integer>> e : partitionsByTopic.entrySet()) {
            String topic = e.getKey();
            MirrorImage.MirrorTopic mt = image.mirrors().topics().get(topic);
            if (mt == null || !mt.mirror().equals(name) || image.topic(topic).isEmpty()) {
                continue;
            }
            Uuid localTopicId = image.topic(topic).get().topicId();
            DesiredMirrorState desired = mt.desired();
            for (Integer p : e.getValue()) {
                TopicPartition tp = new TopicPartition(topic, p);
                // only a partition to mirror needs the fetcher: a follower's broker, or a failed-over topic, starts
                // none; a failover to a point in time mirrors on until it reaches the time, and stops short of it when
                // the source does not answer
                WorkerPartition known = partitions.get(tp);
                boolean needsSource = desired != DesiredMirrorState.STOPPED
                        || mt.stopAt().isPresent() && (known == null || !known.failedOver);
                Optional<MirrorLocalPartition> partition = services.partitions().partition(tp);
                if (partition.isEmpty() || !partition.get().isLeader()) {
                    forget(tp);
                    continue;
                }
                try {
                    run(tp, partition.get(), def, mt, MirrorEvent.TICK, needsSource
                            ? source.sourceFor(def, () -> calls.close(name)).sourceProblem(mt.sourceName(topic),
                                    localTopicId)
                            : Optional.empty(), true);
                } catch (PassStops.WriteFirst ex) {
                    // its record goes with the others of this pass; the follow-up pass runs the action
                } catch (PassStops.ConcurrentRecordChange ex) {
                    log.info("[Mirror {} {}] {}; deciding again at the next pass", name, tp, ex.getMessage());
                } catch (PassStops.FailoverStepsQueued ex) {
                    // its barrier is appended at the end of this pass; the pass after it goes on
                } catch (MirrorCallRouter.AwaitingCall ex) {
                    // its call's outcome gives it a pass
                } catch (Exception ex) { // broad: one partition's failed step must not stop the others'; logged
                    log.warn("[Mirror {} {}] step failed; deciding again at the next pass", name, tp, ex);
                }
            }
        }
    }

    /** Writes the records this worker's passes decided since the last flush; the partitions whose state changed. */
    Set<TopicPartition> flush() {
        return writes.flush();
    }

    /** Event: the fetcher reported {@code event} about {@code tp}, decided if this broker still leads it. */
    void handleFetcherReport(TopicPartition tp, MirrorEvent event, MirrorDefinition def) {
        Optional<MirrorLocalPartition> p = services.partitions().partition(tp);
        MirrorImage.MirrorTopic mt = services.metadata().image().mirrors().topics().get(tp.topic());
        if (stopped || p.isEmpty() || !p.get().isLeader() || mt == null || !mt.mirror().equals(name)) {
            return;
        }
        try {
            run(tp, p.get(), def, mt, event, Optional.empty(), false);
        } catch (PassStops.FailoverStepsQueued e) {
            // appended just below
        } catch (MirrorCallRouter.AwaitingCall e) {
            // its call's outcome gives it a pass
        } catch (Exception e) { // broad: the report is decided again at the next pass; logged with its trace
            log.warn("[Mirror {} {}] could not record a fetcher event", def.name(), tp, e);
        } finally {
            flush();
            services.runFailoverSteps();
        }
    }

    /**
     * Event: the periodic housekeeping after a tick's passes. A changed bandwidth cap applies live; partitions whose
     * topic is no longer this mirror's (deleted, its mirror gone) leave nothing behind, in the fetcher neither; the
     * call threads and the fetcher end once nothing led here needs them.
     */
    void handleTick(MetadataImage image) {
        if (definition != null) {
            source.updateReplicationQuota(definition);
        }
        for (TopicPartition tp : List.copyOf(partitions.keySet())) {
            MirrorImage.MirrorTopic mt = image.mirrors().topics().get(tp.topic());
            if (mt == null || !mt.mirror().equals(name)) {
                forget(tp);
            }
        }
        awaitingHighWatermark.removeIf(tp -> !partitions.containsKey(tp));
        sourceHighWatermarks.keySet().removeIf(tp -> !partitions.containsKey(tp));
        mirroredTimes.retain(partitions.keySet());
        releaseIdleThreads();
    }

    /** Event: the mirror is gone from the metadata: every partition is forgotten and its threads end. */
    void stop() {
        stopped = true;
        List.copyOf(partitions.keySet()).forEach(this::forget);
        releaseIdleThreads();
    }

    private void releaseIdleThreads() {
        calls.closeIdle(partitions.isEmpty() ? Set.of() : Set.of(name));
        source.stopUnlessNeeded(partitions.values().stream().anyMatch(c -> !c.failedOver));
    }

    /** The broker stops: the call threads end and the fetcher is waited for. */
    @Override
    public void close() {
        stopped = true;
        calls.closeAll();
        source.close();
    }

    /**
     * This broker no longer leads {@code tp} (or it is no longer this mirror's): its fetch and every memory of it go.
     * The fetcher is not started for it; the tick closes one left with nothing to fetch.
     */
    private void forget(TopicPartition tp) {
        partitions.remove(tp);
        awaitingHighWatermark.remove(tp);
        sourceHighWatermarks.remove(tp);
        mirroredTimes.remove(tp);
        services.metrics().removePartition(tp);
        source.existing().ifPresent(f -> f.removePartition(tp));
    }

    private void refused(TopicPartition tp) {
        WorkerPartition ctx = partitions.get(tp);
        if (ctx != null) {
            ctx.driver.forgetWritten();
            ctx.refused = true;
        }
    }

    private MirrorDefinition definition() {
        if (definition == null) {
            try {
                definition = services.records().definition(name).orElse(null);
            } catch (MirrorStore.UnreadableMirrorException e) {
                return null; // reported once by the store; read again at the next pass
            } catch (Exception e) { // broad: any store failure is read again at the next pass; logged with its trace
                if (!services.closed().getAsBoolean()) { // an interrupted read while the broker shuts down is expected
                    log.warn("Could not read cluster mirror {}", name, e);
                }
                return null;
            }
        }
        return definition;
    }

    /** One pass of the state machine over a partition this broker leads (or a fetcher report about it). */
    private void run(TopicPartition tp, MirrorLocalPartition partition, MirrorDefinition def,
                     MirrorImage.MirrorTopic mt, MirrorEvent event, Optional<SourceProblem> sourceProblem,
                     boolean batched) throws Exception {
        DesiredMirrorState desired = mt.desired();
        WorkerPartition ctx = partitions.get(tp);
        if (ctx == null) {
            ctx = new WorkerPartition(services.machine());
            partitions.put(tp, ctx);
            mirroredTimes.seed(tp, partition); // a new leader knows its newest timestamp before its first fetch
        }
        ctx.refused = false;
        Long sourceHw = sourceHighWatermarks.get(tp);
        boolean outOfDate = sourceHw != null && source.sourceEndOutOfDate(tp);
        if (outOfDate) {
            sourceHw = MirrorProgress.UNKNOWN.sourceHighWatermark(); // describe's lag -1, not a figure from before
        }
        services.metrics().onSourceEndOutOfDate(tp, outOfDate); // and the lag gauges alike
        PassHost host = new PassHost(tp, ctx, partition, def, batched);
        try {
            ctx.driver.pass(host, desired, event, sourceProblem,
                    sourceHw == null ? OptionalLong.empty() : OptionalLong.of(sourceHw), mirroredTimes.get(tp),
                    services.time().milliseconds(), mt.stopAt());
        } finally { // a pass that stopped early (a queued barrier) still waits on the high watermark
            MirrorPartitionState state = ctx.driver.current(host, partition.leaderEpoch()).record().state();
            ctx.failedOver = desired == DesiredMirrorState.STOPPED && state == MirrorPartitionState.STOPPED;
            if (state == MirrorPartitionState.MIRRORING && ctx.lastState != null
                    && ctx.lastState != MirrorPartitionState.MIRRORING) {
                mirroredTimes.seed(tp, partition); // back to mirroring: a cut meanwhile may have changed the log
            }
            ctx.lastState = state;
            services.metrics().onPartitionState(name, tp, partition, state);
            mirroredTimes.publish(tp);
            if (state == MirrorPartitionState.STOPPING) {
                awaitingHighWatermark.add(tp);
            } else {
                awaitingHighWatermark.remove(tp);
            }
            maybeReportCatchUp(tp, partition, ctx, state);
        }
    }

    /**
     * A long copy (a new mirror of a big topic, re-mirroring after a truncation) says how far it is: once a partition
     * is more than {@value #CATCH_UP_REPORT_MIN_LAG} records behind its source, a {@link ProgressReporter} logs the
     * percentage of the backlog copied, the rate and the time left at most every 30 s, and once that it caught up
     * (nothing for a backlog copied within 30 s). A partition leaving MIRRORING ends its report.
     */
    private void maybeReportCatchUp(TopicPartition tp, MirrorLocalPartition partition, WorkerPartition ctx,
                                    MirrorPartitionState state) {
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
            ctx.catchUp = new ProgressReporter(log, "[Mirror " + name + " " + tp + "] catching up with the "
                    + "source from offset " + end, "records", services.time());
        }
        if (ctx.catchUp != null) {
            ctx.catchUp.update(end, sourceHw);
            if (lag == 0) {
                ctx.catchUp.finish("caught up with the source at offset " + end);
                ctx.catchUp = null;
            }
        }
    }

    /** The state machine's surroundings for one pass: the partition, the mirror's fetcher, the peer, the records. */
    private final class PassHost implements MirrorPartitionHost {
        private final TopicPartition tp;
        private final WorkerPartition ctx;
        private final MirrorLocalPartition partition;
        private final MirrorDefinition def;
        /** The peer's answer as the driver has it in this pass: what the decision written next was made with. */
        private PeerLookup peer = PeerLookup.NOT_ASKED;
        /**
         * Part of a pass over many partitions: an action that must follow this partition's deferred record stops its
         * pass ({@link PassStops.WriteFirst}) rather than writing that record alone, so a pass over 1,000 starting
         * partitions writes their records in a few transactions instead of one each (decision 94).
         */
        private final boolean batched;

        PassHost(TopicPartition tp, WorkerPartition ctx, MirrorLocalPartition partition, MirrorDefinition def,
                 boolean batched) {
            this.tp = tp;
            this.ctx = ctx;
            this.partition = partition;
            this.def = def;
            this.batched = batched;
        }

        @Override
        public Optional<VersionedRecord> stored() {
            MirrorImage.MirrorPartition mp = services.metadata().image().mirrors().partitions().get(tp);
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
            MetadataImage image = services.metadata().image();
            return partition.view().withCluster(
                    MirrorTopicConfigs.supportsUncleanLeaderElection(image.topicConfig(tp.topic())),
                    image.mirrors().truncationsApplied(tp));
        }

        @Override
        public TimeCut timeCut(long atMs) throws IOException {
            return partition.timeCut(atMs);
        }

        @Override
        public PeerLookup execute(MirrorAction action, PeerLookup peer) throws Exception {
            if (!(action instanceof MirrorAction.RemoveFetcher) && writes.holds(tp)) {
                // an action follows a write of this pass: the record goes first, as the machine decided them (not
                // for removing the fetcher: no longer copying is safe under any record)
                if (batched) {
                    throw new PassStops.WriteFirst(tp);
                }
                flush();
                if (partitions.get(tp) != ctx || ctx.refused) {
                    throw new PassStops.ConcurrentRecordChange(tp);
                }
            }
            PeerLookup after = actions.execute(action, tp, partition, def, peer, this::callBasis,
                    () -> partitions.get(tp) == ctx, ctx.calls);
            this.peer = after;
            if (action instanceof MirrorAction.AppendProducerStateBarrier) {
                throw new PassStops.FailoverStepsQueued(tp); // nothing to decide on before the barrier is in the log
            }
            return after;
        }

        /** The leadership and record a call of this partition is asked on, now. */
        private PartitionCalls.Basis callBasis() {
            int epoch = partition.leaderEpoch();
            return new PartitionCalls.Basis(epoch, ctx.driver.current(this, epoch).version());
        }

        @Override
        public int write(VersionedRecord current, MirrorDecision decision) {
            return writes.defer(tp, partition, current, decision,
                    FailbackDecision.recordsFailback(current.record().state(), decision, peer));
        }
    }

    /** The fetcher's callbacks for {@code def}, each handed to the manager's thread as an event of this worker. */
    private final class FetcherReports implements MirrorFetchListener {
        private final MirrorDefinition def;

        FetcherReports(MirrorDefinition def) {
            this.def = def;
        }

        @Override
        public void onEpochFencingNeeded(TopicPartition tp, int sourceEpoch) {
            report(tp, new MirrorEvent.EpochFencingNeeded(sourceEpoch));
        }

        @Override
        public void onProgress(TopicPartition tp, long sourceHighWatermark, long localLogEndOffset) {
            sourceHighWatermarks.put(tp, sourceHighWatermark);
        }

        @Override
        public void onMirrored(TopicPartition tp, long appendedNewestTimestamp, long caughtUpAtMs) {
            mirroredTimes.onFetched(tp, appendedNewestTimestamp, caughtUpAtMs);
        }

        @Override
        public void onSourceDiverged(TopicPartition tp, int sourceEpoch, long sourceEndOffset, String reason) {
            report(tp, new MirrorEvent.SourceDiverged(sourceEpoch, sourceEndOffset, reason));
        }

        @Override
        public void onFailure(TopicPartition tp, String reason, boolean retriable) {
            report(tp, new MirrorEvent.FetchFailed(reason, retriable));
        }

        private void report(TopicPartition tp, MirrorEvent event) {
            services.managerThread().execute(() -> handleFetcherReport(tp, event, def));
        }
    }
}
