package io.twinlog.share.partition;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.errors.InvalidRecordStateException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownServerException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ShareFetchResponseData.AcquiredRecords;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.ShareGroupAutoOffsetResetStrategy;
import org.apache.kafka.server.share.acknowledge.ShareAcknowledgementBatch;
import org.apache.kafka.server.share.fetch.AcquisitionLockTimerTask;
import org.apache.kafka.server.share.fetch.AcquisitionLockTimeoutHandler;
import org.apache.kafka.server.share.fetch.DeliveryCountOps;
import org.apache.kafka.server.share.fetch.InFlightBatch;
import org.apache.kafka.server.share.fetch.InFlightState;
import org.apache.kafka.server.share.fetch.RecordState;
import org.apache.kafka.server.share.fetch.ShareAcquiredRecords;
import org.apache.kafka.server.share.metrics.SharePartitionMetrics;
import org.apache.kafka.server.share.persister.GroupTopicPartitionData;
import org.apache.kafka.server.share.persister.PartitionAllData;
import org.apache.kafka.server.share.persister.PartitionErrorData;
import org.apache.kafka.server.share.persister.PartitionFactory;
import org.apache.kafka.server.share.persister.PartitionIdLeaderEpochData;
import org.apache.kafka.server.share.persister.PartitionStateBatchData;
import org.apache.kafka.server.share.persister.Persister;
import org.apache.kafka.server.share.persister.PersisterStateBatch;
import org.apache.kafka.server.share.persister.ReadShareGroupStateParameters;
import org.apache.kafka.server.share.persister.ReadShareGroupStateResult;
import org.apache.kafka.server.share.persister.TopicData;
import org.apache.kafka.server.share.persister.WriteShareGroupStateParameters;
import org.apache.kafka.server.share.persister.WriteShareGroupStateResult;
import org.apache.kafka.server.storage.log.FetchPartitionData;
import org.apache.kafka.server.util.timer.Timer;
import org.apache.kafka.server.util.timer.TimerTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantReadWriteLock;

import static org.apache.kafka.server.share.fetch.InFlightState.EMPTY_MEMBER_ID;

/**
 * One share group's view of one partition on the partition's leader (KIP-932's share partition; Kafka's
 * {@code SharePartition} semantics, written for Twinlog over Kafka's in-flight classes {@link InFlightBatch} and
 * {@link InFlightState}, whose guarded transitions and rollbacks encode the record state rules).
 *
 * <p>State: the share-partition start offset (SPSO, {@code startOffset}: every record below it is done with), the
 * end offset ({@code endOffset}, exclusive: the first offset never taken into the in-flight cache), and between them
 * the in-flight cache, batches keyed by first offset. The cache covers {@code [startOffset, endOffset)} without a
 * hole (its first batch may begin below the SPSO); holes of the log (compaction, control batches, aborted
 * transactions) are kept as ARCHIVED entries so that the SPSO can pass them. A batch keeps one state for all its
 * records until an operation touches only part of it; it then keeps a state per offset.
 *
 * <pre>
 * record states          AVAILABLE --acquire--&gt; ACQUIRED --ACCEPT--&gt; ACKNOWLEDGED
 *                           ^                     |  |
 *                           +--RELEASE / lock ----+  +--REJECT, GAP, RELEASE or lock expiry at the delivery
 *                              expiry (below limit)     limit, log start passing it--&gt; ARCHIVED
 * share partition        EMPTY --maybeInitialize--&gt; INITIALIZING --read state--&gt; ACTIVE
 *                        (any) --fence (leadership left, topic gone, persister fenced us, load failed)--&gt; FENCED
 * </pre>
 *
 * <p>Acknowledgements, releases and lock expiries are persisted ({@code Persister.writeState}, changed ranges, the
 * SPSO, the state epoch and the leader epoch): an acknowledgement takes effect in memory as a pending transition,
 * committed when the write succeeds and rolled back when it fails (a record whose lock expired meanwhile becomes
 * AVAILABLE, or ARCHIVED at the delivery limit). Acquisitions are not persisted, as in Kafka: a new leader sees
 * unacknowledged records as AVAILABLE.
 *
 * <p>Threading: every field below the lock is read and written under {@link #lock} (the write lock except for
 * gauges); persister completions and lock expiries arrive on the persister's and the timer's threads and take it.
 * The listener is called outside the lock. The fetch lock ({@link #tryFetchLock}) lets one ShareFetch at a time
 * read and acquire, so two fetches never acquire the same offsets from two reads.
 */
final class SharePartitionState {
    private static final Logger log = LoggerFactory.getLogger(SharePartitionState.class);

    /** The share partition's own states (the record states are Kafka's {@link RecordState}). */
    enum Status { EMPTY, INITIALIZING, ACTIVE, FENCED }

    /** Per-group settings, read on each use: group configs can change while the share partition lives. */
    interface GroupSettings {
        int recordLockDurationMs();

        int deliveryCountLimit();

        int maxRecordLocks();

        ShareGroupAutoOffsetResetStrategy autoOffsetReset();
    }

    /** Told outside the lock; neither call may block. */
    interface Listener {
        /** Records became acquirable (released, lock expired, acknowledged past the SPSO) or the state changed. */
        void onAcquirable(SharePartitionState state);

        /** The state was fenced and must be dropped; a later initialize builds a new one. */
        void onFenced(SharePartitionState state);
    }

    private final String groupId;
    private final TopicIdPartition partition;
    private final int leaderEpoch;
    private final SharePartitionLog partitionLog;
    private final Persister persister;
    private final Timer timer;
    private final Time time;
    private final GroupSettings settings;
    private final Listener listener;
    private final SharePartitionMetrics metrics;
    private final AcquisitionLockTimeoutHandler timeoutHandler = this::onLockExpired;
    private final String logPrefix;

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final AtomicBoolean fetchLock = new AtomicBoolean();
    private volatile long fetchLockTakenMs;

    // guarded by lock
    private Status status = Status.EMPTY;
    private CompletableFuture<Void> initialized;
    private final NavigableMap<Long, InFlightBatch> cachedState = new ConcurrentSkipListMap<>();
    private long startOffset;
    private long endOffset;
    private int stateEpoch;
    /** False only when no record in the cache is AVAILABLE, so the next fetch offset is the end offset. */
    private boolean mayHaveAvailable;

