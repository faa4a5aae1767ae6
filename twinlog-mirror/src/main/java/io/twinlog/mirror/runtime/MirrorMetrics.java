package io.twinlog.mirror.runtime;

import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.MetricName;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.metrics.MetricsGroup;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.tasks.BackgroundTask;
import io.twinlog.mirror.MirrorPartitionSink;
import io.twinlog.mirror.fetcher.MirrorFetchMetrics;
import io.twinlog.mirror.fetcher.MirrorFetchQuota;
import io.twinlog.mirror.partition.FailbackDecision;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

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
 *       lag is known; max of seconds, -1 while any partition's is unknown), what the fetchers appended, failovers,
 *       failbacks, truncations, records quarantined, reconciliation results;</li>
 *   <li>{@code kafka.server:type=ClusterMirrorPartition,mirror,topic,partition}: each led partition's lag
 *       ({@link PartitionLag}; -1 when unknown).</li>
 * </ul>
 * Partition metrics cover the mirror partitions this broker leads, per-partition lag only while they mirror (not
 * STOPPING, STOPPED or UNKNOWN); a partition's go when it stops mirroring or this broker stops leading it, a
 * mirror's when no topic of it is left here and the controller's sync no longer lists it.
 *
 * <p>Threading: partition states are set by the mirror manager's thread only; the fetch threads write each
 * partition's progress to volatile fields (one fetch thread at a time per partition: the fetcher's append lock);
 * the sync thread marks its meters; gauges are read by any reporter thread. Nothing on the fetch path allocates.
 */
public final class MirrorMetrics implements AutoCloseable {
    static final String GROUP = "kafka.server";
    static final String CLIENT_ID = "MirrorReplica";
    private static final MirrorPartitionState[] STATES = MirrorPartitionState.values();
    /** States with no per-partition lag: the partition no longer mirrors (or never did). */
    private static final Set<MirrorPartitionState> NOT_MIRRORING = EnumSet.of(MirrorPartitionState.STOPPING,
            MirrorPartitionState.STOPPED, MirrorPartitionState.UNKNOWN);

    private final BrokerMetrics metrics;
    private final MetricsGroup metadataManager;
    private final MetricsGroup fetcherManager;
    private final MetricsGroup fetcherStats;
    private final MetricsGroup clusterMirror;
    private final MetricsGroup clusterMirrorPartition;
    private final Time time;
    /** Every mirror partition this broker leads, with its state; changed by the manager thread only. */
    private final Map<TopicPartition, LedPartition> partitions = new ConcurrentHashMap<>();
    private final Map<String, MirrorSet> mirrors = new ConcurrentHashMap<>();
    private final AtomicIntegerArray stateCounts = new AtomicIntegerArray(STATES.length);
    private final Set<FetchThread> fetchThreads = ConcurrentHashMap.newKeySet();
    private final List<MetricName> brokerWide = new ArrayList<>();
    private final List<BackgroundTask> backgroundTasks = new CopyOnWriteArrayList<>();
    /** The mirrors the controller's metadata sync listed last (empty on other brokers). */
    private volatile Set<String> syncedMirrors = Set.of();

    public MirrorMetrics(BrokerMetrics metrics, Time time) {
        this.metrics = metrics;
        this.time = time;
        this.metadataManager = metrics.group(GROUP, "MirrorMetadataManager");
        this.fetcherManager = metrics.group(GROUP, "MirrorFetcherManager");
        this.fetcherStats = metrics.group(GROUP, "FetcherStats");
        this.clusterMirror = metrics.group(GROUP, "ClusterMirror");
        this.clusterMirrorPartition = metrics.group(GROUP, "ClusterMirrorPartition");
        for (MirrorPartitionState state : STATES) {
            gauge(brokerWide, metadataManager, stateMetricName(state), Map.of(),
                    () -> stateCounts.get(state.ordinal()));
        }
        Map<String, String> client = Map.of("clientId", CLIENT_ID);
        gauge(brokerWide, fetcherManager, "MaxLag", client, this::maxLag);
        gauge(brokerWide, fetcherManager, "MinFetchRate", client, this::minFetchRate);
        gauge(brokerWide, fetcherManager, "FailedPartitionsCount", client,
                () -> stateCounts.get(MirrorPartitionState.FAILED.ordinal()));
    }

    /** A state gauge's name (KIP-1279's): {@code LOG_TRUNCATION} → {@code LogTruncationPartitionState}. */
    static String stateMetricName(MirrorPartitionState state) {
        StringBuilder out = new StringBuilder();
        for (String word : state.name().split("_")) {
            out.append(word.charAt(0)).append(word.substring(1).toLowerCase(Locale.ROOT));
        }
        return out.append("PartitionState").toString();
    }

    // --- the manager's thread: partitions and mirrors ---

