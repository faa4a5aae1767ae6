package io.twinlog.mirror.runtime;

import com.yammer.metrics.core.MetricName;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.tasks.BackgroundTask;
import io.twinlog.mirror.MirrorPartitionSink;
import io.twinlog.mirror.fetcher.MirrorFetchMetrics;
import io.twinlog.mirror.partition.FailbackDecision;
import io.twinlog.mirror.partition.MirroredTime;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The mirror metrics of one broker, in its Yammer registry with Kafka-style MBean names (docs/operations.md,
 * "Mirror metrics"; KIP-1279's names where it has them):
 * <ul>
 *   <li>{@code kafka.server:type=MirrorMetadataManager}: partitions per state ({@code MirroringPartitionState}, ...,
 *       one per {@link MirrorPartitionState}, in total and per {@code mirror}), the sync error meters and
 *       {@code ConsumerGroupOffsetSyncAgeMs} per mirror;</li>
 *   <li>{@code kafka.server:type=MirrorFetcherManager,clientId=MirrorReplica}: {@code MaxLag},
 *       {@code MinFetchRate}, {@code FailedPartitionsCount}; each fetch thread's {@code kafka.server:type=FetcherStats,
 *       name=RequestsPerSec,clientId=MirrorReplica,mirror,brokerHost,brokerPort};</li>
 *   <li>{@code kafka.server:type=ClusterMirror,mirror=<m>}: lag (sum of records and bytes over the partitions whose
 *       lag is known; max of seconds, -1 while any partition's is unknown), {@code MaxRpoSeconds} (the highest
 *       RPO of its partitions led here, -1 while any is unknown), what the fetchers appended, failovers,
 *       failbacks, truncations, records quarantined, reconciliation results;</li>
 *   <li>{@code kafka.server:type=ClusterMirrorPartition,mirror,topic,partition}: each led partition's lag
 *       ({@link PartitionLag}; -1 when unknown) and {@code RpoSeconds}, now minus its mirrored-up-to time
 *       ({@link MirroredTime}; -1 when unknown).</li>
 * </ul>
 * Partition metrics cover the mirror partitions this broker leads, per-partition lag only while they mirror (not
 * STOPPING, STOPPED or UNKNOWN); a partition's go when it stops mirroring or this broker stops leading it, a
 * mirror's when no topic of it is left here and the controller's sync no longer lists it.
 *
 * <p>This class keeps the broker-wide metrics and which mirrors and partitions have metrics; each mirror's are a
 * {@link MirrorSetMetrics}, each led partition's a {@link LedPartitionMetrics}, what a mirror's fetch threads record
 * goes through its {@link MirrorFetchRecorder}, and all register in the broker's registry through one
 * {@link MirrorMetricRegistry}.
 *
 * <p>Threading: partition states are set by the mirror manager's thread only; the fetch threads write each
 * partition's progress to volatile fields (one fetch thread at a time per partition: the fetcher's append lock);
 * the sync thread marks its meters; gauges are read by any reporter thread. Nothing on the fetch path allocates.
 */
public final class MirrorMetrics implements AutoCloseable {
    private static final MirrorPartitionState[] STATES = MirrorPartitionState.values();
    /** States with no per-partition lag: the partition no longer mirrors (or never did). */
    private static final Set<MirrorPartitionState> NOT_MIRRORING = EnumSet.of(MirrorPartitionState.STOPPING,
            MirrorPartitionState.STOPPED, MirrorPartitionState.UNKNOWN);

    private final MirrorMetricRegistry registry;
    private final Time time;
    /** Every mirror partition this broker leads, with its state; changed by the manager thread only. */
    private final Map<TopicPartition, LedPartitionMetrics> partitions = new ConcurrentHashMap<>();
    private final Map<String, MirrorSetMetrics> mirrors = new ConcurrentHashMap<>();
    private final AtomicIntegerArray stateCounts = new AtomicIntegerArray(STATES.length);
    private final Set<MirrorFetchRecorder.FetchThreadMeter> fetchThreads = ConcurrentHashMap.newKeySet();
    private final List<MetricName> brokerWide = new ArrayList<>();
    private final List<BackgroundTask> backgroundTasks = new CopyOnWriteArrayList<>();
    /** The mirrors the controller's metadata sync listed last (empty on other brokers). */
    private volatile Set<String> syncedMirrors = Set.of();

