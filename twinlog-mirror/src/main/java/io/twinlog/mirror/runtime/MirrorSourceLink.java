package io.twinlog.mirror.runtime;

import io.twinlog.mirror.fetcher.MirrorFetchListener;
import io.twinlog.mirror.fetcher.MirrorFetcher;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;

/**
 * One mirror's link to its source on this broker: its fetcher ({@link MirrorSource}), started when a partition of the
 * mirror first needs the source, restarted when the mirror's address or client configs change, and stopped once no
 * partition led here needs it; and what the fetcher has seen of the source's identity, recorded in the mirror's
 * definition (decision 68). Manager thread only, but for the fetcher's own threads.
 */
final class MirrorSourceLink {
    private static final Logger log = LoggerFactory.getLogger(MirrorWorker.class);
    /** A source end fetched longer ago than this, with the fetch since unanswered, is shown unknown (decision 80). */
    static final long SOURCE_END_STALE_MS = 10_000;

    private final String mirror;
    private final MirrorSource.Factory sources;
    private final MirrorRecords records;
    /** Waits for a stopped fetcher's threads, which may be inside a fetch from a blackholed source (issue 25.3). */
    private final Executor closer;
    private final Time time;
    /** The fetcher's callbacks for a definition, handed to the manager's thread. */
    private final Function<MirrorDefinition, MirrorFetchListener> listeners;
    /** The configs the fetcher was started with: other ones restart it. */
    private Map<String, String> configs;
    private MirrorSource source;

    MirrorSourceLink(String mirror, MirrorSource.Factory sources, MirrorRecords records, Executor closer, Time time,
                     Function<MirrorDefinition, MirrorFetchListener> listeners) {
        this.mirror = mirror;
        this.sources = sources;
        this.records = records;
        this.closer = closer;
        this.time = time;
        this.listeners = listeners;
    }

    Optional<MirrorSource> existing() {
        return Optional.ofNullable(source);
    }

    /**
     * The mirror's fetcher, started if there is none. One started with other client configs is stopped first (the
     * mirror now points elsewhere or connects differently: nothing of the old lingers) and {@code onRestart} runs.
     */
    MirrorSource sourceFor(MirrorDefinition def, Runnable onRestart) {
        Map<String, String> clientConfigs = def.sourceClientConfigs();
        Map<String, String> previous = configs;
        configs = clientConfigs;
        if (previous != null && !previous.equals(clientConfigs)) {
            MirrorSource old = source;
            source = null;
            if (old != null) {
                log.info("[Mirror {}] source address or client configs changed; restarting its fetcher (now {})",
                        def.name(), def.sourceBootstrap());
                closeInBackground(old);
            }
            onRestart.run();
        }
        if (source == null) {
            source = sources.start(def, listeners.apply(def));
        }
        return source;
    }

    /** A changed bandwidth cap applies live: no fetcher restart for a mirror.* setting. */
    void updateReplicationQuota(MirrorDefinition def) {
        if (source != null) {
            source.updateReplicationQuota(def.replicationThrottledRate());
        }
    }

    /**
     * Ends the fetcher once this broker has nothing to fetch for the mirror any more (every partition of it led here
     * is failed over, deleted, or led elsewhere now): threads, connections and fetch metrics. The next partition to
     * mirror starts a new one.
     */
    void stopUnlessNeeded(boolean needed) {
        if (source != null && !needed) {
            log.info("[Mirror {}] this broker has no partition of it to mirror now ({} fetched until now); its "
                    + "fetcher stops", mirror, source.partitionCount());
            closeInBackground(source);
            source = null;
            configs = null;
        }
    }

    /**
     * Whether the source broker fetched for {@code tp} has left a fetch unanswered for longer than
     * {@value #SOURCE_END_STALE_MS} ms (a fetch returns within its 500 ms wait): then the source end last fetched
     * is no longer known to be current, and describe shows the lag unknown rather than, say, 0 for the 30 s the
     * fetch takes to time out through a network that drops packets (issue 25, point 10; decision 80).
     */
    boolean sourceEndOutOfDate(TopicPartition tp) {
        OptionalLong answered = source == null ? OptionalLong.empty() : source.lastAnsweredMs(tp);
        return answered.isPresent() && time.hiResClockMs() - answered.getAsLong() > SOURCE_END_STALE_MS;
    }

    /**
     * Records the source's cluster ID at first contact if the mirror was created before the source was reachable,
     * and gives the recorded one to the fetcher, which adopts no other cluster's metadata (decision 68): an address
     * that answers for another cluster (a rebuilt source, a wrong DNS entry) is the partitions' source problem
     * (WRONG_CLUSTER, retriable) rather than a reason to fail the mirror for good, so mirroring resumes by itself once
     * the source cluster answers again. While it lasts the mirror's state reason says so too.
     */
    void checkSourceClusterId(MirrorDefinition def) {
        if (source == null) {
            return; // no partition this broker leads needs the source (decision 64): nothing was seen, none is made
        }
        source.expectClusterId(def.sourceClusterId());
        Optional<String> seen = source.sourceClusterId();
        if (def.sourceClusterId().isEmpty()) {
            if (seen.isEmpty()) {
                return;
            }
            try {
                if (records.updateDefinition(def, def.withSourceClusterId(seen.get())
                        .withState(MirrorDefinition.State.ACTIVE, Optional.empty()))) {
                    log.info("[Mirror {}] recorded the source cluster ID {} at first contact", def.name(), seen.get());
                }
            } catch (Exception e) { // broad: any store failure is tried again at the next pass; logged with its trace
                log.warn("[Mirror {}] could not record the source cluster ID", def.name(), e);
            }
            return;
        }
        Optional<String> wrongCluster = source.wrongClusterReason();
        boolean shown = def.stateReason().filter(r -> r.startsWith(MirrorFetcher.WRONG_CLUSTER_PREFIX)).isPresent();
        Optional<String> reason = wrongCluster.isPresent() ? wrongCluster : shown ? Optional.empty() : def.stateReason();
        if (def.state() == MirrorDefinition.State.ACTIVE && !reason.equals(def.stateReason())) {
            try {
                records.updateDefinition(def, def.withState(MirrorDefinition.State.ACTIVE, reason));
            } catch (Exception e) { // broad: any store failure is tried again at the next pass; logged with its trace
                log.warn("[Mirror {}] could not record its state reason", def.name(), e);
            }
        }
    }

    /** Detaches {@code stopped} now (nothing appended after this) and waits for its threads on the closer. */
    private void closeInBackground(MirrorSource stopped) {
        stopped.detach();
        try {
            closer.execute(() -> {
                try {
                    stopped.shutdown();
                } catch (Throwable t) { // broad: an Error too, on the closer's thread; logged with its trace
                    log.error("[Mirror {}] closing its stopped fetcher failed", mirror, t);
                }
            });
        } catch (RejectedExecutionException closing) {
            stopped.shutdown(); // the manager is closing: it waits for its fetchers anyway
        }
    }

    /** The manager is closing: the fetcher ends, and this thread waits for it. */
    void close() {
        if (source != null) {
            source.shutdown();
            source = null;
        }
    }
}
