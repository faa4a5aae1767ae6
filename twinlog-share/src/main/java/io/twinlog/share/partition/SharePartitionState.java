package io.twinlog.share.partition;

import io.twinlog.share.partition.AcknowledgementPlanner.Pending;
import org.apache.kafka.clients.consumer.internals.ShareAcquireMode;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.message.ShareFetchResponseData.AcquiredRecords;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.ShareGroupAutoOffsetResetStrategy;
import org.apache.kafka.server.share.acknowledge.ShareAcknowledgementBatch;
import org.apache.kafka.server.share.fetch.AcquisitionLockTimeoutHandler;
import org.apache.kafka.server.share.fetch.InFlightBatch;
import org.apache.kafka.server.share.fetch.InFlightState;
import org.apache.kafka.server.share.fetch.RecordState;
import org.apache.kafka.server.share.fetch.ShareAcquiredRecords;
import org.apache.kafka.server.share.metrics.SharePartitionMetrics;
import org.apache.kafka.server.share.persister.Persister;
import org.apache.kafka.server.share.persister.PersisterStateBatch;
import org.apache.kafka.server.share.persister.ReadShareGroupStateResult;
import org.apache.kafka.server.storage.log.FetchPartitionData;
import org.apache.kafka.server.util.timer.Timer;
import org.apache.kafka.server.util.timer.TimerTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;


/**
 * One share group's view of one partition on the partition's leader (KIP-932's share partition; Kafka's
 * {@code SharePartition} semantics, written for Twinlog over Kafka's in-flight classes {@link InFlightBatch} and
 * {@link InFlightState}, whose guarded transitions and rollbacks encode the record state rules).
 *
 * <p>State: the share-partition start offset (SPSO: every record below it is done with), the exclusive end offset
 * and between them the in-flight batches without a hole, in {@link InFlightCache}; the status below.
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
 * <p>This class holds the lock, the status and the orchestration (which lock each step takes, whom to tell); the
 * work is done by package-private parts that run under the lock as their Javadoc says: {@link InFlightCache} (the
 * cache, start-offset advance, log start moves), {@link ShareStateLoader} (reading the persisted state,
 * {@code share.auto.offset.reset}), {@link RecordAcquisition} (what a log read gives a member, lock timers),
 * {@link AcknowledgementPlanner} (acknowledgement, release and lock-expiry transitions) and {@link ShareStateWriter}
 * (writes, commit or rollback, the persister's errors; it takes this lock for the write and the commit).
 *
 * <p>Threading: every field below the lock, and the cache, is read and written under {@link #lock} (the write lock
 * except for gauges); persister completions and lock expiries arrive on the persister's and the timer's threads and
 * take it. The listener is called outside the lock. The fetch lock ({@link #tryFetchLock}, {@link ShareFetchLock})
 * lets one ShareFetch at a time read and acquire, so two fetches never acquire the same offsets from two reads.
 */
final class SharePartitionState {
    /** Also the logger of the parts below, so that one share partition's story is under one logger name. */
    static final Logger log = LoggerFactory.getLogger(SharePartitionState.class);

    /** The share partition's own states (the record states are Kafka's {@link RecordState}). */
    enum Status { EMPTY, INITIALIZING, ACTIVE, FENCED }

    /** Per-group settings, read on each use: group configs can change while the share partition lives. */
    interface GroupSettings {
        int recordLockDurationMs();

        int deliveryCountLimit();

        int maxRecordLocks();

        ShareGroupAutoOffsetResetStrategy autoOffsetReset();

        /** {@code share.renew.acknowledge.enable} (KIP-1222): whether members may renew their locks. */
        default boolean renewAcknowledgeEnabled() {
            return true;
        }
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
    private final GroupSettings settings;
    private final Listener listener;
    private final SharePartitionMetrics metrics;
    private final AcquisitionLockTimeoutHandler timeoutHandler = this::onLockExpired;
    private final String logPrefix;
    private final ShareStateLoader loader;
    private final RecordAcquisition acquisition;
    private final AcknowledgementPlanner planner;
    private final ShareStateWriter writer;

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final ShareFetchLock fetchLock;

    // guarded by lock
    private Status status = Status.EMPTY;
    private CompletableFuture<Void> initialized;
    private final InFlightCache cache;

