package io.twinlog.replication;

import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.mirror.TruncationPoints;
import io.twinlog.storage.LogStore;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The partitions hosted on this broker and the data path through them: appends from producers (with acks=all
 * waiting in the produce purgatory) and reads for consumers (with long polls waiting in the fetch purgatory).
 *
 * <p>Which partitions exist and who leads them is decided elsewhere (metadata); the server calls
 * {@link #applyPartition} and {@link #removePartition} on the metadata thread. Produce and fetch run on request
 * handler threads.
 *
 * <p>A partition whose log dir failed is <em>offline</em> here (Kafka's {@code HostedPartition.Offline}): it is no
 * longer hosted, every request for it is answered {@code KAFKA_STORAGE_ERROR}, and metadata does not bring it back
 * until the topic is deleted (or re-created with another topic ID) or the broker restarts.
 */
public final class ReplicaManager implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReplicaManager.class);

    private final int localBrokerId;
    private final LogStore logStore;
    private final ConcurrentHashMap<TopicPartition, Partition> partitions = new ConcurrentHashMap<>();
    /** Partitions whose log dir failed, with their topic ID. */
    private final ConcurrentHashMap<TopicPartition, Uuid> offlinePartitions = new ConcurrentHashMap<>();
    private final DelayedOperations delayed;
    private final LocalLogReader reader;
    private final LeaderAppender appender;
    private final ReplicaFetcherManager fetcherManager;
    private final IsrChangeSender isrChanges;
    private final Time time;
    /** The periodic ISR check, guarded (decision 63); its health is reported once {@link #enableMetrics} is. */
    private final IsrExpiration isrExpiration;
    /** Set once by {@link #enableMetrics}, before partitions are applied; null in tests without metrics. */
    private volatile ReplicaManagerMetrics metrics;

    /**
     * @param replicaLagTimeMaxMs a follower not caught up for this long leaves the ISR
     *                            ({@code replica.lag.time.max.ms}); checked every half of it
     */
    public ReplicaManager(int localBrokerId, LogStore logStore, ReplicaFetcherManager fetcherManager,
                          IsrChangeSender isrChanges, long replicaLagTimeMaxMs, Time time) {
        this.localBrokerId = localBrokerId;
        this.logStore = logStore;
        this.fetcherManager = fetcherManager;
        this.isrChanges = isrChanges;
        this.time = time;
        this.delayed = new DelayedOperations(localBrokerId);
        this.reader = new LocalLogReader(this::partitionOrThrow, delayed, isrChanges, time);
        this.appender = new LeaderAppender(this, this::partitionOrThrow, delayed);
        fetcherManager.bind(this);
        this.isrExpiration = new IsrExpiration(localBrokerId, partitions::values, replicaLagTimeMaxMs, isrChanges,
                time);
    }

    /** Reports this replica manager's and its logs' metrics (Kafka's names) in {@code brokerMetrics}. */
    public void enableMetrics(BrokerMetrics brokerMetrics) {
        metrics = new ReplicaManagerMetrics(this, fetcherManager, brokerMetrics);
        brokerMetrics.backgroundTasks().register(isrExpiration.task());
        fetcherManager.reportHealth(brokerMetrics.backgroundTasks());
        partitions.keySet().forEach(metrics::hosted);
    }

    public int localBrokerId() {
        return localBrokerId;
    }

    public Optional<Partition> partition(TopicPartition tp) {
        return Optional.ofNullable(partitions.get(tp));
    }

    public Collection<Partition> partitions() {
        return partitions.values();
    }

    /** The partition, if this broker hosts it and its log is online. */
    public Partition partitionOrThrow(TopicPartition tp) {
        Partition p = partitions.get(tp);
        if (p == null) {
            throw notHosted(tp);
        }
        return p;
    }

    /** Why this broker has no online replica of {@code tp}: its log dir failed, or it does not host it. */
    private ApiException notHosted(TopicPartition tp) {
        if (offlinePartitions.containsKey(tp)) {
            return new KafkaStorageException("The replica of " + tp + " on broker " + localBrokerId
                    + " is offline: its log dir failed");
        }
        return new NotLeaderOrFollowerException("Broker " + localBrokerId + " does not host " + tp);
    }

    /** The partitions of this broker whose log dir failed, with their topic IDs. */
    public Map<TopicPartition, Uuid> offlinePartitions() {
        return Map.copyOf(offlinePartitions);
    }

    public boolean isOffline(TopicPartition tp) {
        return offlinePartitions.containsKey(tp);
    }

    /**
     * A log dir failed: stops serving every partition whose log is in it (fetchers stopped, waiting requests
     * answered, later requests answered {@code KAFKA_STORAGE_ERROR}), then has the log store close those logs and
     * stop using the dir, unless it was the last live dir (Kafka's log manager would halt the JVM; the broker
     * shuts down instead). Runs on the log dir failure handler thread.
     *
     * @return what went offline, or empty if the dir had already been handled
     */
    public Optional<LogDirFailure> handleLogDirFailure(String dir) {
        if (!logStore.isLogDirOnline(dir)) {
            return Optional.empty();
        }
        boolean lastLiveDir = logStore.liveLogDirs().equals(Set.of(dir));
        Set<TopicPartition> inDir = new HashSet<>(logStore.partitionsIn(dir));
        for (Partition p : partitions.values()) {
            if (p.log().parentDir().equals(dir)) {
                inDir.add(p.topicPartition());
            }
        }
        Map<TopicPartition, Uuid> offline = new HashMap<>();
        for (TopicPartition tp : inDir) {
            Partition p = partitions.get(tp);
            Optional<Uuid> topicId = p != null ? Optional.of(p.topicId())
                    : logStore.log(tp).flatMap(UnifiedLog::topicId);
            // offline before it stops being hosted: a request that finds no partition then sees it offline
            topicId.ifPresent(id -> {
                offlinePartitions.put(tp, id);
                offline.put(tp, id);
            });
            fetcherManager.removePartition(tp);
            if (partitions.remove(tp) != null && metrics != null) {
                metrics.removed(tp);
            }
            completeDelayedRequests(tp);
        }
        log.warn("Broker {} stopped serving {} partitions in the failed log dir {}: {}", localBrokerId,
                offline.size(), dir, offline.keySet());
        if (!lastLiveDir) {
            logStore.handleLogDirFailure(dir);
        }
        return Optional.of(new LogDirFailure(dir, offline, lastLiveDir));
    }

    /**
     * Creates (or opens) the local replica of a partition and applies its leadership: a leader stops fetching, a
     * follower fetches from its leader. A replica of another incarnation of the topic (a different topic ID) is
     * taken out of service first and its log renamed aside, never deleted: no deletion of it is known here.
     *
     * @return the partition, or empty when this broker's replica is offline (its log dir failed)
     */
    public Optional<Partition> applyPartition(TopicPartition tp, Uuid topicId, int leaderId, int leaderEpoch, int partitionEpoch,
                                    List<Integer> replicas, List<Integer> isr) throws IOException {
        return applyPartition(tp, topicId, leaderId, leaderEpoch, partitionEpoch, replicas, isr, Optional.empty(),
                earlierTopicId -> false);
    }

    /**
     * {@link #applyPartition} with a truncation point decided for every replica: applied (once) before the
     * leadership, so a replica that missed it while it was away never serves records past it.
     *
     * @param deleted whether the deletion of a topic ID is recorded: a replica of an earlier incarnation of the topic
     *                is deleted only then, and otherwise renamed aside ({@code -stray}) and kept (issue 25, point 1:
     *                a name taken by a new topic, in a ZooKeeper emptied or partly restored, deletes nothing)
     */
    public Optional<Partition> applyPartition(TopicPartition tp, Uuid topicId, int leaderId, int leaderEpoch,
                                              int partitionEpoch, List<Integer> replicas, List<Integer> isr,
                                              Optional<TruncationPoints> truncation, Predicate<Uuid> deleted)
            throws IOException {
        Uuid offlineTopicId = offlinePartitions.get(tp);
        if (offlineTopicId != null) {
            if (offlineTopicId.equals(topicId)) {
                // as Kafka: no state change for a replica in a failed dir; opening it elsewhere would start it empty
                log.debug("Not hosting {}: its log dir failed", tp);
                return Optional.empty();
            }
            offlinePartitions.remove(tp); // the topic was deleted and re-created: a new, empty replica is right
        }
        Partition partition = partitions.get(tp);
        if (partition != null && !partition.topicId().equals(topicId)) {
            removePartition(tp, false);
            partition = null;
        }
        if (partition == null) {
            Optional<UnifiedLog> existing = logStore.log(tp);
            if (existing.isPresent() && existing.get().topicId().isPresent()
                    && !existing.get().topicId().get().equals(topicId)) {
                retireEarlierLog(tp, existing.get().topicId().get(), topicId, deleted);
            }
            UnifiedLog unifiedLog = logStore.getOrCreateLog(tp, topicId);
            Optional<Long> hw = logStore.recoveredHighWatermark(tp);
            if (hw.isPresent()) {
                unifiedLog.updateHighWatermark(Math.min(hw.get(), unifiedLog.logEndOffset()));
            }
            partition = new Partition(tp, topicId, localBrokerId, unifiedLog,
                    (p, moved) -> highWatermarkListeners.forEach(l -> l.onHighWatermarkUpdated(p, moved)));
            partition.recoverProducerStateBarrier(logStore.loadedAfterCrash(unifiedLog));
            partitions.put(tp, partition);
            if (metrics != null) {
                metrics.hosted(tp);
            }
            log.info("Hosting {} (topic ID {}): log start {}, log end {}, high watermark {}", tp, topicId,
                    unifiedLog.logStartOffset(), unifiedLog.logEndOffset(), unifiedLog.highWatermark());
        }
        partition.setKeepSourceEpochs(sourceEpochPolicy.test(tp));
        if (truncation.isPresent()) {
            // a follower's fetcher may be appending meanwhile: an append that raced the cut is dropped (its fetch
            // offset no longer matches the log end) and the next fetch starts at the cut
            partition.applyTruncationPoints(truncation.get());
        }
        List<Integer> isrBefore = partition.isr();
        Partition.Transition t = partition.applyLeadership(leaderId, leaderEpoch, partitionEpoch, replicas, isr,
                time.milliseconds());
        if (t == Partition.Transition.ISR_CHANGED && partition.isLeader() && metrics != null) {
            metrics.isrChanged(isrBefore, partition.isr());
        }
        switch (t) {
            case BECAME_LEADER -> fetcherManager.removePartition(tp);
            case BECAME_FOLLOWER -> {
                if (leaderId >= 0) {
                    fetcherManager.addPartition(tp, topicId, leaderId, leaderEpoch);
                } else {
                    fetcherManager.removePartition(tp);
                }
            }
            default -> { }
        }
        if (t != Partition.Transition.NONE) {
            completeDelayedRequests(tp);
        }
        return Optional.of(partition);
    }

    private volatile Predicate<TopicPartition> sourceEpochPolicy = tp -> false;
    /** Each told, in the order added, on the thread that moved a high watermark. */
    private final List<HighWatermarkListener> highWatermarkListeners = new CopyOnWriteArrayList<>();

    /** Adds a listener told whenever the high watermark of a partition this broker leads moves. */
    public void addHighWatermarkListener(HighWatermarkListener listener) {
        highWatermarkListeners.add(listener);
    }

    /** Which partitions keep their source's epoch history (mirror partitions before failover). */
    public void setSourceEpochPolicy(Predicate<TopicPartition> policy) {
        this.sourceEpochPolicy = policy;
    }

    /**
     * The log of {@code tp} left by an earlier topic of the name ({@code earlierTopicId}) makes way for topic
     * {@code topicId}'s: deleted when that topic's deletion is recorded, otherwise renamed aside and kept, since
     * the name may have been taken in a metadata store that lost the earlier topic (an emptied ZooKeeper, a
     * producer's auto-creation) and its records may be the only copy.
     */
    private void retireEarlierLog(TopicPartition tp, Uuid earlierTopicId, Uuid topicId, Predicate<Uuid> deleted) {
        if (deleted.test(earlierTopicId)) {
            log.info("Deleting the log of {} left by topic ID {}, whose deletion is recorded (current ID {})", tp,
                    earlierTopicId, topicId);
            logStore.deleteLog(tp);
        } else {
            log.error("The log of {} belongs to topic ID {}, but the metadata gives the name to topic ID {} with no "
                    + "deletion of {} recorded: its dir is renamed *-stray and kept, not served (rename it back if "
                    + "that topic comes back, delete it by hand if its data is not wanted)", tp, earlierTopicId,
                    topicId, earlierTopicId);
            logStore.setAsideLog(tp);
        }
    }

    /**
     * Stops hosting a partition; with {@code deleteLog} its data is removed from disk. An offline replica is only
     * forgotten: its data is in the failed dir.
     */
    public void removePartition(TopicPartition tp, boolean deleteLog) {
        if (offlinePartitions.remove(tp) != null) {
            log.info("Forgot the offline replica of {} (its log dir failed)", tp);
        }
        fetcherManager.removePartition(tp);
        Partition removed = partitions.remove(tp);
        if (removed != null && metrics != null) {
            metrics.removed(tp);
        }
        if (removed != null) {
            completeDelayedRequests(tp);
            log.info("Stopped hosting {}{}", tp, deleteLog ? " and deleted its log" : "");
        }
        if (deleteLog && logStore.log(tp).isPresent()) {
            logStore.deleteLog(tp);
        }
    }

    /** acks=all outcome of records ending before {@code requiredOffset}; empty while the ISR has not got them. */
    Optional<Errors> acksAllOutcome(TopicPartition tp, long requiredOffset) {
        Partition p = partitions.get(tp);
        return p == null ? Optional.of(Errors.forException(notHosted(tp))) : p.checkEnoughReplicasReachOffset(requiredOffset);
    }

    /**
     * Appends each partition's records as leader and answers through {@code callback}: immediately for acks 0 and
     * 1, once the ISR has the records for acks=all.
     */
    public void appendRecords(long timeoutMs, short requiredAcks, Map<TopicIdPartition, MemoryRecords> entries,
                              Consumer<Map<TopicIdPartition, AppendResult>> callback) {
        appendRecords(timeoutMs, requiredAcks, entries, (tip, result) -> { }, callback);
    }

    /**
     * {@link #appendRecords} that also tells {@code onLocalAppend} each partition's outcome on this broker's log as
     * soon as it is known, before acks=all waits for the ISR: what Kafka's broker topic metrics count.
     */
    public void appendRecords(long timeoutMs, short requiredAcks, Map<TopicIdPartition, MemoryRecords> entries,
                              BiConsumer<TopicIdPartition, AppendResult> onLocalAppend,
                              Consumer<Map<TopicIdPartition, AppendResult>> callback) {
        appendRecords(timeoutMs, requiredAcks, entries, Map.of(), onLocalAppend, callback);
    }

    /**
     * {@link #appendRecords} of records some of whose transactions were verified with their coordinator (KIP-890):
     * each such partition's append carries the guard {@link #maybeStartTransactionVerification} gave it.
     */
    public void appendRecords(long timeoutMs, short requiredAcks, Map<TopicIdPartition, MemoryRecords> entries,
                              Map<TopicPartition, VerificationGuard> guards,
                              BiConsumer<TopicIdPartition, AppendResult> onLocalAppend,
                              Consumer<Map<TopicIdPartition, AppendResult>> callback) {
        if (requiredAcks != -1 && requiredAcks != 0 && requiredAcks != 1) {
            LinkedHashMap<TopicIdPartition, AppendResult> results = new LinkedHashMap<>();
            // As Kafka: any other acks value is refused for every partition before anything is appended, since no
            // acknowledgement rule exists for it.
            for (TopicIdPartition tip : entries.keySet()) {
                results.put(tip, AppendResult.error(Errors.INVALID_REQUIRED_ACKS,
                        "Invalid required acks " + requiredAcks + ": must be -1 (all), 0 or 1"));
            }
            callback.accept(results);
            return;
        }
        appender.append(timeoutMs, requiredAcks, entries, (partition, records) -> partition.appendRecordsToLeader(records,
                requiredAcks, guards.getOrDefault(partition.topicPartition(), VerificationGuard.SENTINEL)),
                onLocalAppend, callback);
    }

    /**
     * Starts verifying a transactional write to {@code tp}, which this broker must lead (see
     * {@link Partition#maybeStartTransactionVerification}).
     *
     * @throws ApiException NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION or INVALID_PRODUCER_EPOCH, the code the
     *                      partition's produce answer gets
     */
    public VerificationGuard maybeStartTransactionVerification(TopicPartition tp, long producerId, int sequence,
                                                               short producerEpoch, boolean supportsEpochBump) {
        Partition partition = partitionOrThrow(tp);
        return partition.maybeStartTransactionVerification(producerId, sequence, producerEpoch, supportsEpochBump);
    }

    /**
     * Appends transaction markers (WriteTxnMarkers) as leader and answers through {@code callback} once the ISR has
     * them, as Kafka appends markers with acks=all (read_committed readers move on at the high watermark).
     */
    public void appendTransactionMarkers(long timeoutMs, Map<TopicIdPartition, MemoryRecords> markers,
                                         short transactionVersion,
                                         Consumer<Map<TopicIdPartition, AppendResult>> callback) {
        appender.append(timeoutMs, (short) -1, markers, (partition, marker) -> partition.appendTransactionMarker(marker,
                transactionVersion), (tip, result) -> { }, callback);
    }

    /**
     * Appends a hosted coordinator's records ({@code __consumer_offsets}) as leader without waiting for replication
     * (see {@link Partition#appendAsCoordinator}), and wakes the fetches watching the partition: a follower parked
     * in the fetch purgatory must come for the records at once, since the coordinator answers its client only when
     * the high watermark passes them.
     *
     * @return the offset after the last record appended
     */
    public long appendAsCoordinator(TopicPartition tp, MemoryRecords records, VerificationGuard guard,
                                    short transactionVersion) throws IOException {
        Partition partition = partitionOrThrow(tp);
        long end = partition.appendAsCoordinator(records, guard, transactionVersion);
        completeDelayedRequests(tp);
        return end;
    }

    /**
     * Appends the transaction coordinator's {@code __transaction_state} records as leader in the coordinator epoch
     * {@code leaderEpoch} (see {@link Partition#appendCoordinatorState}), with acks=all: {@code callback} is told
     * once the ISR has them and min.insync.replicas held, or why not, as Kafka's coordinator writes its state
     * through the produce path.
     */
    public void appendCoordinatorRecords(long timeoutMs, TopicPartition tp, int leaderEpoch, MemoryRecords records,
                                         Consumer<AppendResult> callback) {
        Partition partition = partitions.get(tp);
        if (partition == null) {
            ApiException e = notHosted(tp);
            callback.accept(AppendResult.error(Errors.forException(e), e.getMessage()));
            return;
        }
        TopicIdPartition tip = new TopicIdPartition(partition.topicId(), tp);
        appender.append(timeoutMs, (short) -1, Map.of(tip, records), (p, r) -> p.appendCoordinatorState(r, leaderEpoch),
                (t, result) -> { }, results -> callback.accept(results.get(tip)));
    }

    /**
     * Reads for a Fetch request; waits in the fetch purgatory until {@code minBytes} are available, an error
     * occurs, or {@code maxWaitMs} passes.
     */
    public void fetchMessages(FetchParams params, LinkedHashMap<TopicIdPartition, FetchRequest.PartitionData> fetchInfos,
                              Consumer<LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData>> callback) {
        LocalLogReader.LocalReadResult read = readFromLocalLog(params, fetchInfos);
        if (params.maxWaitMs() <= 0 || fetchInfos.isEmpty() || read.bytesRead() >= params.minBytes()
                || read.anyError()) {
            callback.accept(read.responses());
            return;
        }
        delayed.watchFetch(new DelayedFetch(this, params, fetchInfos, read.fetchOffsetMetadata(), callback),
                fetchInfos.keySet().stream().map(TopicIdPartition::topicPartition).toList());
    }

    /** Reads each partition of a Fetch request once ({@link LocalLogReader}); the fetch purgatory reads again. */
    LocalLogReader.LocalReadResult readFromLocalLog(FetchParams params,
                                                    LinkedHashMap<TopicIdPartition, FetchRequest.PartitionData> fetchInfos) {
        return reader.read(params, fetchInfos);
    }

    /** Wakes delayed produce and fetch requests watching this partition. */
    public void completeDelayedRequests(TopicPartition tp) {
        delayed.completeAll(tp);
    }

    /**
     * DeleteRecords: moves each partition's log start offset on this leader (see
     * {@link Partition#deleteRecordsOnLeader}) and answers through {@code callback} once every in-sync replica's log
     * start reached it, or after {@code timeoutMs}. Errors per partition: NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE
     * (beyond the high watermark), REQUEST_TIMED_OUT.
     */
    public void deleteRecords(long timeoutMs, Map<TopicPartition, Long> offsets,
                              Consumer<Map<TopicPartition, DeleteRecordsResult>> callback) {
        LinkedHashMap<TopicPartition, DeleteRecordsResult> results = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, Long> e : offsets.entrySet()) {
            Partition partition = partitions.get(e.getKey());
            if (partition == null) {
                results.put(e.getKey(), DeleteRecordsResult.error(Errors.forException(notHosted(e.getKey()))));
                continue;
            }
            try {
                results.put(e.getKey(), DeleteRecordsResult.waitingFor(partition.deleteRecordsOnLeader(e.getValue())));
            } catch (ApiException ex) {
                results.put(e.getKey(), DeleteRecordsResult.error(Errors.forException(ex)));
            } catch (RuntimeException ex) {
                // broad: any other failure is this partition's error answer, logged with its stack trace
                log.error("Unexpected error deleting records of {} before {}", e.getKey(), e.getValue(), ex);
                results.put(e.getKey(), DeleteRecordsResult.error(Errors.forException(ex)));
            }
        }
        if (results.values().stream().allMatch(DeleteRecordsResult::done)) {
            callback.accept(results);
            return;
        }
        delayed.watchDeleteRecords(new DelayedDeleteRecords(timeoutMs, this, results, callback),
                List.copyOf(results.keySet()));
    }

    @Override
    public void close() throws Exception {
        isrExpiration.close();
        fetcherManager.close();
        delayed.shutdown();
        partitions.clear();
    }
}
