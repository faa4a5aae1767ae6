package io.twinlog.share.partition;

import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ShareFetchResponseData.AcquiredRecords;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.share.fetch.AcquisitionLockTimeoutHandler;
import org.apache.kafka.server.share.fetch.AcquisitionLockTimerTask;
import org.apache.kafka.server.share.fetch.DeliveryCountOps;
import org.apache.kafka.server.share.fetch.InFlightBatch;
import org.apache.kafka.server.share.fetch.InFlightState;
import org.apache.kafka.server.share.fetch.RecordState;
import org.apache.kafka.server.share.fetch.ShareAcquiredRecords;
import org.apache.kafka.server.share.metrics.SharePartitionMetrics;
import org.apache.kafka.server.storage.log.FetchPartitionData;
import org.apache.kafka.server.util.timer.Timer;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

import static io.twinlog.share.partition.SharePartitionState.log;

/**
 * Acquisition for one {@link SharePartitionState}: which records of a log read a member gets, with their delivery
 * counts and acquisition locks (Kafka's {@link AcquisitionLockTimerTask} on the shared timer), and which are
 * archived instead: offsets the log no longer holds, control batches and, under read_committed, the batches of
 * aborted transactions.
 *
 * <p>Threading: no state of its own; {@link #read} and {@link #answer} run without the state's lock,
 * {@link #acquire} under its write lock.
 */
final class RecordAcquisition {
    private final InFlightCache cache;
    private final SharePartitionState.GroupSettings settings;
    private final Timer timer;
    private final Time time;
    private final AcquisitionLockTimeoutHandler timeoutHandler;
    private final SharePartitionMetrics metrics;
    private final String logPrefix;

    /** A log read's batches and the offset ranges of it that no consumer may receive. */
    record LogRead(List<RecordBatch> batches, List<long[]> undeliverable, long logStartOffset) {
        long firstBase() {
            return batches.get(0).baseOffset();
        }

        long lastOffset() {
            return batches.get(batches.size() - 1).lastOffset();
        }
    }

    /** What one acquisition took: the ranges to answer, how many records, whether it archived any. */
    record Acquired(List<AcquiredRecords> ranges, int count, boolean archived) {
    }

    RecordAcquisition(InFlightCache cache, SharePartitionState.GroupSettings settings, Timer timer, Time time,
                      AcquisitionLockTimeoutHandler timeoutHandler, SharePartitionMetrics metrics, String logPrefix) {
        this.cache = cache;
        this.settings = settings;
        this.timer = timer;
        this.time = time;
        this.timeoutHandler = timeoutHandler;
        this.metrics = metrics;
        this.logPrefix = logPrefix;
    }

    /** The read's batches, with what no consumer may receive marked; {@code null} when it holds none. */
    static LogRead read(FetchPartitionData data) {
        List<RecordBatch> batches = new ArrayList<>();
        data.records.batches().forEach(batches::add);
        if (batches.isEmpty()) {
            return null;
        }
        return new LogRead(batches, undeliverable(batches, data.abortedTransactions.orElse(List.of())),
                data.logStartOffset);
    }