    SharePartitionState(String groupId, TopicIdPartition partition, int leaderEpoch, SharePartitionLog partitionLog,
                        Persister persister, Timer timer, Time time, GroupSettings settings, Listener listener) {
        this.groupId = groupId;
        this.partition = partition;
        this.leaderEpoch = leaderEpoch;
        this.partitionLog = partitionLog;
        this.settings = settings;
        this.listener = listener;
        this.logPrefix = "[SharePartition " + groupId + " " + partition + " epoch=" + leaderEpoch + "] ";
        // Kafka's metrics, in the JVM-wide Yammer registry (InFlightBatch and the lock timer tasks record into it)
        this.metrics = new SharePartitionMetrics(groupId, partition.topic(), partition.partition());
        this.fetchLock = new ShareFetchLock(time, metrics);
        this.cache = new InFlightCache(timer, time, timeoutHandler, metrics, logPrefix);
        this.loader = new ShareStateLoader(groupId, partition, leaderEpoch, persister, partitionLog, settings, cache,
                logPrefix);
        this.acquisition = new RecordAcquisition(cache, settings, timer, time, timeoutHandler, metrics, logPrefix);
        this.planner = new AcknowledgementPlanner(partition, cache);
        this.writer = new ShareStateWriter(persister, lock, cache, this, listener, logPrefix);
        metrics.registerInFlightMessageCount(this::inFlightRecordCount);
        metrics.registerInFlightBatchCount(cache::size);
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
        CompletableFuture<ReadShareGroupStateResult> read = loader.read();
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
            } else {
                loader.load(loader.checked(result, error));
                status = Status.ACTIVE;
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

    // ---------------------------------------------------------------------------------------------------------
    // Fetch lock and acquisition

    Status status() {
        return underReadLock(() -> status);
    }

    /** For the parts that already hold the lock. */
    boolean isActiveUnderLock() {
        return status == Status.ACTIVE;
    }

    /**
     * Takes the fetch lock when the state is active and records can be acquired: AVAILABLE ones in the cache, or
     * room below {@code share.partition.max.record.locks} for new ones. Moves the SPSO first if the log start passed
     * it, so the next fetch offset is readable.
     */
    Optional<SharePartitions.FetchLock> tryFetchLock() {
        if (!fetchLock.tryTake()) {
            return Optional.empty();
        }
        long next;
        lock.writeLock().lock();
        try {
            next = status != Status.ACTIVE ? -1
                    : cache.nextAcquirableOffset(partitionLog.logStartOffset(), settings.maxRecordLocks());
            if (next < 0) {
                fetchLock.giveBack();
                return Optional.empty();
            }
        } finally {
            lock.writeLock().unlock();
        }
        return Optional.of(fetchLock.handOut(next, this));
    }

    /** Acquires for {@code memberId} records of a read from {@code fetchOffset} ({@link RecordAcquisition#acquire}). */
    ShareAcquiredRecords acquire(String memberId, ShareAcquireMode acquireMode, int batchSize, int maxRecords,
                                 long fetchOffset, FetchPartitionData data) {
        if (maxRecords <= 0) {
            return ShareAcquiredRecords.empty();
        }
        RecordAcquisition.LogRead read = RecordAcquisition.read(data);
        if (read == null) {
            return ShareAcquiredRecords.empty();
        }
        RecordAcquisition.Acquired acquired;
        lock.writeLock().lock();
        try {
            if (status != Status.ACTIVE) {
                return ShareAcquiredRecords.empty();
            }
            acquired = acquisition.acquire(memberId, batchSize, maxRecords,
                    acquireMode == ShareAcquireMode.RECORD_LIMIT, fetchOffset, read);
        } finally {
            lock.writeLock().unlock();
        }
        return acquisition.answer(memberId, fetchOffset, acquired);
    }

    /**
     * Gives back records acquired for {@code memberId} that never reached it: its answer was throttled away by a
     * client quota. They are AVAILABLE again as if not delivered ({@link AcknowledgementPlanner#undeliver}); Kafka
     * leaves them to their acquisition lock instead.
     */
    void returnUndelivered(String memberId, List<AcquiredRecords> ranges) {
        boolean any = false;
        lock.writeLock().lock();
        try {
            if (status != Status.ACTIVE) {
                return;
            }
            int deliveryLimit = settings.deliveryCountLimit();
            for (AcquiredRecords range : ranges) {
                any |= planner.undeliver(memberId, range.firstOffset(), range.lastOffset(), deliveryLimit);
            }
            if (any) {
                cache.markMayHaveAvailable();
            }
        } finally {
            lock.writeLock().unlock();
        }
        if (any) {
            log.debug("{}gave back what member {} acquired but did not receive: {}", logPrefix, memberId, ranges);
            listener.onAcquirable(this);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Acknowledgement, release, lock expiry

    /**
     * Applies a member's acknowledgements: only records that member holds ACQUIRED may be acknowledged (else
     * INVALID_RECORD_STATE, and nothing of the request is applied); offsets below the SPSO are skipped (they are
     * done with). Persisted before the future completes; a failed write rolls every change back. Renewed records
     * (RENEW) get a new acquisition lock at once, persisted or not, as in Kafka.
     */
    CompletableFuture<Void> acknowledge(String memberId, List<ShareAcknowledgementBatch> acknowledgements) {
        for (ShareAcknowledgementBatch ack : acknowledgements) {
            Optional<String> invalid = AcknowledgementPlanner.invalidAcknowledgement(ack);
            if (invalid.isPresent()) {
                return CompletableFuture.failedFuture(new InvalidRequestException(invalid.get()));
            }
        }
        List<Pending> pending = new ArrayList<>();
        List<AcknowledgementPlanner.Renewal> renewals = new ArrayList<>();
        lock.writeLock().lock();
        try {
            if (status != Status.ACTIVE) {
                return CompletableFuture.failedFuture(fencedException());
            }
            int deliveryLimit = settings.deliveryCountLimit();
            boolean renewEnabled = settings.renewAcknowledgeEnabled();
            for (ShareAcknowledgementBatch ack : acknowledgements) {
                Optional<ApiException> error = planner.acknowledge(memberId, ack, deliveryLimit, renewEnabled,
                        pending, renewals);
                if (error.isPresent()) {
                    AcknowledgementPlanner.rollback(pending);
                    return CompletableFuture.failedFuture(error.get());
                }
            }
            acquisition.renewLocks(memberId, renewals);
        } finally {
            lock.writeLock().unlock();
        }
        return writer.persist(pending, "acknowledgement of " + memberId);
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
            planner.release(memberId, settings.deliveryCountLimit(), pending);
        } finally {
            lock.writeLock().unlock();
        }
        return writer.persist(pending, "release of " + memberId + "'s records");
    }

    /**
     * An acquisition lock expired: the records it covers that are still ACQUIRED under it become AVAILABLE, or
     * ARCHIVED at the delivery limit. Records with a transition in flight are left to it (its rollback sees the
     * expiry). Persisted best effort: the new states hold in memory whatever the write's outcome, as in Kafka.
     */
    private void onLockExpired(String memberId, long first, long last, TimerTask task) {
        List<PersisterStateBatch> writes;
        lock.writeLock().lock();
        try {
            if (task.isCancelled() || status != Status.ACTIVE) {
                return;
            }
            writes = planner.expire(first, last, task, settings.deliveryCountLimit());
            if (!writes.isEmpty()) {
                cache.markMayHaveAvailable();
                cache.advanceStartOffset();
            }
        } finally {
            lock.writeLock().unlock();
        }
        if (writes.isEmpty()) {
            return;
        }
        log.debug("{}acquisition lock of member {} on {}-{} expired", logPrefix, memberId, first, last);
        writer.writeApplied(writes, "lock expiry");
        listener.onAcquirable(this);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Fencing

    /**
     * Stops this state for good: cancels every acquisition lock, empties the cache, closes the metrics and tells
     * the listener (which drops it). Idempotent.
     */
    boolean fence(String reason) {
        if (!stop()) {
            return false;
        }
        log.info("{}fenced: {}", logPrefix, reason);
        closeMetrics();
        listener.onFenced(this);
        return true;
    }

    /** Makes the state FENCED, its locks cancelled and its cache empty; false when it was FENCED (and so empty). */
    private boolean stop() {
        lock.writeLock().lock();
        try {
            if (status == Status.FENCED) {
                return false;
            }
            status = Status.FENCED;
            cache.cancelLocksAndClear();
            return true;
        } finally {
            lock.writeLock().unlock();
        }
    }

    private void closeMetrics() {
        try {
            metrics.close();
        } catch (Exception e) {
            // broad: Kafka's metrics close throws Exception; closing goes on
            log.warn("{}could not remove the share partition metrics", logPrefix, e);
        }
    }

    private int inFlightRecordCount() {
        return underReadLock(() -> (int) (cache.endOffset() - cache.startOffset()));
    }

    private NotLeaderOrFollowerException fencedException() {
        return new NotLeaderOrFollowerException("The share partition " + groupId + " " + partition
                + " is no longer served by this state (fenced)");
    }

    private <T> T underReadLock(Supplier<T> read) {
        lock.readLock().lock();
        try {
            return read.get();
        } finally {
            lock.readLock().unlock();
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // For tests and the manager

    long startOffset() {
        return underReadLock(cache::startOffset);
    }

    long endOffset() {
        return underReadLock(cache::endOffset);
    }

    int stateEpoch() {
        return underReadLock(cache::stateEpoch);
    }

    /** The state and delivery count of one offset ({@code null} when it is not in the cache). */
    InFlightState recordState(long offset) {
        return underReadLock(() -> cache.recordState(offset));
    }

    /** Cancels the locks and closes the metrics, without telling the listener: the manager is closing. */
    void close() {
        stop();
        closeMetrics();
    }

    @Override
    public String toString() {
        return "SharePartitionState(" + groupId + ", " + partition + ", epoch " + leaderEpoch + ")";
    }
}