    public MirrorMetrics(BrokerMetrics metrics, Time time) {
        this.registry = new MirrorMetricRegistry(metrics, time);
        this.time = time;
        for (MirrorPartitionState state : STATES) {
            registry.gauge(brokerWide, registry.metadataManager, stateMetricName(state), Map.of(),
                    () -> stateCounts.get(state.ordinal()));
        }
        Map<String, String> client = Map.of("clientId", MirrorMetricRegistry.CLIENT_ID);
        registry.gauge(brokerWide, registry.fetcherManager, "MaxLag", client, this::maxLag);
        registry.gauge(brokerWide, registry.fetcherManager, "MinFetchRate", client, this::minFetchRate);
        registry.gauge(brokerWide, registry.fetcherManager, "FailedPartitionsCount", client,
                () -> stateCounts.get(MirrorPartitionState.FAILED.ordinal()));
    }

    /** A state gauge's name (KIP-1279's): {@code LOG_TRUNCATION} → {@code LogTruncationPartitionState}. */
    static String stateMetricName(MirrorPartitionState state) {
        return MirrorMetricRegistry.stateMetricName(state);
    }

    // --- the manager's thread: partitions and mirrors ---

    /**
     * {@code tp}, which this broker leads, is in {@code state} after a pass: counted in that state, with lag gauges
     * while it mirrors. Manager thread only.
     */
    void onPartitionState(String mirror, TopicPartition tp, MirrorPartitionSink log, MirrorPartitionState state) {
        LedPartitionMetrics led = partitions.get(tp);
        if (led != null && !led.mirror.mirror.equals(mirror)) {
            removePartition(tp); // the topic now belongs to another mirror
            led = null;
        }
        if (led == null) {
            led = new LedPartitionMetrics(mirror(mirror), tp, log, registry);
            partitions.put(tp, led);
        } else if (led.state == state) {
            return;
        }
        count(led, led.state, -1);
        led.state = state;
        count(led, state, 1);
        if (NOT_MIRRORING.contains(state)) {
            led.removeLagGauges();
        } else {
            led.registerLagGauges();
        }
    }

    /**
     * Whether the source end last fetched for {@code tp} is out of date (its source broker has left a fetch
     * unanswered too long, decision 80): the lag gauges then read unknown (-1), as describe does, not the figure
     * from before, until the next answer. Manager thread only.
     */
    void onSourceEndOutOfDate(TopicPartition tp, boolean outOfDate) {
        LedPartitionMetrics led = partitions.get(tp);
        if (led != null) {
            led.sourceEndOutOfDate = outOfDate;
        }
    }

    /**
     * {@code tp}'s newest mirrored timestamp and mirrored-up-to time as its leader knows them now, for its
     * {@code RpoSeconds} gauge and its mirror's {@code MaxRpoSeconds} (decision 122). Manager or fetch thread.
     */
    void onMirroredTime(TopicPartition tp, MirroredTime time) {
        LedPartitionMetrics led = partitions.get(tp);
        if (led != null) {
            led.mirroredTime = time;
        }
    }

    /** This broker no longer leads {@code tp} (or it is no longer mirrored): its metrics go. Manager thread only. */
    void removePartition(TopicPartition tp) {
        LedPartitionMetrics led = partitions.remove(tp);
        if (led != null) {
            count(led, led.state, -1);
            led.removeLagGauges();
        }
    }

    /** Drops the partitions the manager no longer keeps (their topic was deleted, or is no longer mirrored). */
    void retainPartitions(Set<TopicPartition> kept) {
        for (TopicPartition tp : List.copyOf(partitions.keySet())) {
            if (!kept.contains(tp)) {
                removePartition(tp);
            }
        }
    }

    /**
     * Keeps the metrics of the mirrors named (those with topics in the metadata image) and of those the
     * controller's sync lists; the others' go. Manager thread only.
     */
    void retainMirrors(Collection<String> inImage) {
        Set<String> synced = syncedMirrors;
        for (String name : List.copyOf(mirrors.keySet())) {
            if (!inImage.contains(name) && !synced.contains(name)) {
                partitions.values().stream().filter(p -> p.mirror.mirror.equals(name)).map(p -> p.tp).toList()
                        .forEach(this::removePartition);
                MirrorSetMetrics gone = mirrors.remove(name);
                if (gone != null) {
                    gone.remove();
                }
            }
        }
    }

    private void count(LedPartitionMetrics led, MirrorPartitionState state, int delta) {
        if (state != null) {
            stateCounts.addAndGet(state.ordinal(), delta);
            led.mirror.stateCounts.addAndGet(state.ordinal(), delta);
        }
    }