    /**
     * Acquires for {@code memberId} the AVAILABLE records among those read from {@code fetchOffset}: cached ones
     * (released or expired earlier) get their delivery count raised, records past the end offset join the cache as
     * new batches (cut at log batch boundaries every {@code batchSize} records, and only while fewer than
     * {@code share.partition.max.record.locks} records are in flight). Control batches, and under read_committed
     * the batches of aborted transactions (the read carried them), are archived instead of delivered. One
     * acquisition lock per acquired batch (per offset for records of a split batch). Moves the SPSO past archived
     * records at the head. Under the write lock.
     *
     * <p>{@code maxRecords} is soft unless {@code recordLimit} (KIP-1206's {@code batch_optimized} and
     * {@code record_limit} acquire modes, as Kafka): soft, a log batch is acquired whole; a record limit acquires
     * exactly up to {@code maxRecords}, splitting a log batch by offset: the batch is cached whole, its first
     * records ACQUIRED (a lock each) and the rest AVAILABLE for the next fetch, and new records are not cut by
     * {@code batchSize}.
     */
    Acquired acquire(String memberId, int batchSize, int maxRecords, boolean recordLimit, long fetchOffset,
                     LogRead read) {
        List<AcquiredRecords> acquired = new ArrayList<>();
        List<long[]> undeliverable = read.undeliverable();
        long firstBase = read.firstBase();
        long lastOffset = read.lastOffset();
        int count = 0;
        boolean archived = false;
        cache.maybeMoveLogStart(read.logStartOffset());
        long from = Math.max(fetchOffset, cache.startOffset());
        if (from < firstBase && from < cache.endOffset()) {
            // the log no longer holds these offsets (compacted away): nobody can ever receive them
            archived |= archiveAvailable(from, Math.min(firstBase, cache.endOffset()) - 1);
        }
        long readFrom = Math.max(from, firstBase);
        long cachedTo = Math.min(lastOffset, cache.endOffset() - 1);
        int lockDurationMs = settings.recordLockDurationMs();
        int deliveryLimit = settings.deliveryCountLimit();
        // 1. records already in the cache (released, expired, or AVAILABLE since the state was loaded)
        if (readFrom <= cachedTo) {
            for (InFlightBatch batch : cache.covering(readFrom, cachedTo)) {
                if (count >= maxRecords) {
                    break;
                }
                if (batch.offsetState() == null) {
                    if (batch.batchState() != RecordState.AVAILABLE || batch.batchHasOngoingStateTransition()) {
                        continue;
                    }
                    boolean overLimit = recordLimit && batch.lastOffset() - batch.firstOffset() + 1 > maxRecords - count;
                    if (batch.firstOffset() >= readFrom && batch.lastOffset() <= cachedTo && !overLimit
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
        if (fetchOffset <= cache.endOffset() && lastOffset >= cache.endOffset() && count < maxRecords) {
            int room = settings.maxRecordLocks() - (int) (cache.endOffset() - cache.startOffset());
            if (room > 0) {
                count += acquireNew(memberId, read.batches(), undeliverable, Math.min(maxRecords - count, room),
                        recordLimit, batchSize, lockDurationMs, acquired);
            }
        }
        // archived records (holes, control batches, aborted transactions) at the head let the SPSO move
        cache.advanceStartOffset();
        return new Acquired(acquired, count, archived);
    }

    /**
     * Restarts the acquisition locks a member renewed (KIP-1222): each runs a full {@code share.record.lock.duration.ms}
     * from now. The planner checked that the member holds the records. Under the write lock.
     */
    void renewLocks(String memberId, List<AcknowledgementPlanner.Renewal> renewals) {
        int lockDurationMs = settings.recordLockDurationMs();
        for (AcknowledgementPlanner.Renewal renewal : renewals) {
            AcquisitionLockTimerTask task = lockTimer(memberId, renewal.first(), renewal.last(), lockDurationMs);
            if (renewal.offsetState() == null) {
                renewal.batch().cancelAndClearAcquisitionLockTimeoutTask();
                renewal.batch().updateAcquisitionLockTimeout(task);
            } else {
                renewal.offsetState().cancelAndClearAcquisitionLockTimeoutTask();
                renewal.offsetState().updateAcquisitionLockTimeoutTask(task);
            }
        }
    }

    /** Logs what was acquired and builds the fetch's answer. Outside the lock. */
    ShareAcquiredRecords answer(String memberId, long fetchOffset, Acquired acquired) {
        if (acquired.archived()) {
            log.debug("{}archived records the log no longer holds or no consumer may receive", logPrefix);
        }
        if (log.isDebugEnabled()) {
            log.debug("{}member {} acquired {} records from offset {}: {}", logPrefix, memberId, acquired.count(),
                    fetchOffset, acquired.ranges());
        }
        return acquired.ranges().isEmpty() ? ShareAcquiredRecords.empty()
                : new ShareAcquiredRecords(acquired.ranges(), acquired.count());
    }

    /** Archives the AVAILABLE records of {@code [first, last]}; whether any was. Under the write lock. */
    private boolean archiveAvailable(long first, long last) {
        boolean any = false;
        for (InFlightBatch batch : cache.covering(first, last)) {
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

    /**
     * Takes records from the end offset into the cache; returns how many were acquired. With {@code recordLimit}
     * the log batch that crosses {@code limit} is cached whole with only its first records acquired. Under the
     * write lock.
     */
    private int acquireNew(String memberId, List<RecordBatch> batches, List<long[]> undeliverable, int limit,
                           boolean recordLimit, int batchSize, int lockDurationMs, List<AcquiredRecords> acquired) {
        int count = 0;
        long cursor = cache.endOffset();
        long groupFirst = -1;
        // a record limit does not cut by batchSize: the acquired records go out as one range, as Kafka's
        int cutEvery = recordLimit ? Integer.MAX_VALUE : Math.max(1, batchSize);
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
            if (groupFirst >= 0 && (first > cursor || !deliverable || first - groupFirst >= cutEvery)) {
                addAcquiredBatch(memberId, groupFirst, cursor - 1, lockDurationMs, acquired);
                groupFirst = -1;
            }
            if (first > cursor) {
                cache.put(cursor, first - 1, RecordState.ARCHIVED, 0); // a hole of the log
            }
            if (!deliverable) {
                cache.put(first, last, RecordState.ARCHIVED, 0);
                cursor = last + 1;
                continue;
            }
            if (groupFirst < 0) {
                groupFirst = first;
            }
            if (recordLimit && count + (last - first + 1) > limit) {
                // the batch crosses the limit: cached whole (the cache has no holes), acquired up to the limit
                long lastAcquired = first + (limit - count) - 1;
                if (groupFirst < first) {
                    addAcquiredBatch(memberId, groupFirst, first - 1, lockDurationMs, acquired);
                }
                addPartlyAcquiredBatch(memberId, first, last, lastAcquired, lockDurationMs, acquired);
                count = limit;
                groupFirst = -1;
                cursor = last + 1;
                break;
            }
            count += (int) (last - first + 1);
            cursor = last + 1;
        }
        if (groupFirst >= 0) {
            addAcquiredBatch(memberId, groupFirst, cursor - 1, lockDurationMs, acquired);
        }
        cache.endAt(cursor);
        return count;
    }

    /**
     * Caches {@code [first, last]} with {@code [first, lastAcquired]} ACQUIRED by {@code memberId} (a lock per
     * offset, Kafka's {@link InFlightBatch#maybeInitializeOffsetStateUpdate(long, int)}) and the rest AVAILABLE.
     */
    private void addPartlyAcquiredBatch(String memberId, long first, long last, long lastAcquired, int lockDurationMs,
                                        List<AcquiredRecords> acquired) {
        InFlightBatch batch = cache.putAcquired(memberId, first, last, null);
        batch.maybeInitializeOffsetStateUpdate(lastAcquired, lockDurationMs);
        cache.markMayHaveAvailable();
        metrics.recordInFlightBatchMessageCount(last - first + 1);
        append(acquired, first, lastAcquired, 1);
    }

    private void addAcquiredBatch(String memberId, long first, long last, int lockDurationMs,
                                  List<AcquiredRecords> acquired) {
        cache.putAcquired(memberId, first, last, lockTimer(memberId, first, last, lockDurationMs));
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
}