    /**
     * {@code tp}, which this broker leads, is in {@code state} after a pass: counted in that state, with lag gauges
     * while it mirrors. Manager thread only.
     */
    void onPartitionState(String mirror, TopicPartition tp, MirrorPartitionSink log, MirrorPartitionState state) {
        LedPartition led = partitions.get(tp);
        if (led != null && !led.mirror.mirror.equals(mirror)) {
            removePartition(tp); // the topic now belongs to another mirror
            led = null;
        }
        if (led == null) {
            led = new LedPartition(mirror(mirror), tp, log);
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
        LedPartition led = partitions.get(tp);
        if (led != null) {
            led.sourceEndOutOfDate = outOfDate;
        }
    }

    /** This broker no longer leads {@code tp} (or it is no longer mirrored): its metrics go. Manager thread only. */
    void removePartition(TopicPartition tp) {
        LedPartition led = partitions.remove(tp);
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
                MirrorSet gone = mirrors.remove(name);
                if (gone != null) {
                    gone.remove();
                }
            }
        }
    }

    private void count(LedPartition led, MirrorPartitionState state, int delta) {
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
        MirrorSet set = mirror(mirror);
        if (offsets > 0) {
            set.truncations.mark();
        }
        if (quarantined > 0) {
            set.recordsQuarantined.mark(quarantined);
        }
    }

    /** A comparison with the source's log: they agreed, they differed, or it could not be made. */
    void onReconciliation(String mirror, boolean compared, boolean matched) {
        MirrorSet set = mirror(mirror);
        (!compared ? set.reconciliationsFailed : matched ? set.reconciliationsMatched : set.reconciliationsRepaired)
                .mark();
    }

    /** The fetch-path recorder of {@code mirror}'s fetcher. */
    MirrorFetchMetrics fetchMetrics(String mirror) {
        return new MirrorFetchMetrics() {
            @Override
            public FetchCounter fetcherStarted(Node sourceBroker) {
                FetchThread thread = new FetchThread(mirror, sourceBroker);
                fetchThreads.add(thread);
                return thread;
            }

            @Override
            public BackgroundTask loopStarted(String name, long periodMs, Logger log) {
                BackgroundTask loop = metrics.backgroundTasks().register(BackgroundTask.loop(name, periodMs, time,
                        log));
                backgroundTasks.add(loop);
                return loop;
            }

            @Override
            public void loopEnded(BackgroundTask loop) {
                backgroundTasks.remove(loop);
                metrics.backgroundTasks().remove(loop);
            }

            @Override
            public void onFetched(TopicPartition tp, long sourceHighWatermark, int bytes, int offsets,
                                  long newestTimestamp) {
                LedPartition led = partitions.get(tp);
                if (led != null) {
                    led.onFetched(sourceHighWatermark, bytes, offsets, newestTimestamp);
                }
            }

            @Override
            public void onSourceNewestTimestamp(TopicPartition tp, long timestamp) {
                LedPartition led = partitions.get(tp);
                if (led != null) {
                    led.sourceNewestTimestamp = timestamp;
                }
            }

            @Override
            public void onSourceNewestTimestampUnavailable(TopicPartition tp) {
                onSourceNewestTimestamp(tp, PartitionLag.UNAVAILABLE);
            }

            @Override
            public void onThrottled(long ms) {
                mirror(mirror).throttledTime.mark(ms);
            }

            @Override
            public void onReplicationQuota(long bytesPerSecond) {
                mirror(mirror).replicationThrottledRate = bytesPerSecond;
            }
        };
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
        for (LedPartition p : partitions.values()) {
            if (p.lagGauges != null) {
                max = Math.max(max, p.lagRecords()); // an unknown lag (-1) is left out
            }
        }
        return max;
    }

    private double minFetchRate() {
        double min = Double.MAX_VALUE;
        for (FetchThread t : fetchThreads) {
            min = Math.min(min, t.requests.oneMinuteRate());
        }
        return min == Double.MAX_VALUE ? 0.0 : min;
    }

    private MirrorSet mirror(String name) {
        return mirrors.computeIfAbsent(name, MirrorSet::new);
    }

    private <T> void gauge(List<MetricName> names, MetricsGroup group, String name, Map<String, String> tags,
                           Supplier<T> value) {
        MetricName metricName = group.metricName(name, tags);
        metrics.registry().removeMetric(metricName); // one left by an earlier owner would keep its old reader
        group.newGauge(name, value, tags);
        names.add(metricName);
    }

    private Meter meter(List<MetricName> names, MetricsGroup group, String name, String eventType,
                        Map<String, String> tags) {
        names.add(group.metricName(name, tags));
        return group.newMeter(name, eventType, tags);
    }

    private void remove(List<MetricName> names) {
        names.forEach(metrics.registry()::removeMetric);
        names.clear();
    }

    /**
     * {@code body}, to be run every {@code periodMs} by a mirror thread, guarded against any Throwable and with its
     * last success's age in the broker's registry (decision 63); removed at {@link #close}.
     */
    BackgroundTask backgroundTask(String name, long periodMs, Logger log, Runnable body) {
        BackgroundTask task = metrics.backgroundTasks().register(new BackgroundTask(name, periodMs, time, log, body));
        backgroundTasks.add(task);
        return task;
    }

    @Override
    public void close() {
        backgroundTasks.forEach(metrics.backgroundTasks()::remove);
        List.copyOf(partitions.keySet()).forEach(this::removePartition);
        mirrors.values().forEach(MirrorSet::remove);
        mirrors.clear();
        fetchThreads.forEach(FetchThread::close);
        remove(brokerWide);
    }

    /** One mirror's metrics on this broker. */
    private final class MirrorSet {
        private final String mirror;
        private final List<MetricName> names = new ArrayList<>();
        private final AtomicIntegerArray stateCounts = new AtomicIntegerArray(STATES.length);
        private final Meter bytes;
        private final Meter messages;
        private final Meter failovers;
        private final Meter failbacks;
        private final Meter truncations;
        private final Meter recordsQuarantined;
        private final Meter reconciliationsMatched;
        private final Meter reconciliationsRepaired;
        private final Meter reconciliationsFailed;
        private final Meter topicConfigSyncErrors;
        private final Meter groupOffsetSyncErrors;
        private final Meter aclSyncErrors;
        private final Meter topicMetadataRefreshErrors;
        /** Bytes and offsets this broker's fetchers appended for the mirror: the fallback size per offset. */
        private final LongAdder bytesMirrored = new LongAdder();
        private final LongAdder offsetsMirrored = new LongAdder();
        private volatile long lastGroupOffsetSyncMs = -1;
        /** Milliseconds this broker's fetch threads of the mirror waited for its bandwidth cap. */
        private final Meter throttledTime;
        private volatile long replicationThrottledRate = MirrorFetchQuota.UNLIMITED;

        MirrorSet(String mirror) {
            this.mirror = mirror;
            Map<String, String> tags = Map.of("mirror", mirror);
            for (MirrorPartitionState state : STATES) {
                gauge(names, metadataManager, stateMetricName(state), tags, () -> stateCounts.get(state.ordinal()));
            }
            topicConfigSyncErrors = meter(names, metadataManager, "TopicConfigSyncError", "errors", tags);
            groupOffsetSyncErrors = meter(names, metadataManager, "ConsumerGroupOffsetSyncError", "errors", tags);
            aclSyncErrors = meter(names, metadataManager, "AclSyncError", "errors", tags);
            topicMetadataRefreshErrors = meter(names, metadataManager, "TopicMetadataRefreshError", "errors", tags);
            gauge(names, metadataManager, "ConsumerGroupOffsetSyncAgeMs", tags, () -> {
                long last = lastGroupOffsetSyncMs;
                return last < 0 ? -1L : Math.max(0, time.milliseconds() - last);
            });
            gauge(names, clusterMirror, "LagRecords", tags, () -> sum(LedPartition::lagRecords));
            gauge(names, clusterMirror, "LagBytes", tags, () -> sum(LedPartition::lagBytes));
            gauge(names, clusterMirror, "LagSeconds", tags, this::lagSeconds);
            bytes = meter(names, clusterMirror, "MirrorBytesPerSec", "bytes", tags);
            messages = meter(names, clusterMirror, "MirrorMessagesPerSec", "messages", tags);
            failovers = meter(names, clusterMirror, "Failovers", "partitions", tags);
            failbacks = meter(names, clusterMirror, "Failbacks", "partitions", tags);
            truncations = meter(names, clusterMirror, "Truncations", "truncations", tags);
            recordsQuarantined = meter(names, clusterMirror, "RecordsQuarantined", "records", tags);
            reconciliationsMatched = meter(names, clusterMirror, "ReconciliationsMatched", "comparisons", tags);
            reconciliationsRepaired = meter(names, clusterMirror, "ReconciliationsRepaired", "comparisons", tags);
            reconciliationsFailed = meter(names, clusterMirror, "ReconciliationsFailed", "comparisons", tags);
            throttledTime = meter(names, clusterMirror, "ThrottledTimeMs", "milliseconds", tags);
            // the cap in force on this broker, -1 for none (mirror.replication.throttled.rate)
            gauge(names, clusterMirror, "ReplicationThrottledRate", tags, () -> replicationThrottledRate
                    == MirrorFetchQuota.UNLIMITED ? -1L : replicationThrottledRate);
        }

        /** The sum over the partitions whose lag is known. */
        private long sum(ToLongFunction<LedPartition> lag) {
            long sum = 0;
            for (LedPartition p : partitions.values()) {
                if (p.mirror == this && p.lagGauges != null) {
                    sum += Math.max(0, lag.applyAsLong(p));
                }
            }
            return sum;
        }

        /**
         * The RPO of failing the mirror over now: the max over its partitions, or -1 while any partition's is
         * unknown (a partition that cannot say must not let the mirror claim less than it may lose).
         */
        private double lagSeconds() {
            long max = 0;
            for (LedPartition p : partitions.values()) {
                if (p.mirror == this && p.lagGauges != null) {
                    long millis = p.lagMillis();
                    if (millis < 0) {
                        return PartitionLag.UNKNOWN;
                    }
                    max = Math.max(max, millis);
                }
            }
            return PartitionLag.seconds(max);
        }

        void remove() {
            MirrorMetrics.this.remove(names);
        }
    }

    /** A mirror partition this broker leads. */
    private final class LedPartition {
        private final MirrorSet mirror;
        private final TopicPartition tp;
        private final MirrorPartitionSink log;
        /** Manager thread only. */
        private MirrorPartitionState state;
        /** The registered lag gauges' names; null while the partition does not mirror. Set by the manager thread. */
        private volatile List<MetricName> lagGauges;
        // written by the fetch thread that appends to the partition, read by gauges
        private volatile long sourceHighWatermark = -1;
        private volatile long sourceNewestTimestamp = PartitionLag.NOT_ASKED;
        private volatile long mirroredNewestTimestamp = -1;
        private volatile long bytesMirrored;
        private volatile long offsetsMirrored;
        /** Set by the manager's pass, cleared by the next fetch answer. */
        private volatile boolean sourceEndOutOfDate;

        LedPartition(MirrorSet mirror, TopicPartition tp, MirrorPartitionSink log) {
            this.mirror = mirror;
            this.tp = tp;
            this.log = log;
        }

        void onFetched(long sourceHighWatermark, int bytes, int offsets, long newestTimestamp) {
            this.sourceHighWatermark = sourceHighWatermark;
            this.sourceEndOutOfDate = false;
            if (offsets > 0) {
                bytesMirrored += bytes; // one writer: the fetch thread holding the partition's append lock
                offsetsMirrored += offsets;
                mirroredNewestTimestamp = newestTimestamp;
                mirror.bytesMirrored.add(bytes);
                mirror.offsetsMirrored.add(offsets);
                mirror.bytes.mark(bytes);
                mirror.messages.mark(offsets);
            }
        }

        long lagRecords() {
            return PartitionLag.records(sourceEndOutOfDate ? PartitionLag.UNKNOWN : sourceHighWatermark,
                    log.logEndOffset());
        }

        long lagBytes() {
            long own = offsetsMirrored;
            return own > 0 ? PartitionLag.bytes(lagRecords(), bytesMirrored, own)
                    : PartitionLag.bytes(lagRecords(), mirror.bytesMirrored.sum(), mirror.offsetsMirrored.sum());
        }

        long lagMillis() {
            return PartitionLag.millis(lagRecords(), sourceNewestTimestamp, mirroredNewestTimestamp,
                    time.milliseconds());
        }

        void registerLagGauges() {
            if (lagGauges != null) {
                return;
            }
            Map<String, String> tags = new LinkedHashMap<>();
            tags.put("mirror", mirror.mirror);
            tags.put("topic", tp.topic());
            tags.put("partition", Integer.toString(tp.partition()));
            List<MetricName> names = new ArrayList<>(3);
            gauge(names, clusterMirrorPartition, "LagRecords", tags, this::lagRecords);
            gauge(names, clusterMirrorPartition, "LagBytes", tags, this::lagBytes);
            gauge(names, clusterMirrorPartition, "LagSeconds", tags, () -> PartitionLag.seconds(lagMillis()));
            lagGauges = names;
        }

        void removeLagGauges() {
            List<MetricName> names = lagGauges;
            if (names != null) {
                lagGauges = null;
                remove(names);
            }
        }
    }

    /** One source broker fetch thread of a mirror: its fetch request rate, for {@code MinFetchRate}. */
    private final class FetchThread implements MirrorFetchMetrics.FetchCounter {
        private final List<MetricName> names = new ArrayList<>(1);
        private final Meter requests;

        FetchThread(String mirror, Node sourceBroker) {
            Map<String, String> tags = new LinkedHashMap<>();
            tags.put("clientId", CLIENT_ID);
            tags.put("mirror", mirror);
            tags.put("brokerHost", sourceBroker.host());
            tags.put("brokerPort", Integer.toString(sourceBroker.port()));
            requests = meter(names, fetcherStats, "RequestsPerSec", "requests", tags);
        }

        @Override
        public void onFetch() {
            requests.mark();
        }

        @Override
        public void close() {
            fetchThreads.remove(this);
            remove(names);
        }
    }
}
