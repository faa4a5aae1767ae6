package io.twinlog.share.partition;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.share.fetch.AcquisitionLockTimeoutHandler;
import org.apache.kafka.server.share.fetch.AcquisitionLockTimerTask;
import org.apache.kafka.server.share.fetch.InFlightBatch;
import org.apache.kafka.server.share.fetch.InFlightState;
import org.apache.kafka.server.share.fetch.RecordState;
import org.apache.kafka.server.share.metrics.SharePartitionMetrics;
import org.apache.kafka.server.util.timer.Timer;

import java.util.Collection;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

import static io.twinlog.share.partition.SharePartitionState.log;
import static org.apache.kafka.server.share.fetch.InFlightState.EMPTY_MEMBER_ID;

/**
 * The in-flight cache of one {@link SharePartitionState}: the share-partition start offset (SPSO, every record
 * below it done with), the exclusive end offset (the first offset never taken into the cache) and between them the
 * in-flight batches keyed by first offset, covering {@code [startOffset, endOffset)} without a hole (the first batch
 * may begin below the SPSO); and the state epoch of the persisted state it was loaded from, which every write
 * carries. Holes of the log (compaction, control batches, aborted transactions) are kept as ARCHIVED entries so that
 * the SPSO can pass them. A batch keeps one state for all its records until an operation touches only part of it;
 * it then keeps a state per offset. Moves the SPSO past the records in a terminal state and past a log start that
 * passed it.
 *
 * <p>Threading: not thread-safe on its own; every method runs under the owning state's lock (the write lock for the
 * methods that change anything, at least the read lock for the others).
 */
final class InFlightCache {
    private final Timer timer;
    private final Time time;
    private final AcquisitionLockTimeoutHandler timeoutHandler;
    private final SharePartitionMetrics metrics;
    private final String logPrefix;

    // concurrent: the metrics' batch-count gauge reads its size without the lock
    private final NavigableMap<Long, InFlightBatch> batches = new ConcurrentSkipListMap<>();
    private long startOffset;
    private long endOffset;
    private int stateEpoch;
    /** False only when no record in the cache is AVAILABLE, so the next fetch offset is the end offset. */
    private boolean mayHaveAvailable;

    InFlightCache(Timer timer, Time time, AcquisitionLockTimeoutHandler timeoutHandler, SharePartitionMetrics metrics,
                  String logPrefix) {
        this.timer = timer;
        this.time = time;
        this.timeoutHandler = timeoutHandler;
        this.metrics = metrics;
        this.logPrefix = logPrefix;
    }

    long startOffset() {
        return startOffset;
    }

    /** Sets the SPSO of a state being loaded, before its batches are put. */
    void startAt(long offset) {
        startOffset = offset;
    }

    int stateEpoch() {
        return stateEpoch;
    }

    void stateEpoch(int epoch) {
        stateEpoch = epoch;
    }

    long endOffset() {
        return endOffset;
    }

    void endAt(long offset) {
        endOffset = offset;
    }

    /** Records may have become AVAILABLE (loaded, released, expired, rolled back): the next fetch looks again. */
    void markMayHaveAvailable() {
        mayHaveAvailable = true;
    }

    int size() {
        return batches.size();
    }

    Collection<InFlightBatch> all() {
        return batches.values();
    }

    /** The batches holding any offset of {@code [first, last]}, in order (the first may end before {@code first}). */
    Collection<InFlightBatch> covering(long first, long last) {
        Long floor = batches.floorKey(first);
        return batches.subMap(floor == null ? first : floor, true, last, true).values();
    }

    /** Caches {@code [first, last]} with no owner and no acquisition lock. */
    void put(long first, long last, RecordState state, int deliveryCount) {
        batches.put(first, new InFlightBatch(timer, time, EMPTY_MEMBER_ID, first, last, state, deliveryCount,
                null, timeoutHandler, metrics));
    }

    /** Caches {@code [first, last]} freshly acquired by {@code memberId} (delivery count 1) under {@code task}. */
    InFlightBatch putAcquired(String memberId, long first, long last, AcquisitionLockTimerTask task) {
        InFlightBatch batch = new InFlightBatch(timer, time, memberId, first, last, RecordState.ACQUIRED, 1, task,
                timeoutHandler, metrics);
        batches.put(first, batch);
        return batch;
    }