    /** A partition's state changed (its record written): failovers are counted here. */
    void onTransition(String mirror, MirrorPartitionState from, MirrorPartitionState to) {
        if (from == MirrorPartitionState.STOPPING && to == MirrorPartitionState.STOPPED) {
            mirror(mirror).failovers.mark();
        }
    }

    /**
     * A start found that the source had mirrored this log before (its last mirrored epoch applies): a failback.
     * Called once its truncation point is recorded ({@link FailbackDecision}), not per question to the source.
     */
    void onFailback(String mirror) {
        mirror(mirror).failbacks.mark();
    }

    /** A truncation point cut {@code offsets} records from this leader's log, {@code quarantined} of them kept. */
    void onTruncation(String mirror, long offsets, long quarantined) {
        MirrorSetMetrics set = mirror(mirror);
        if (offsets > 0) {
            set.truncations.mark();
        }
        if (quarantined > 0) {
            set.recordsQuarantined.mark(quarantined);
        }
    }

    /** A comparison with the source's log: they agreed, they differed, or it could not be made. */
    void onReconciliation(String mirror, boolean compared, boolean matched) {
        MirrorSetMetrics set = mirror(mirror);
        (!compared ? set.reconciliationsFailed : matched ? set.reconciliationsMatched : set.reconciliationsRepaired)
                .mark();
    }

    /** The fetch-path recorder of {@code mirror}'s fetcher. */
    MirrorFetchMetrics fetchMetrics(String mirror) {
        return new MirrorFetchRecorder(mirror, registry, () -> mirror(mirror), partitions, fetchThreads,
                backgroundTasks);
    }

    // --- the controller's sync thread ---

    /** The mirrors the controller's sync works on now ({@code Set.of()} once this broker is not the controller). */
    void syncedMirrors(Set<String> names) {
        if (names.isEmpty()) {
            mirrors.values().forEach(m -> m.lastGroupOffsetSyncMs = -1);
        }
        syncedMirrors = Set.copyOf(names);
        names.forEach(this::mirror);
    }

    void onTopicConfigSyncError(String mirror) {
        mirror(mirror).topicConfigSyncErrors.mark();
    }

    void onTopicMetadataRefreshError(String mirror) {
        mirror(mirror).topicMetadataRefreshErrors.mark();
    }

    void onAclSyncError(String mirror) {
        mirror(mirror).aclSyncErrors.mark();
    }

    void onGroupOffsetSyncError(String mirror) {
        mirror(mirror).groupOffsetSyncErrors.mark();
    }

    void onGroupOffsetSync(String mirror) {
        mirror(mirror).lastGroupOffsetSyncMs = time.milliseconds();
    }

    // --- reading ---

    private long maxLag() {
        long max = 0;
        for (LedPartitionMetrics p : partitions.values()) {
            if (p.reportsLag()) {
                max = Math.max(max, p.lagRecords()); // an unknown lag (-1) is left out
            }
        }
        return max;
    }

    private double minFetchRate() {
        double min = Double.MAX_VALUE;
        for (MirrorFetchRecorder.FetchThreadMeter t : fetchThreads) {
            min = Math.min(min, t.requests.oneMinuteRate());
        }
        return min == Double.MAX_VALUE ? 0.0 : min;
    }

    private MirrorSetMetrics mirror(String name) {
        return mirrors.computeIfAbsent(name, n -> new MirrorSetMetrics(n, registry, partitions.values()));
    }

    /**
     * {@code body}, to be run every {@code periodMs} by a mirror thread, guarded against any Throwable and with its
     * last success's age in the broker's registry (decision 63); removed at {@link #close}.
     */
    BackgroundTask backgroundTask(String name, long periodMs, Logger log, Runnable body) {
        BackgroundTask task = registry.metrics.backgroundTasks().register(new BackgroundTask(name, periodMs, time, log,
                body));
        backgroundTasks.add(task);
        return task;
    }

    @Override
    public void close() {
        backgroundTasks.forEach(registry.metrics.backgroundTasks()::remove);
        List.copyOf(partitions.keySet()).forEach(this::removePartition);
        mirrors.values().forEach(MirrorSetMetrics::remove);
        mirrors.clear();
        List.copyOf(fetchThreads).forEach(MirrorFetchRecorder.FetchThreadMeter::close);
        registry.remove(brokerWide);
    }

}