    SharePartitionState(String groupId, TopicIdPartition partition, int leaderEpoch, SharePartitionLog partitionLog,
                        Persister persister, Timer timer, Time time, GroupSettings settings, Listener listener) {
        this.groupId = groupId;
        this.partition = partition;
        this.leaderEpoch = leaderEpoch;
        this.partitionLog = partitionLog;
        this.persister = persister;
        this.timer = timer;
        this.time = time;
        this.settings = settings;
        this.listener = listener;
        this.logPrefix = "[SharePartition " + groupId + " " + partition + " epoch=" + leaderEpoch + "] ";
        // Kafka's metrics, in the JVM-wide Yammer registry (InFlightBatch and the lock timer tasks record into it)
        this.metrics = new SharePartitionMetrics(groupId, partition.topic(), partition.partition());
        metrics.registerInFlightMessageCount(this::inFlightRecordCount);
        metrics.registerInFlightBatchCount(cachedState::size);
    }

    String groupId() {
        return groupId;
    }

    TopicIdPartition partition() {
        return partition;
    }

    int leaderEpoch() {
        return leaderEpoch;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Initialization

    /**
     * Reads the persisted state the first time; later calls share that read or complete at once. A failed read
     * fences this state (the manager drops it; the next call builds a fresh one).
     */
    CompletableFuture<Void> maybeInitialize() {
        lock.writeLock().lock();
        try {
            switch (status) {
                case ACTIVE:
                case INITIALIZING:
                    return initialized;
                case FENCED:
                    return CompletableFuture.failedFuture(fencedException());
                default:
                    break;
            }
            status = Status.INITIALIZING;
            initialized = new CompletableFuture<>();
        } finally {
            lock.writeLock().unlock();
        }
        CompletableFuture<ReadShareGroupStateResult> read;
        try {
            read = persister.readState(new ReadShareGroupStateParameters.Builder()
                    .setGroupTopicPartitionData(new GroupTopicPartitionData.Builder<PartitionIdLeaderEpochData>()
                            .setGroupId(groupId)
                            .setTopicsData(List.of(new TopicData<>(partition.topicId(), List.of(
                                    PartitionFactory.newPartitionIdLeaderEpochData(partition.partition(),
                                            leaderEpoch)))))
                            .build())
                    .build());
        } catch (RuntimeException e) {
            read = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Void> future = initialized;
        read.whenComplete(this::completeInitialize);
        return future;
    }

    private void completeInitialize(ReadShareGroupStateResult result, Throwable error) {
        Throwable failure = null;
        lock.writeLock().lock();
        try {
            if (status != Status.INITIALIZING) {
                failure = fencedException();
            } else if (error != null) {
                failure = persisterException(unwrap(error));
            } else {
                PartitionAllData data = single(result == null ? null : result.topicsData());
                if (data.errorCode() != Errors.NONE.code()) {
                    failure = persisterException(Errors.forCode(data.errorCode()), data.errorMessage());
                } else {
                    load(data);
                    status = Status.ACTIVE;
                }
            }
        } catch (ApiException | IllegalStateException e) {
            failure = e;
        } finally {
            lock.writeLock().unlock();
        }
        if (failure == null) {
            initialized.complete(null);
            return;
        }
        log.warn("{}could not load the share state: {}", logPrefix, failure.toString(), failure);
        fence("its state could not be loaded");
        initialized.completeExceptionally(failure);
    }

    private PartitionAllData single(List<TopicData<PartitionAllData>> topics) {
        if (topics == null || topics.size() != 1 || !topics.get(0).topicId().equals(partition.topicId())
                || topics.get(0).partitions().size() != 1
                || topics.get(0).partitions().get(0).partition() != partition.partition()) {
            throw new IllegalStateException("the persister answered for other partitions: " + topics);
        }
        return topics.get(0).partitions().get(0);
    }

    /**
     * Builds the cache from the persisted batches: offsets between them (fetched but never acknowledged by an
     * earlier leader) become AVAILABLE again. An uninitialized start offset resolves {@code share.auto.offset.reset};
     * a start offset past the log end (left by a mirror failback that cut the log) is clamped to the log end, and the
     * persisted batches past it dropped, since those offsets will hold other records.
     */
    private void load(PartitionAllData data) {
        long logEnd = partitionLog.logEndOffset();
        long start = data.startOffset();
        String how = "persisted";
        if (start == PartitionFactory.UNINITIALIZED_START_OFFSET) {
            ShareGroupAutoOffsetResetStrategy reset = settings.autoOffsetReset();
            start = resetOffset(reset);
            how = "share.auto.offset.reset=" + reset;
        }
        if (start > logEnd) {
            log.warn("{}start offset {} is past the log end {} (the log was cut since): starting at the log end and "
                    + "dropping the persisted state past it", logPrefix, start, logEnd);
            start = logEnd;
        }
        stateEpoch = data.stateEpoch();
        startOffset = start;
        long cursor = start;
        List<PersisterStateBatch> batches = new ArrayList<>(data.stateBatches());
        batches.sort(Comparator.comparingLong(PersisterStateBatch::firstOffset));
        for (PersisterStateBatch batch : batches) {
            long first = Math.max(batch.firstOffset(), cursor);
            long last = Math.min(batch.lastOffset(), logEnd - 1);
            if (first > last) {
                continue;
            }
            if (first > cursor) {
                putBatch(cursor, first - 1, RecordState.AVAILABLE, 0);
            }
            RecordState state = RecordState.forId(batch.deliveryState());
            // only terminal and AVAILABLE states are persisted; anything else did not finish its delivery
            putBatch(first, last, isTerminal(state) ? state : RecordState.AVAILABLE, batch.deliveryCount());
            cursor = last + 1;
        }
        endOffset = cursor;
        mayHaveAvailable = true;
        maybeMoveLogStart(partitionLog.logStartOffset());
        advanceStartOffset();
        log.info("{}loaded ({}): start offset {}, end offset {}, state epoch {}, {} persisted batches", logPrefix, how,
                startOffset, endOffset, stateEpoch, batches.size());
    }

    private long resetOffset(ShareGroupAutoOffsetResetStrategy reset) {
        switch (reset.type()) {
            case EARLIEST:
                return partitionLog.logStartOffset();
            case LATEST:
                return partitionLog.highWatermark();
            default:
                // by_duration: the first record at or after now - duration; none yet means none newer: the end
                return partitionLog.offsetForTimestamp(reset.timestamp()).orElseGet(partitionLog::highWatermark);
        }
    }

    private void putBatch(long first, long last, RecordState state, int deliveryCount) {
        cachedState.put(first, new InFlightBatch(timer, time, EMPTY_MEMBER_ID, first, last, state, deliveryCount,
                null, timeoutHandler, metrics));
    }

    // ---------------------------------------------------------------------------------------------------------
    // Fetch lock and acquisition

    Status status() {
        lock.readLock().lock();
        try {
            return status;
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Takes the fetch lock when the state is active and records can be acquired: AVAILABLE ones in the cache, or
     * room below {@code share.partition.max.record.locks} for new ones. Moves the SPSO first if the log start passed
     * it, so the next fetch offset is readable.
     */
    Optional<SharePartitions.FetchLock> tryFetchLock() {
        if (!fetchLock.compareAndSet(false, true)) {
            return Optional.empty();
        }
        long next;
        lock.writeLock().lock();
        try {
            boolean acquirable = false;
            next = -1;
            if (status == Status.ACTIVE) {
                maybeMoveLogStart(partitionLog.logStartOffset());
                next = nextFetchOffset();
                acquirable = next < endOffset || endOffset - startOffset < settings.maxRecordLocks();
            }
            if (!acquirable) {
                fetchLock.set(false);
                return Optional.empty();
            }
        } finally {
            lock.writeLock().unlock();
        }
        fetchLockTakenMs = time.hiResClockMs();
        long fetchOffset = next;
        return Optional.of(new SharePartitions.FetchLock() {
            private boolean released;

            @Override
            public long nextFetchOffset() {
                return fetchOffset;
            }

            @Override
            public ShareAcquiredRecords acquire(String memberId, int batchSize, int maxRecords, long offset,
                                                FetchPartitionData data) {
                if (released) {
                    throw new IllegalStateException("the fetch lock was released");
                }
                return SharePartitionState.this.acquire(memberId, batchSize, maxRecords, offset, data);
            }

            @Override
            public void close() {
                if (!released) {
                    released = true;
                    metrics.recordFetchLockTimeMs(time.hiResClockMs() - fetchLockTakenMs);
                    fetchLock.set(false);
                }
            }
        });
    }

    /** The lowest AVAILABLE offset in the cache, else the end offset. Under the write lock. */
    private long nextFetchOffset() {
        if (!mayHaveAvailable) {
            return endOffset;
        }
        for (InFlightBatch batch : cachedState.values()) {
            if (batch.offsetState() == null) {
                if (batch.batchState() == RecordState.AVAILABLE && !batch.batchHasOngoingStateTransition()
                        && batch.lastOffset() >= startOffset) {
                    return Math.max(batch.firstOffset(), startOffset);
                }
                continue;
            }
            for (Map.Entry<Long, InFlightState> e : batch.offsetState().tailMap(startOffset).entrySet()) {
                if (e.getValue().state() == RecordState.AVAILABLE && !e.getValue().hasOngoingStateTransition()) {
                    return e.getKey();
                }
            }
        }
        mayHaveAvailable = false;
        return endOffset;
    }

    /**
     * Acquires for {@code memberId} the AVAILABLE records among those read from {@code fetchOffset}: cached ones
     * (released or expired earlier) get their delivery count raised, records past the end offset join the cache as
     * new batches (cut at log batch boundaries every {@code batchSize} records, and only while fewer than
     * {@code share.partition.max.record.locks} records are in flight). {@code maxRecords} is a soft limit: a log
     * batch is acquired whole. Control batches, and under read_committed the batches of aborted transactions (the
     * read carried them), are archived instead of delivered. One acquisition lock per acquired batch (per offset
     * for records of a split batch).
     */
    ShareAcquiredRecords acquire(String memberId, int batchSize, int maxRecords, long fetchOffset,
                                 FetchPartitionData data) {
        if (maxRecords <= 0) {
            return ShareAcquiredRecords.empty();
        }
        List<RecordBatch> batches = new ArrayList<>();
        data.records.batches().forEach(batches::add);
        if (batches.isEmpty()) {
            return ShareAcquiredRecords.empty();
        }
        List<long[]> undeliverable = undeliverable(batches, data.abortedTransactions.orElse(List.of()));
        long firstBase = batches.get(0).baseOffset();
        long lastOffset = batches.get(batches.size() - 1).lastOffset();
        List<AcquiredRecords> acquired = new ArrayList<>();
        int count = 0;
        boolean archived = false;
        lock.writeLock().lock();
        try {
            if (status != Status.ACTIVE) {
                return ShareAcquiredRecords.empty();
            }
            maybeMoveLogStart(data.logStartOffset);
            long from = Math.max(fetchOffset, startOffset);
            if (from < firstBase && from < endOffset) {
                // the log no longer holds these offsets (compacted away): nobody can ever receive them
                archived |= archiveAvailable(from, Math.min(firstBase, endOffset) - 1);
            }
            long readFrom = Math.max(from, firstBase);
            long cachedTo = Math.min(lastOffset, endOffset - 1);
            int lockDurationMs = settings.recordLockDurationMs();
            int deliveryLimit = settings.deliveryCountLimit();
            // 1. records already in the cache (released, expired, or AVAILABLE since the state was loaded)
            if (readFrom <= cachedTo) {
                Long floor = cachedState.floorKey(readFrom);
                for (InFlightBatch batch : cachedState.subMap(floor == null ? readFrom : floor, true, cachedTo, true)
                        .values()) {
                    if (count >= maxRecords) {
                        break;
                    }
                    if (batch.offsetState() == null) {
                        if (batch.batchState() != RecordState.AVAILABLE || batch.batchHasOngoingStateTransition()) {
                            continue;
                        }
                        if (batch.firstOffset() >= readFrom && batch.lastOffset() <= cachedTo
                                && !overlaps(undeliverable, batch.firstOffset(), batch.lastOffset())) {
                            InFlightState state = batch.tryUpdateBatchState(RecordState.ACQUIRED,
                                    DeliveryCountOps.INCREASE, deliveryLimit, memberId, false);
                            if (state == null) {
                                continue;
                            }
                            batch.updateAcquisitionLockTimeout(lockTimer(memberId, batch.firstOffset(),
                                    batch.lastOffset(), lockDurationMs));
                            append(acquired, batch.firstOffset(), batch.lastOffset(), state.deliveryCount());
                            count += (int) (batch.lastOffset() - batch.firstOffset() + 1);
                            continue;
                        }
                        batch.maybeInitializeOffsetStateUpdate();
                    }
                    long lo = Math.max(readFrom, batch.firstOffset());
                    long hi = Math.min(cachedTo, batch.lastOffset());
                    for (Map.Entry<Long, InFlightState> e : batch.offsetState().subMap(lo, true, hi, true).entrySet()) {
                        InFlightState state = e.getValue();
                        if (state.state() != RecordState.AVAILABLE || state.hasOngoingStateTransition()) {
                            continue;
                        }
                        long offset = e.getKey();
                        if (overlaps(undeliverable, offset, offset)) {
                            state.archive();
                            archived = true;
                            continue;
                        }
                        if (count >= maxRecords) {
                            break;
                        }
                        if (state.tryUpdateState(RecordState.ACQUIRED, DeliveryCountOps.INCREASE, deliveryLimit,
                                memberId, false) == null) {
                            continue;
                        }
                        state.updateAcquisitionLockTimeoutTask(lockTimer(memberId, offset, offset, lockDurationMs));
                        append(acquired, offset, offset, state.deliveryCount());
                        count++;
                    }
                }
            }
            // 2. records past the end offset, if this read covers it (it started at or before the end offset)
            if (fetchOffset <= endOffset && lastOffset >= endOffset && count < maxRecords) {
                int room = settings.maxRecordLocks() - (int) (endOffset - startOffset);
                if (room > 0) {
                    count += acquireNew(memberId, batches, undeliverable, Math.min(maxRecords - count, room),
                            batchSize, lockDurationMs, acquired);
                }
            }
            // archived records (holes, control batches, aborted transactions) at the head let the SPSO move
            advanceStartOffset();
        } finally {
            lock.writeLock().unlock();
        }
        if (archived) {
            log.debug("{}archived records the log no longer holds or no consumer may receive", logPrefix);
        }
        if (log.isDebugEnabled()) {
            log.debug("{}member {} acquired {} records from offset {}: {}", logPrefix, memberId, count, fetchOffset,
                    acquired);
        }
        return acquired.isEmpty() ? ShareAcquiredRecords.empty() : new ShareAcquiredRecords(acquired, count);
    }

    /** Archives the AVAILABLE records of {@code [first, last]}; whether any was. Under the write lock. */
    private boolean archiveAvailable(long first, long last) {
        boolean any = false;
        Long floor = cachedState.floorKey(first);
        for (InFlightBatch batch : cachedState.subMap(floor == null ? first : floor, true, last, true).values()) {
            if (batch.offsetState() == null) {
                if (batch.batchState() != RecordState.AVAILABLE || batch.batchHasOngoingStateTransition()) {
                    continue;
                }
                if (batch.firstOffset() >= first && batch.lastOffset() <= last) {
                    batch.archiveBatch();
                    any = true;
                    continue;
                }
                batch.maybeInitializeOffsetStateUpdate();
            }
            for (InFlightState state : batch.offsetState().subMap(first, true, last, true).values()) {
                if (state.state() == RecordState.AVAILABLE && !state.hasOngoingStateTransition()) {
                    state.archive();
                    any = true;
                }
            }
        }
        return any;
    }

    /** Takes records from the end offset into the cache; returns how many were acquired. Under the write lock. */
    private int acquireNew(String memberId, List<RecordBatch> batches, List<long[]> undeliverable, int limit,
                           int batchSize, int lockDurationMs, List<AcquiredRecords> acquired) {
        int count = 0;
        long cursor = endOffset;
        long groupFirst = -1;
        for (RecordBatch batch : batches) {
            long last = batch.lastOffset();
            if (last < cursor) {
                continue;
            }
            if (count >= limit) {
                break;
            }
            long first = Math.max(batch.baseOffset(), cursor);
            boolean deliverable = !overlaps(undeliverable, first, last);
            if (groupFirst >= 0 && (first > cursor || !deliverable || first - groupFirst >= Math.max(1, batchSize))) {
                addAcquiredBatch(memberId, groupFirst, cursor - 1, lockDurationMs, acquired);
                groupFirst = -1;
            }
            if (first > cursor) {
                putBatch(cursor, first - 1, RecordState.ARCHIVED, 0); // a hole of the log
            }
            if (deliverable) {
                if (groupFirst < 0) {
                    groupFirst = first;
                }
                count += (int) (last - first + 1);
            } else {
                putBatch(first, last, RecordState.ARCHIVED, 0);
            }
            cursor = last + 1;
        }
        if (groupFirst >= 0) {
            addAcquiredBatch(memberId, groupFirst, cursor - 1, lockDurationMs, acquired);
        }
        endOffset = cursor;
        return count;
    }

    private void addAcquiredBatch(String memberId, long first, long last, int lockDurationMs,
                                  List<AcquiredRecords> acquired) {
        AcquisitionLockTimerTask task = lockTimer(memberId, first, last, lockDurationMs);
        cachedState.put(first, new InFlightBatch(timer, time, memberId, first, last, RecordState.ACQUIRED, 1, task,
                timeoutHandler, metrics));
        metrics.recordInFlightBatchMessageCount(last - first + 1);
        append(acquired, first, last, 1);
    }

    private AcquisitionLockTimerTask lockTimer(String memberId, long first, long last, int delayMs) {
        AcquisitionLockTimerTask task = new AcquisitionLockTimerTask(time, delayMs, memberId, first, last,
                timeoutHandler, metrics);
        timer.add(task);
        return task;
    }

    /** Adds a range to the answer, joined to the previous one when it continues it with the same delivery count. */
    private static void append(List<AcquiredRecords> acquired, long first, long last, int deliveryCount) {
        if (!acquired.isEmpty()) {
            AcquiredRecords previous = acquired.get(acquired.size() - 1);
            if (previous.lastOffset() + 1 == first && previous.deliveryCount() == deliveryCount) {
                previous.setLastOffset(last);
                return;
            }
        }
        acquired.add(new AcquiredRecords().setFirstOffset(first).setLastOffset(last)
                .setDeliveryCount((short) deliveryCount));
    }

    /**
     * The offset ranges of the read that no consumer may receive: control batches (transaction markers), and the
     * batches of transactions the read reports aborted (present only for a read_committed read).
     */
    private static List<long[]> undeliverable(List<RecordBatch> batches,
                                              List<FetchResponseData.AbortedTransaction> abortedTransactions) {
        PriorityQueue<FetchResponseData.AbortedTransaction> aborted = new PriorityQueue<>(
                Comparator.comparingLong(FetchResponseData.AbortedTransaction::firstOffset));
        aborted.addAll(abortedTransactions);
        Set<Long> abortedProducers = new HashSet<>();
        List<long[]> ranges = new ArrayList<>();
        for (RecordBatch batch : batches) {
            if (batch.isControlBatch()) {
                ranges.add(new long[] {batch.baseOffset(), batch.lastOffset()});
                if (batch.hasProducerId() && isAbortMarker(batch)) {
                    abortedProducers.remove(batch.producerId());
                }
                continue;
            }
            if (!batch.hasProducerId()) {
                continue;
            }
            while (!aborted.isEmpty() && aborted.peek().firstOffset() <= batch.lastOffset()) {
                abortedProducers.add(aborted.poll().producerId());
            }
            if (batch.isTransactional() && abortedProducers.contains(batch.producerId())) {
                ranges.add(new long[] {batch.baseOffset(), batch.lastOffset()});
            }
        }
        return ranges;
    }

    private static boolean isAbortMarker(RecordBatch batch) {
        Iterator<Record> records = batch.iterator();
        return records.hasNext() && ControlRecordType.parse(records.next().key()) == ControlRecordType.ABORT;
    }

    private static boolean overlaps(List<long[]> ranges, long first, long last) {
        for (long[] range : ranges) {
            if (range[0] <= last && range[1] >= first) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------------------------------------------------
    // Acknowledgement, release, lock expiry

    /** One pending transition: the in-memory state it changed and what to persist for it. */
    private record Pending(InFlightState state, PersisterStateBatch batch) {
    }

    /**
     * Applies a member's acknowledgements: only records that member holds ACQUIRED may be acknowledged (else
     * INVALID_RECORD_STATE, and nothing of the request is applied); offsets below the SPSO are skipped (they are
     * done with). Persisted before the future completes; a failed write rolls every change back.
     */
    CompletableFuture<Void> acknowledge(String memberId, List<ShareAcknowledgementBatch> acknowledgements) {
        for (ShareAcknowledgementBatch ack : acknowledgements) {
            Optional<String> invalid = invalidAcknowledgement(ack);
            if (invalid.isPresent()) {
                return CompletableFuture.failedFuture(new InvalidRequestException(invalid.get()));
            }
        }
        List<Pending> pending = new ArrayList<>();
        lock.writeLock().lock();
        try {
            if (status != Status.ACTIVE) {
                return CompletableFuture.failedFuture(fencedException());
            }
            int deliveryLimit = settings.deliveryCountLimit();
            for (ShareAcknowledgementBatch ack : acknowledgements) {
                Optional<ApiException> error = acknowledgeRange(memberId, ack, deliveryLimit, pending);
                if (error.isPresent()) {
                    rollback(pending);
                    return CompletableFuture.failedFuture(error.get());
                }
            }
        } finally {
            lock.writeLock().unlock();
        }
        return persist(pending, "acknowledgement of " + memberId);
    }

    private static Optional<String> invalidAcknowledgement(ShareAcknowledgementBatch ack) {
        if (ack.lastOffset() < ack.firstOffset()) {
            return Optional.of("acknowledgement batch " + ack + " ends before it starts");
        }
        List<Byte> types = ack.acknowledgeTypes();
        if (types == null || types.isEmpty()
                || (types.size() != 1 && types.size() != ack.lastOffset() - ack.firstOffset() + 1)) {
            return Optional.of("acknowledgement batch " + ack + " needs one type or one per offset");
        }
        for (byte type : types) {
            if (type != 0 && type != AcknowledgeType.ACCEPT.id && type != AcknowledgeType.RELEASE.id
                    && type != AcknowledgeType.REJECT.id) {
                return Optional.of("acknowledge type " + type + " is not supported");
            }
        }
        return Optional.empty();
    }

    /** ACCEPT → ACKNOWLEDGED, RELEASE → AVAILABLE (ARCHIVED at the delivery limit), REJECT and GAP (0) → ARCHIVED. */
    private static RecordState targetState(byte type) {
        if (type == AcknowledgeType.ACCEPT.id) {
            return RecordState.ACKNOWLEDGED;
        }
        return type == AcknowledgeType.RELEASE.id ? RecordState.AVAILABLE : RecordState.ARCHIVED;
    }

    private Optional<ApiException> acknowledgeRange(String memberId, ShareAcknowledgementBatch ack,
                                                    int deliveryLimit, List<Pending> pending) {
        if (ack.lastOffset() < startOffset) {
            return Optional.empty();
        }
        long lo = Math.max(ack.firstOffset(), startOffset);
        if (ack.lastOffset() >= endOffset) {
            return Optional.of(new InvalidRecordStateException("offsets " + lo + "-" + ack.lastOffset()
                    + " were not all acquired (end offset " + endOffset + ")"));
        }
        List<Byte> types = ack.acknowledgeTypes();
        long covered = lo;
        Long floor = cachedState.floorKey(lo);
        for (InFlightBatch batch : cachedState.subMap(floor == null ? lo : floor, true, ack.lastOffset(), true)
                .values()) {
            long first = Math.max(lo, batch.firstOffset());
            long last = Math.min(ack.lastOffset(), batch.lastOffset());
            if (first > covered) {
                break;
            }
            if (batch.offsetState() == null) {
                if (batch.batchState() != RecordState.ACQUIRED || !memberId.equals(batch.batchMemberId())
                        || batch.batchHasOngoingStateTransition()) {
                    return Optional.of(notAcquired(memberId, batch.firstOffset(), batch.lastOffset()));
                }
                if (first == batch.firstOffset() && last == batch.lastOffset()
                        && sameType(types, ack.firstOffset(), first, last)) {
                    byte type = typeAt(types, ack.firstOffset(), first);
                    InFlightState state = batch.startBatchStateTransition(targetState(type), DeliveryCountOps.NO_OP,
                            deliveryLimit, EMPTY_MEMBER_ID, false);
                    if (state == null) {
                        return Optional.of(notAcquired(memberId, first, last));
                    }
                    pending.add(new Pending(state, new PersisterStateBatch(first, last, state.state().id(),
                            (short) state.deliveryCount())));
                    covered = last + 1;
                    continue;
                }
                batch.maybeInitializeOffsetStateUpdate();
            }
            for (long offset = first; offset <= last; offset++) {
                InFlightState state = batch.offsetState().get(offset);
                if (state.state() != RecordState.ACQUIRED || !memberId.equals(state.memberId())
                        || state.hasOngoingStateTransition()) {
                    return Optional.of(notAcquired(memberId, offset, offset));
                }
                InFlightState updated = state.startStateTransition(targetState(typeAt(types, ack.firstOffset(),
                        offset)), DeliveryCountOps.NO_OP, deliveryLimit, EMPTY_MEMBER_ID, false);
                if (updated == null) {
                    return Optional.of(notAcquired(memberId, offset, offset));
                }
                addPending(pending, updated, offset);
            }
            covered = last + 1;
        }
        if (covered <= ack.lastOffset()) {
            return Optional.of(new InvalidRecordStateException("offsets " + covered + "-" + ack.lastOffset()
                    + " are not in flight"));
        }
        return Optional.empty();
    }

    /** Adds a one-offset change ({@link #coalesce} joins neighbours before the write). */
    private static void addPending(List<Pending> pending, InFlightState state, long offset) {
        PersisterStateBatch batch = new PersisterStateBatch(offset, offset, state.state().id(),
                (short) state.deliveryCount());
        pending.add(new Pending(state, batch));
    }

    private static byte typeAt(List<Byte> types, long ackFirst, long offset) {
        return types.size() == 1 ? types.get(0) : types.get((int) (offset - ackFirst));
    }

    private static boolean sameType(List<Byte> types, long ackFirst, long first, long last) {
        if (types.size() == 1) {
            return true;
        }
        byte type = typeAt(types, ackFirst, first);
        for (long offset = first + 1; offset <= last; offset++) {
            if (typeAt(types, ackFirst, offset) != type) {
                return false;
            }
        }
        return true;
    }

    private InvalidRecordStateException notAcquired(String memberId, long first, long last) {
        return new InvalidRecordStateException("offsets " + first + "-" + last + " of " + partition
                + " are not acquired by member " + memberId);
    }

    /**
     * Makes every record {@code memberId} holds AVAILABLE again (ARCHIVED at the delivery limit), persisted as an
     * acknowledgement is: the member left or closed its share session.
     */
    CompletableFuture<Void> releaseAcquiredRecords(String memberId) {
        List<Pending> pending = new ArrayList<>();
        lock.writeLock().lock();
        try {
            if (status != Status.ACTIVE) {
                return CompletableFuture.completedFuture(null);
            }
            int deliveryLimit = settings.deliveryCountLimit();
            for (InFlightBatch batch : cachedState.values()) {
                if (batch.offsetState() == null) {
                    if (batch.batchState() == RecordState.ACQUIRED && memberId.equals(batch.batchMemberId())
                            && !batch.batchHasOngoingStateTransition()) {
                        if (batch.firstOffset() >= startOffset) {
                            InFlightState state = batch.startBatchStateTransition(RecordState.AVAILABLE,
                                    DeliveryCountOps.NO_OP, deliveryLimit, EMPTY_MEMBER_ID, false);
                            if (state != null) {
                                pending.add(new Pending(state, new PersisterStateBatch(batch.firstOffset(),
                                        batch.lastOffset(), state.state().id(), (short) state.deliveryCount())));
                            }
                            continue;
                        }
                        batch.maybeInitializeOffsetStateUpdate();
                    } else {
                        continue;
                    }
                }
                for (Map.Entry<Long, InFlightState> e : batch.offsetState().tailMap(startOffset).entrySet()) {
                    InFlightState state = e.getValue();
                    if (state.state() == RecordState.ACQUIRED && memberId.equals(state.memberId())
                            && !state.hasOngoingStateTransition()) {
                        InFlightState updated = state.startStateTransition(RecordState.AVAILABLE,
                                DeliveryCountOps.NO_OP, deliveryLimit, EMPTY_MEMBER_ID, false);
                        if (updated != null) {
                            addPending(pending, updated, e.getKey());
                        }
                    }
                }
            }
        } finally {
            lock.writeLock().unlock();
        }
        return persist(pending, "release of " + memberId + "'s records");
    }

    /**
     * An acquisition lock expired: the records it covers that are still ACQUIRED under it become AVAILABLE, or
     * ARCHIVED at the delivery limit. Records with a transition in flight are left to it (its rollback sees the
     * expiry). Persisted best effort: the new states hold in memory whatever the write's outcome, as in Kafka.
     */
    private void onLockExpired(String memberId, long first, long last, TimerTask task) {
        List<PersisterStateBatch> writes = new ArrayList<>();
        lock.writeLock().lock();
        try {
            if (task.isCancelled() || status != Status.ACTIVE) {
                return;
            }
            int deliveryLimit = settings.deliveryCountLimit();
            Long floor = cachedState.floorKey(first);
            for (InFlightBatch batch : cachedState.subMap(floor == null ? first : floor, true, last, true).values()) {
                if (batch.offsetState() == null) {
                    if (batch.batchAcquisitionLockTimeoutTask() == task && batch.batchState() == RecordState.ACQUIRED
                            && !batch.batchHasOngoingStateTransition()) {
                        RecordState target = batch.lastOffset() < startOffset ? RecordState.ARCHIVED
                                : RecordState.AVAILABLE;
                        InFlightState state = batch.tryUpdateBatchState(target, DeliveryCountOps.NO_OP,
                                deliveryLimit, EMPTY_MEMBER_ID, false);
                        if (state != null) {
                            state.cancelAndClearAcquisitionLockTimeoutTask();
                            writes.add(new PersisterStateBatch(batch.firstOffset(), batch.lastOffset(),
                                    state.state().id(), (short) state.deliveryCount()));
                        }
                    }
                    continue;
                }
                for (Map.Entry<Long, InFlightState> e : batch.offsetState().subMap(first, true, last, true)
                        .entrySet()) {
                    InFlightState state = e.getValue();
                    if (state.acquisitionLockTimeoutTask() == task && state.state() == RecordState.ACQUIRED
                            && !state.hasOngoingStateTransition()) {
                        RecordState target = e.getKey() < startOffset ? RecordState.ARCHIVED : RecordState.AVAILABLE;
                        InFlightState updated = state.tryUpdateState(target, DeliveryCountOps.NO_OP, deliveryLimit,
                                EMPTY_MEMBER_ID, false);
                        if (updated != null) {
                            updated.cancelAndClearAcquisitionLockTimeoutTask();
                            writes.add(new PersisterStateBatch(e.getKey(), e.getKey(), updated.state().id(),
                                    (short) updated.deliveryCount()));
                        }
                    }
                }
            }
            if (!writes.isEmpty()) {
                mayHaveAvailable = true;
                advanceStartOffset();
            }
        } finally {
            lock.writeLock().unlock();
        }
        if (writes.isEmpty()) {
            return;
        }
        log.debug("{}acquisition lock of member {} on {}-{} expired", logPrefix, memberId, first, last);
        writeState(writes).whenComplete((ignored, error) -> {
            if (error != null) {
                onWriteFailed(error, "lock expiry");
            }
        });
        listener.onAcquirable(this);
    }

    private void rollback(List<Pending> pending) {
        for (Pending p : pending) {
            p.state().completeStateTransition(false);
        }
    }

    /** Writes the pending transitions, then commits them (or rolls them back), moves the SPSO and wakes fetches. */
    private CompletableFuture<Void> persist(List<Pending> pending, String what) {
        if (pending.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        writeState(coalesce(pending)).whenComplete((ignored, error) -> {
            lock.writeLock().lock();
            try {
                for (Pending p : pending) {
                    p.state().completeStateTransition(error == null);
                }
                mayHaveAvailable = true;
                if (status == Status.ACTIVE) {
                    advanceStartOffset();
                }
            } finally {
                lock.writeLock().unlock();
            }
            if (error != null) {
                done.completeExceptionally(onWriteFailed(error, what));
            } else {
                done.complete(null);
            }
            listener.onAcquirable(this);
        });
        return done;
    }

    /** Joins adjacent one-offset ranges with the same state and delivery count: fewer state batches to write. */
    private static List<PersisterStateBatch> coalesce(List<Pending> pending) {
        List<PersisterStateBatch> batches = new ArrayList<>();
        for (Pending p : pending) {
            PersisterStateBatch b = p.batch();
            if (!batches.isEmpty()) {
                PersisterStateBatch previous = batches.get(batches.size() - 1);
                if (previous.lastOffset() + 1 == b.firstOffset() && previous.deliveryState() == b.deliveryState()
                        && previous.deliveryCount() == b.deliveryCount()) {
                    batches.set(batches.size() - 1, new PersisterStateBatch(previous.firstOffset(), b.lastOffset(),
                            b.deliveryState(), b.deliveryCount()));
                    continue;
                }
            }
            batches.add(b);
        }
        return batches;
    }

    /** A failed write: logged; a fenced state epoch or leader epoch fences this state. Returns the caller's error. */
    private ApiException onWriteFailed(Throwable error, String what) {
        ApiException failure = error instanceof ApiException api ? api : persisterException(unwrap(error));
        if (failure instanceof FencedByPersister) {
            log.info("{}the share coordinator fenced the {} ({}): dropping this state to load it again", logPrefix,
                    what, failure.getMessage());
            fence("the share coordinator answered " + failure.getMessage());
            return new NotLeaderOrFollowerException("The share partition state of " + partition + " was fenced: "
                    + failure.getMessage());
        }
        log.warn("{}could not persist the {}: {}", logPrefix, what, failure.toString(), failure);
        return failure;
    }

    private CompletableFuture<Void> writeState(List<PersisterStateBatch> batches) {
        WriteShareGroupStateParameters parameters;
        lock.readLock().lock();
        try {
            parameters = new WriteShareGroupStateParameters.Builder()
                    .setGroupTopicPartitionData(new GroupTopicPartitionData.Builder<PartitionStateBatchData>()
                            .setGroupId(groupId)
                            .setTopicsData(List.of(new TopicData<>(partition.topicId(), List.of(
                                    PartitionFactory.newPartitionStateBatchData(partition.partition(), stateEpoch,
                                            startOffset, deliveryCompleteCount(), leaderEpoch, batches)))))
                            .build())
                    .build();
        } finally {
            lock.readLock().unlock();
        }
        CompletableFuture<WriteShareGroupStateResult> write;
        try {
            write = persister.writeState(parameters);
        } catch (RuntimeException e) {
            write = CompletableFuture.failedFuture(e);
        }
        return write.thenApply(result -> {
            List<TopicData<PartitionErrorData>> topics = result == null ? null : result.topicsData();
            if (topics == null || topics.size() != 1 || topics.get(0).partitions().size() != 1) {
                throw new UnknownServerException("the persister answered for other partitions: " + topics);
            }
            PartitionErrorData data = topics.get(0).partitions().get(0);
            if (data.errorCode() != Errors.NONE.code()) {
                throw persisterException(Errors.forCode(data.errorCode()), data.errorMessage());
            }
            return null;
        });
    }

    /** Records in a terminal state at or above the SPSO (the coordinator's DeliveryCompleteCount, for lag). */
    private int deliveryCompleteCount() {
        int count = 0;
        for (InFlightBatch batch : cachedState.values()) {
            if (batch.offsetState() == null) {
                if (isTerminal(batch.batchState()) && !batch.batchHasOngoingStateTransition()) {
                    count += (int) (batch.lastOffset() - Math.max(batch.firstOffset(), startOffset) + 1);
                }
                continue;
            }
            for (InFlightState state : batch.offsetState().tailMap(startOffset).values()) {
                if (isTerminal(state.state()) && !state.hasOngoingStateTransition()) {
                    count++;
                }
            }
        }
        return Math.max(0, count);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Start offset, log start, fencing

    /**
     * Moves the SPSO past the leading records in a terminal state (ACKNOWLEDGED, ARCHIVED; none with a transition
     * in flight) and drops the cached batches wholly below it. Under the write lock.
     */
    private void advanceStartOffset() {
        long next = startOffset;
        Long floor = cachedState.floorKey(startOffset);
        outer:
        for (InFlightBatch batch : cachedState.tailMap(floor == null ? startOffset : floor, true).values()) {
            if (batch.offsetState() == null) {
                if (batch.batchHasOngoingStateTransition() || !isTerminal(batch.batchState())) {
                    break;
                }
                next = Math.max(next, batch.lastOffset() + 1);
                continue;
            }
            for (Map.Entry<Long, InFlightState> e : batch.offsetState().tailMap(next).entrySet()) {
                if (e.getValue().hasOngoingStateTransition() || !isTerminal(e.getValue().state())) {
                    break outer;
                }
                next = e.getKey() + 1;
            }
        }
        if (next == startOffset) {
            return;
        }
        startOffset = next;
        cachedState.headMap(startOffset).entrySet().removeIf(e -> e.getValue().lastOffset() < startOffset);
        if (cachedState.isEmpty() && endOffset < startOffset) {
            endOffset = startOffset;
        }
    }

    /**
     * The log start moved past the SPSO (retention, DeleteRecords, a failback's cut): records below it can never
     * be delivered again, so those not yet in a terminal state are archived (their locks cancelled) and the SPSO
     * moves to the log start. The new SPSO is persisted with the next write, as Kafka does. Under the write lock.
     */
    private void maybeMoveLogStart(long logStartOffset) {
        if (logStartOffset <= startOffset) {
            return;
        }
        log.info("{}log start offset {} passed the start offset {}: archiving the records below it", logPrefix,
                logStartOffset, startOffset);
        for (InFlightBatch batch : cachedState.headMap(logStartOffset).values()) {
            if (batch.offsetState() == null && batch.lastOffset() < logStartOffset) {
                if (!isTerminal(batch.batchState())) {
                    batch.archiveBatch();
                }
                continue;
            }
            if (batch.offsetState() == null) {
                if (isTerminal(batch.batchState())) {
                    continue;
                }
                batch.maybeInitializeOffsetStateUpdate();
            }
            for (InFlightState state : batch.offsetState().headMap(logStartOffset).values()) {
                if (!isTerminal(state.state())) {
                    state.archive();
                }
            }
        }
        startOffset = logStartOffset;
        if (endOffset < startOffset) {
            endOffset = startOffset;
        }
        cachedState.headMap(startOffset).entrySet().removeIf(e -> e.getValue().lastOffset() < startOffset);
        advanceStartOffset();
    }

    /**
     * Stops this state for good: cancels every acquisition lock, empties the cache, closes the metrics and tells
     * the listener (which drops it). Idempotent.
     */
    boolean fence(String reason) {
        lock.writeLock().lock();
        try {
            if (status == Status.FENCED) {
                return false;
            }
            status = Status.FENCED;
            cancelLocks();
            cachedState.clear();
        } finally {
            lock.writeLock().unlock();
        }
        log.info("{}fenced: {}", logPrefix, reason);
        closeMetrics();
        listener.onFenced(this);
        return true;
    }

    private void cancelLocks() {
        for (InFlightBatch batch : cachedState.values()) {
            if (batch.offsetState() == null) {
                batch.cancelAndClearAcquisitionLockTimeoutTask();
            } else {
                batch.offsetState().values().forEach(InFlightState::cancelAndClearAcquisitionLockTimeoutTask);
            }
        }
    }

    private void closeMetrics() {
        try {
            metrics.close();
        } catch (Exception e) {
            log.warn("{}could not remove the share partition metrics", logPrefix, e);
        }
    }

    private static boolean isTerminal(RecordState state) {
        return state == RecordState.ACKNOWLEDGED || state == RecordState.ARCHIVED;
    }

    private int inFlightRecordCount() {
        lock.readLock().lock();
        try {
            return (int) (endOffset - startOffset);
        } finally {
            lock.readLock().unlock();
        }
    }

    private NotLeaderOrFollowerException fencedException() {
        return new NotLeaderOrFollowerException("The share partition " + groupId + " " + partition
                + " is no longer served by this state (fenced)");
    }

    /** The persister told this leader its view is stale (the state epoch or leader epoch moved on). */
    private static final class FencedByPersister extends ApiException {
        FencedByPersister(String message) {
            super(message);
        }
    }

    /** Kafka's mapping of persister errors to what the share fetch path answers. */
    private static ApiException persisterException(Errors error, String message) {
        String text = error.name() + (message == null || message.isEmpty() ? "" : ": " + message);
        switch (error) {
            case FENCED_STATE_EPOCH:
            case FENCED_LEADER_EPOCH:
                return new FencedByPersister(text);
            case NOT_COORDINATOR:
            case COORDINATOR_NOT_AVAILABLE:
            case COORDINATOR_LOAD_IN_PROGRESS:
                return new CoordinatorNotAvailableException(text);
            default:
                ApiException exception = error.exception(message);
                return exception == null ? new UnknownServerException(text) : exception;
        }
    }

    private static ApiException persisterException(Throwable error) {
        if (error instanceof ApiException api) {
            return api;
        }
        return new UnknownServerException("The share state persister failed: " + error);
    }

    private static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    // ---------------------------------------------------------------------------------------------------------
    // For tests and the manager

    long startOffset() {
        lock.readLock().lock();
        try {
            return startOffset;
        } finally {
            lock.readLock().unlock();
        }
    }

    long endOffset() {
        lock.readLock().lock();
        try {
            return endOffset;
        } finally {
            lock.readLock().unlock();
        }
    }

    int stateEpoch() {
        lock.readLock().lock();
        try {
            return stateEpoch;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The state and delivery count of one offset ({@code null} when it is not in the cache). */
    InFlightState recordState(long offset) {
        lock.readLock().lock();
        try {
            Map.Entry<Long, InFlightBatch> entry = cachedState.floorEntry(offset);
            if (entry == null || entry.getValue().lastOffset() < offset) {
                return null;
            }
            InFlightBatch batch = entry.getValue();
            if (batch.offsetState() != null) {
                return batch.offsetState().get(offset);
            }
            return new InFlightState(batch.batchState(), batch.batchDeliveryCount(), batch.batchMemberId());
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Cancels the locks and closes the metrics, without telling the listener: the manager is closing. */
    void close() {
        lock.writeLock().lock();
        try {
            status = Status.FENCED;
            cancelLocks();
            cachedState.clear();
        } finally {
            lock.writeLock().unlock();
        }
        closeMetrics();
    }

    @Override
    public String toString() {
        return "SharePartitionState(" + groupId + ", " + partition + ", epoch " + leaderEpoch + ")";
    }
}