    /**
     * Moves the SPSO first if the log start passed it, so the next fetch offset is readable; then the next fetch
     * offset when records can be acquired (AVAILABLE ones in the cache, or room below {@code maxRecordLocks} for new
     * ones), else -1. Under the write lock.
     */
    long nextAcquirableOffset(long logStartOffset, int maxRecordLocks) {
        maybeMoveLogStart(logStartOffset);
        long next = nextFetchOffset();
        return next < endOffset || endOffset - startOffset < maxRecordLocks ? next : -1;
    }

    /** The lowest AVAILABLE offset in the cache, else the end offset. Under the write lock. */
    private long nextFetchOffset() {
        if (!mayHaveAvailable) {
            return endOffset;
        }
        for (InFlightBatch batch : batches.values()) {
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
     * Records in a terminal state at or above the SPSO: the DeliveryCompleteCount a state write carries (KIP-1226),
     * from which the group coordinator computes the lag. Records whose transition is in flight count by the state
     * they are moving to: the write that carries this count is the one that persists them (a failed write rolls them
     * back, and the next write carries the count again). Counting only committed states made every answer's lag
     * trail by one acknowledgement round: all acknowledged, yet a lag left.
     */
    int deliveryCompleteCount() {
        int count = 0;
        for (InFlightBatch batch : batches.values()) {
            if (batch.offsetState() == null) {
                if (isTerminal(batch.batchState())) {
                    count += (int) (batch.lastOffset() - Math.max(batch.firstOffset(), startOffset) + 1);
                }
                continue;
            }
            for (InFlightState state : batch.offsetState().tailMap(startOffset).values()) {
                if (isTerminal(state.state())) {
                    count++;
                }
            }
        }
        return Math.max(0, count);
    }

    /**
     * Moves the SPSO past the leading records in a terminal state (ACKNOWLEDGED, ARCHIVED; none with a transition
     * in flight) and drops the cached batches wholly below it. Under the write lock.
     */
    void advanceStartOffset() {
        long next = startOffset;
        Long floor = batches.floorKey(startOffset);
        outer:
        for (InFlightBatch batch : batches.tailMap(floor == null ? startOffset : floor, true).values()) {
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
        batches.headMap(startOffset).entrySet().removeIf(e -> e.getValue().lastOffset() < startOffset);
        if (batches.isEmpty() && endOffset < startOffset) {
            endOffset = startOffset;
        }
    }

    /**
     * The log start moved past the SPSO (retention, DeleteRecords, a failback's cut): records below it can never
     * be delivered again, so those not yet in a terminal state are archived (their locks cancelled) and the SPSO
     * moves to the log start. The new SPSO is persisted with the next write, as Kafka does. Under the write lock.
     */
    void maybeMoveLogStart(long logStartOffset) {
        if (logStartOffset <= startOffset) {
            return;
        }
        log.info("{}log start offset {} passed the start offset {}: archiving the records below it", logPrefix,
                logStartOffset, startOffset);
        for (InFlightBatch batch : batches.headMap(logStartOffset).values()) {
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
        batches.headMap(startOffset).entrySet().removeIf(e -> e.getValue().lastOffset() < startOffset);
        advanceStartOffset();
    }

    /** The state and delivery count of one offset ({@code null} when it is not in the cache). */
    InFlightState recordState(long offset) {
        Map.Entry<Long, InFlightBatch> entry = batches.floorEntry(offset);
        if (entry == null || entry.getValue().lastOffset() < offset) {
            return null;
        }
        InFlightBatch batch = entry.getValue();
        if (batch.offsetState() != null) {
            return batch.offsetState().get(offset);
        }
        return new InFlightState(batch.batchState(), batch.batchDeliveryCount(), batch.batchMemberId());
    }

    /** Cancels every acquisition lock and empties the cache: the state is fenced or closed. */
    void cancelLocksAndClear() {
        for (InFlightBatch batch : batches.values()) {
            if (batch.offsetState() == null) {
                batch.cancelAndClearAcquisitionLockTimeoutTask();
            } else {
                batch.offsetState().values().forEach(InFlightState::cancelAndClearAcquisitionLockTimeoutTask);
            }
        }
        batches.clear();
    }

    static boolean isTerminal(RecordState state) {
        return state == RecordState.ACKNOWLEDGED || state == RecordState.ARCHIVED;
    }
}
