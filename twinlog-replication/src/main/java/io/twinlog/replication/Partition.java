package io.twinlog.replication;

import io.twinlog.common.mirror.TruncationPoints;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.UnknownLeaderEpochException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.server.common.TransactionVersion;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogOffsetMetadata;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogOffsetSnapshot;
import org.apache.kafka.storage.internals.log.LogStartOffsetIncrementReason;
import org.apache.kafka.storage.internals.log.OffsetResultHolder;
import org.apache.kafka.storage.internals.log.ProducerStateEntry;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * One partition hosted on this broker: its log, its role (leader or follower) in the current leader epoch, the
 * ISR, and — as leader — what it knows of each follower and the high watermark.
 *
 * <p>Threading: leadership changes hold the write lock (metadata thread); appends, reads and follower-state
 * updates hold the read lock (plus this object's monitor for the follower map), so an append never runs against a
 * half-applied leadership change. Every client-facing call checks the role first and the caller's leader epoch
 * second ({@code NOT_LEADER_OR_FOLLOWER}, {@code FENCED_LEADER_EPOCH}, {@code UNKNOWN_LEADER_EPOCH}).
 *
 * <p>High watermark (leader only): the smallest log end offset over the <em>maximal</em> ISR — the ISR plus members
 * an in-flight AlterPartition is adding — so the high watermark never passes a record some replica the controller
 * may count as in sync does not have.
 *
 * <p>ISR changes are proposed here (expand when a follower reaches the high watermark within this leader epoch,
 * shrink when a follower behind the log end has not caught up for {@code replica.lag.time.max.ms}) and sent to the
 * controller through the {@link IsrChangeSender}; one change is in flight at a time, and the change takes effect
 * when the controller's new state arrives through the metadata.
 */
public final class Partition {
    private static final Logger log = LoggerFactory.getLogger(Partition.class);

    private final TopicPartition topicPartition;
    private final Uuid topicId;
    private final int localBrokerId;
    private final UnifiedLog log_;
    private final ReentrantReadWriteLock leaderIsrLock = new ReentrantReadWriteLock();
    private final String logPrefix;
    private volatile int leaderId = -1;
    private volatile int leaderEpoch = -1;
    private volatile int partitionEpoch = -1;
    private volatile long leaderEpochStartOffset = -1L;
    private volatile List<Integer> replicas = List.of();
    private volatile List<Integer> isr = List.of();
    // guarded by 'this'
    private final Map<Integer, ReplicaState> followers = new HashMap<>();
    /** Log start offsets the followers reported in their fetches (DeleteRecords); guarded by {@code this}. */
    private final Map<Integer, Long> followerLogStartOffsets = new HashMap<>();
    private List<Integer> pendingIsr; // non-null while an AlterPartition is in flight
    // true for a mirror partition before failover: its leader-epoch history must stay the source's, so becoming
    // leader adds no local epoch (mirroring-design.md, DLE >= SLE)
    private volatile boolean keepSourceEpochs;
    /**
     * The offset of the latest producer-state barrier this replica appended or applied, -1 if none is known (a
     * clean restart forgets it: the state snapshotted at close already reflects it). Written under the leadership
     * write lock or by the one appending thread; cleared when a truncation removes it.
     */
    private volatile long latestBarrier = -1;
    private final HighWatermarkListener highWatermarkListener;
    /** Read from {@link TruncationPointFile} on first use (null until then), then kept. */
    private volatile OptionalLong appliedTruncationId;

    public Partition(TopicPartition topicPartition, Uuid topicId, int localBrokerId, UnifiedLog log) {
        this(topicPartition, topicId, localBrokerId, log, (tp, hw) -> { });
    }

    /** @param highWatermarkListener told (on the thread that moved it) each time this leader's high watermark moves */
    public Partition(TopicPartition topicPartition, Uuid topicId, int localBrokerId, UnifiedLog log,
                     HighWatermarkListener highWatermarkListener) {
        this.topicPartition = topicPartition;
        this.topicId = topicId;
        this.localBrokerId = localBrokerId;
        this.log_ = log;
        this.highWatermarkListener = highWatermarkListener;
        this.logPrefix = "[Partition " + topicPartition + " broker=" + localBrokerId + "] ";
    }

    public TopicPartition topicPartition() {
        return topicPartition;
    }

    public Uuid topicId() {
        return topicId;
    }

    public UnifiedLog log() {
        return log_;
    }

    public int leaderId() {
        return leaderId;
    }

    public int leaderEpoch() {
        return leaderEpoch;
    }

    public int partitionEpoch() {
        return partitionEpoch;
    }

    public List<Integer> replicas() {
        return replicas;
    }

    public List<Integer> isr() {
        return isr;
    }

    public boolean isLeader() {
        return leaderId == localBrokerId;
    }

    /** What applying a leadership record did. */
    public enum Transition { NONE, BECAME_LEADER, BECAME_FOLLOWER, ISR_CHANGED }

    /**
     * Applies a leadership record from the controller. Becoming leader in a new epoch starts that epoch at the
     * current log end offset in the leader-epoch cache, as Kafka does, so epoch lookups (OffsetsForLeaderEpoch,
     * follower divergence checks) are exact. Records older than the current epoch are ignored.
     */
    public Transition applyLeadership(int newLeaderId, int newLeaderEpoch, int newPartitionEpoch,
                                      List<Integer> newReplicas, List<Integer> newIsr, long nowMs) {
        leaderIsrLock.writeLock().lock();
        try {
            if (newLeaderEpoch < leaderEpoch || (newLeaderEpoch == leaderEpoch && newPartitionEpoch < partitionEpoch)) {
                log.debug("{}Ignoring stale leadership record: epoch {}/{} < current {}/{}", logPrefix, newLeaderEpoch,
                        newPartitionEpoch, leaderEpoch, partitionEpoch);
                return Transition.NONE;
            }
            boolean newTerm = newLeaderEpoch != leaderEpoch || newLeaderId != leaderId;
            boolean isrChanged = !newIsr.equals(isr) || !newReplicas.equals(replicas);
            boolean newRecord = newTerm || newPartitionEpoch != partitionEpoch;
            int previousEpoch = leaderEpoch;
            leaderId = newLeaderId;
            leaderEpoch = newLeaderEpoch;
            partitionEpoch = newPartitionEpoch;
            replicas = List.copyOf(newReplicas);
            isr = List.copyOf(newIsr);
            synchronized (this) {
                // The same record can be applied again (the first image, a retry after a failed apply, a mirror
                // flag change with the record unchanged). Only a new record
                // (new term or partition epoch) ends an in-flight ISR change: clearing it on a repeat would drop a
                // joining follower from the maximal ISR while the controller may already have committed it, so
                // the high watermark could pass records that follower (now electable) does not have.
                if (newRecord) {
                    pendingIsr = null;
                }
                if (newTerm) {
                    followers.clear();
                }
                followers.keySet().retainAll(newReplicas);
                for (Integer r : newReplicas) {
                    if (r != localBrokerId) {
                        followers.computeIfAbsent(r, id -> new ReplicaState(nowMs));
                    }
                }
            }
            if (newTerm && newLeaderId == localBrokerId) {
                Optional<Integer> latest = log_.latestEpoch();
                if (!keepSourceEpochs && (latest.isEmpty() || latest.get() < newLeaderEpoch)) {
                    log_.assignEpochStartOffset(newLeaderEpoch, log_.logEndOffset());
                }
                leaderEpochStartOffset = log_.logEndOffset();
                maybeIncrementHighWatermark();
                log.info("{}Became leader in epoch {} (was epoch {}) at log end offset {}, high watermark {}, ISR {}",
                        logPrefix, newLeaderEpoch, previousEpoch, log_.logEndOffset(), log_.highWatermark(), newIsr);
                return Transition.BECAME_LEADER;
            }
            if (newTerm) {
                log.info("{}Follower of broker {} in epoch {} (was epoch {}), log end offset {}", logPrefix,
                        newLeaderId, newLeaderEpoch, previousEpoch, log_.logEndOffset());
                return Transition.BECAME_FOLLOWER;
            }
            if (isrChanged && isLeader()) {
                maybeIncrementHighWatermark();
            }
            return isrChanged ? Transition.ISR_CHANGED : Transition.NONE;
        } finally {
            leaderIsrLock.writeLock().unlock();
        }
    }

    /** Mirror partitions keep the source's epoch history until failover; see {@link #applyLeadership}. */
    public void setKeepSourceEpochs(boolean keep) {
        this.keepSourceEpochs = keep;
    }

    /**
     * Appends batches mirrored from the source cluster on this (leader) replica, unchanged: the source's offsets,
     * batch epochs and CRCs. Followers replicate them as usual and the high watermark advances with the ISR.
     *
     * @return the log end offset after the append
     */
    public long appendMirroredRecords(MemoryRecords records) throws IOException {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            // the mirror fetcher has already checked every batch's epoch against ours
            appendAsFollowerThroughBarriers(records);
            maybeIncrementHighWatermark();
            return log_.logEndOffset();
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    /**
     * Failover of a mirror partition: every transaction left open by a source producer is aborted with an ABORT
     * marker in the current (post-failover) leader epoch, as a transaction coordinator would, so read_committed
     * consumers are not held at the last stable offset forever by a producer on a cluster that is gone.
     *
     * @return the producer ids whose transactions were aborted
     */
    public List<Long> abortOpenTransactions(long nowMs) throws IOException {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            List<Long> aborted = new ArrayList<>();
            for (Map.Entry<Long, ProducerStateEntry> e : log_.producerStateManager().activeProducers().entrySet()) {
                if (e.getValue().currentTxnFirstOffset().isEmpty()) {
                    continue;
                }
                MemoryRecords marker = MemoryRecords.withEndTransactionMarker(nowMs, e.getKey(),
                        e.getValue().producerEpoch(), new EndTransactionMarker(ControlRecordType.ABORT,
                                Math.max(0, e.getValue().coordinatorEpoch())));
                // transaction version 0 semantics: the marker carries the producer's current epoch (no bump), as the
                // source's coordinator never finished this transaction
                log_.appendAsLeader(marker, leaderEpoch, AppendOrigin.COORDINATOR, RequestLocal.noCaching(),
                        VerificationGuard.SENTINEL, TransactionVersion.TV_0.featureLevel());
                aborted.add(e.getKey());
            }
            maybeIncrementHighWatermark();
            return aborted;
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    /**
     * Failover of a mirror partition, after {@link #abortOpenTransactions}: appends the producer-state barrier in
     * the current (post-failover) leader epoch and forgets every producer copied from the source, durably (see
     * {@link ProducerStateBarrier}, {@link ProducerStateReset}). Followers forget them when they replicate it.
     * Refused while a producer still has a transaction open here: forgetting it would move the last stable offset
     * over records nobody committed or aborted (the failover aborts them first; a pass that finds one retries).
     *
     * @return the barrier's offset
     * @throws IllegalStateException if a transaction is still open
     */
    public long appendProducerStateBarrier(long nowMs) throws IOException {
        leaderIsrLock.writeLock().lock(); // no client or coordinator append between the barrier and the reset
        try {
            checkLeader();
            List<Long> open = log_.producerStateManager().activeProducers().entrySet().stream()
                    .filter(e -> e.getValue().currentTxnFirstOffset().isPresent()).map(Map.Entry::getKey).toList();
            if (!open.isEmpty()) {
                throw new IllegalStateException(logPrefix + "producers " + open + " still have a transaction open: "
                        + "the producer-state barrier waits until they are aborted");
            }
            long barrierOffset = log_.logEndOffset();
            log_.appendAsLeader(ProducerStateBarrier.create(nowMs), leaderEpoch, AppendOrigin.COORDINATOR,
                    RequestLocal.noCaching(), VerificationGuard.SENTINEL, TransactionVersion.TV_0.featureLevel());
            ProducerStateReset.apply(log_, barrierOffset, logPrefix);
            latestBarrier = barrierOffset;
            maybeIncrementHighWatermark();
            return barrierOffset;
        } finally {
            leaderIsrLock.writeLock().unlock();
        }
    }

    /**
     * The offset of the latest producer-state barrier in this replica's log (written at a failover here or
     * replicated), or empty if the log holds none that this replica applied.
     */
    public OptionalLong latestProducerStateBarrier() {
        long barrier = latestBarrier;
        return barrier >= log_.logStartOffset() && barrier < log_.logEndOffset() ? OptionalLong.of(barrier)
                : OptionalLong.empty();
    }

    /**
     * After a restart: applies again a producer-state barrier that Kafka's log recovery replayed across (see
     * {@link ProducerStateReset#recoverAfterLoad}). Called once, when the replica is opened.
     *
     * @param afterCrash whether its log was loaded without a clean shutdown
     */
    public void recoverProducerStateBarrier(boolean afterCrash) throws IOException {
        leaderIsrLock.writeLock().lock();
        try {
            ProducerStateReset.recoverAfterLoad(log_, afterCrash, logPrefix).ifPresent(b -> latestBarrier = b);
        } finally {
            leaderIsrLock.writeLock().unlock();
        }
    }

    /**
     * Appends replicated batches (from the leader, or from the source cluster), stopping at every producer-state
     * barrier to apply it before the batches after it: those are this cluster's own producers, whose ids may equal
     * the forgotten ones. Integer.MAX_VALUE: appendAsFollower skips batches whose epoch is above the one given
     * (KAFKA-18723), and a replica must take every batch.
     */
    private void appendAsFollowerThroughBarriers(MemoryRecords records) throws IOException {
        ByteBuffer buffer = records.buffer();
        int start = buffer.position();
        int position = start;
        for (RecordBatch batch : records.batches()) {
            position += batch.sizeInBytes();
            if (ProducerStateBarrier.isBarrier(batch)) {
                long barrierOffset = batch.baseOffset();
                log_.appendAsFollower(slice(buffer, start, position), Integer.MAX_VALUE);
                ProducerStateReset.apply(log_, barrierOffset, logPrefix);
                latestBarrier = barrierOffset;
                start = position;
            }
        }
        if (start == buffer.position()) {
            log_.appendAsFollower(records, Integer.MAX_VALUE);
        } else if (start < buffer.limit()) {
            log_.appendAsFollower(slice(buffer, start, buffer.limit()), Integer.MAX_VALUE);
        }
    }

    private static MemoryRecords slice(ByteBuffer buffer, int from, int to) {
        ByteBuffer part = buffer.duplicate();
        part.position(from);
        part.limit(to);
        return MemoryRecords.readableRecords(part.slice());
    }

    /** Appends client records as leader; acks=all (-1) also requires min.insync.replicas members in the ISR. */
    public LogAppendInfo appendRecordsToLeader(MemoryRecords records, short requiredAcks) throws IOException {
        return appendRecordsToLeader(records, requiredAcks, VerificationGuard.SENTINEL);
    }

    /**
     * {@link #appendRecordsToLeader(MemoryRecords, short)} for records whose transaction was verified with the
     * coordinator (KIP-890): {@code guard} is what {@link #maybeStartTransactionVerification} handed out before the
     * verification; the log refuses the transactional batch (INVALID_TXN_STATE) if the producer's state moved on in
     * the meantime (a marker ended the transaction, a newer epoch wrote), so a late write cannot open a transaction
     * no coordinator will end.
     */
    public LogAppendInfo appendRecordsToLeader(MemoryRecords records, short requiredAcks, VerificationGuard guard)
            throws IOException {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            if (requiredAcks == -1) {
                checkMinIsr();
            }
            LogAppendInfo info = log_.appendAsLeader(records, leaderEpoch, AppendOrigin.CLIENT,
                    RequestLocal.noCaching(), guard, TransactionVersion.TV_0.featureLevel());
            maybeIncrementHighWatermark();
            return info;
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    /**
     * The min.insync.replicas acks=all needs here: the topic's, but no more than its replication factor, as Kafka's
     * {@code Partition.effectiveMinIsr} (a single-replica topic of a cluster whose default is 2 takes acks=all
     * writes, rather than refusing every one).
     */
    public int effectiveMinIsr() {
        return Math.min(log_.config().minInSyncReplicas, Math.max(1, replicas.size()));
    }

    /** acks=all's precondition: the ISR holds min.insync.replicas members. Under the leader/ISR read lock. */
    private void checkMinIsr() {
        int minIsr = effectiveMinIsr();
        if (isr.size() < minIsr) {
            throw new NotEnoughReplicasException("The size of the current ISR " + isr
                    + " is insufficient to satisfy the min.isr requirement of " + minIsr + " for partition "
                    + topicPartition);
        }
    }

    /**
     * Starts the verification of a transactional write by {@code producerId} (KIP-890) as leader: SENTINEL when the
     * producer already has a transaction open here in {@code producerEpoch} (nothing to verify), otherwise the guard
     * the append must carry once the coordinator has confirmed the partition is in the transaction. An epoch older
     * than the one the partition knows is refused (InvalidProducerEpochException, from the log).
     */
    public VerificationGuard maybeStartTransactionVerification(long producerId, int sequence, short producerEpoch,
                                                               boolean supportsEpochBump) {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            return log_.maybeStartTransactionVerification(producerId, sequence, producerEpoch, supportsEpochBump);
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    /**
     * Appends a transaction marker (WriteTxnMarkers, from a transaction coordinator) as leader, with acks=all's
     * rule that the ISR holds min.insync.replicas members, as Kafka appends markers. Kafka's log checks it against
     * the producer's state: a stale coordinator epoch is refused TRANSACTION_COORDINATOR_FENCED, a stale producer
     * epoch INVALID_PRODUCER_EPOCH, with {@code transactionVersion}'s epoch rules (2: the marker's epoch is one
     * above the transaction's).
     */
    public LogAppendInfo appendTransactionMarker(MemoryRecords marker, short transactionVersion) throws IOException {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            checkMinIsr();
            LogAppendInfo info = log_.appendAsLeader(marker, leaderEpoch, AppendOrigin.COORDINATOR,
                    RequestLocal.noCaching(), VerificationGuard.SENTINEL, transactionVersion);
            maybeIncrementHighWatermark();
            return info;
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    /**
     * Appends a transaction coordinator's state records as leader in exactly {@code expectedLeaderEpoch} (the
     * coordinator epoch its decision was made in), with acks=all's min.insync.replicas rule: a coordinator that lost
     * and regained the leadership since cannot write a decision taken on state a newer epoch replaced
     * (NOT_LEADER_OR_FOLLOWER, as after a lost leadership).
     */
    public LogAppendInfo appendCoordinatorState(MemoryRecords records, int expectedLeaderEpoch) throws IOException {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            if (leaderEpoch != expectedLeaderEpoch) {
                throw new NotLeaderOrFollowerException(logPrefix + "leads in epoch " + leaderEpoch + ", not in the "
                        + "coordinator epoch " + expectedLeaderEpoch + " the write was decided in");
            }
            checkMinIsr();
            LogAppendInfo info = log_.appendAsLeader(records, leaderEpoch, AppendOrigin.COORDINATOR,
                    RequestLocal.noCaching(), VerificationGuard.SENTINEL, TransactionVersion.TV_0.featureLevel());
            maybeIncrementHighWatermark();
            return info;
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    /**
     * Appends records written by a coordinator hosted on this broker (the group coordinator's
     * {@code __consumer_offsets} batches) as leader, without waiting for replication: the coordinator waits for the
     * high watermark itself through {@link HighWatermarkListener}.
     *
     * @return the log end offset after the append
     */
    public long appendAsCoordinator(MemoryRecords records, VerificationGuard guard, short transactionVersion)
            throws IOException {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            LogAppendInfo info = log_.appendAsLeader(records, leaderEpoch, AppendOrigin.COORDINATOR,
                    RequestLocal.noCaching(), guard, transactionVersion);
            maybeIncrementHighWatermark();
            return info.lastOffset() + 1;
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    /**
     * acks=all: have the records before {@code requiredOffset} reached the ISR? Empty while the high watermark is
     * below it. Once this broker no longer leads, NOT_LEADER_OR_FOLLOWER: the records may have been truncated, and
     * only the new leader can tell (the producer retries there). When the high watermark passed them only because
     * the ISR shrank below min.insync.replicas, NOT_ENOUGH_REPLICAS_AFTER_APPEND. (Kafka's
     * {@code Partition.checkEnoughReplicasReachOffset}.)
     */
    public Optional<Errors> checkEnoughReplicasReachOffset(long requiredOffset) {
        leaderIsrLock.readLock().lock();
        try {
            if (!isLeader()) {
                return Optional.of(Errors.NOT_LEADER_OR_FOLLOWER);
            }
            if (log_.highWatermark() < requiredOffset) {
                return Optional.empty();
            }
            int maximalIsrSize;
            synchronized (this) {
                LinkedHashSet<Integer> maximal = new LinkedHashSet<>(isr);
                if (pendingIsr != null) {
                    maximal.addAll(pendingIsr);
                }
                maximalIsrSize = maximal.size();
            }
            return Optional.of(maximalIsrSize >= effectiveMinIsr() ? Errors.NONE
                    : Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    /**
     * Appends batches fetched from the leader, keeping their offsets and epochs.
     *
     * @return the log end offset after the append
     */
    public long appendRecordsAsFollower(MemoryRecords records, long fetchOffset) throws IOException {
        leaderIsrLock.readLock().lock();
        try {
            if (isLeader()) {
                throw new NotLeaderOrFollowerException(logPrefix + "is leader; refusing follower append");
            }
            if (log_.logEndOffset() != fetchOffset) {
                // a truncation raced with this fetch; the next fetch starts from the new end
                return log_.logEndOffset();
            }
            // a follower takes every batch of its leader, whose epochs are checked by the fetch protocol
            appendAsFollowerThroughBarriers(records);
            return log_.logEndOffset();
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    /**
     * A follower takes the leader's high watermark, capped at its own log end offset, and the leader's log start.
     *
     * @return whether either moved
     */
    public boolean updateFollowerHighWatermark(long leaderHighWatermark, long leaderLogStartOffset) throws IOException {
        if (!followerHighWatermarkWouldMove(leaderHighWatermark, leaderLogStartOffset)) {
            // the common answer of a busy fetch session: nothing new for this partition, and no lock to take
            return false;
        }
        leaderIsrLock.readLock().lock();
        try {
            if (isLeader()) {
                return false;
            }
            log_.maybeUpdateHighWatermark(Math.min(leaderHighWatermark, log_.logEndOffset()));
            if (leaderLogStartOffset > log_.logStartOffset() && leaderLogStartOffset <= log_.highWatermark()) {
                log_.maybeIncrementLogStartOffset(leaderLogStartOffset, LogStartOffsetIncrementReason.LeaderOffsetIncremented);
            }
            return true;
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    /**
     * Would {@link #updateFollowerHighWatermark} change anything? Read without the lock: a stale read only means
     * the update runs (under the lock) when it was not needed, or runs at the next answer.
     */
    private boolean followerHighWatermarkWouldMove(long leaderHighWatermark, long leaderLogStartOffset) {
        long highWatermark = log_.highWatermark();
        return Math.min(leaderHighWatermark, log_.logEndOffset()) != highWatermark
                || (leaderLogStartOffset > log_.logStartOffset() && leaderLogStartOffset <= highWatermark);
    }

    /**
     * Truncates this replica's log (a follower's divergence from its leader, or a mirror leader aligning its log
     * with the source); never below the log start.
     */
    public void truncateTo(long offset, String reason) {
        leaderIsrLock.writeLock().lock();
        try {
            long before = log_.logEndOffset();
            Optional<Integer> epochBefore = log_.latestEpoch();
            // at or past the log end the log keeps its records but still drops epoch entries that start at its end
            // (Kafka's UnifiedLog.truncateTo): an epoch this replica began as leader without writing in it
            log_.truncateTo(offset);
            if (latestBarrier >= log_.logEndOffset()) {
                latestBarrier = -1;
            }
            if (offset < before) {
                forgetFollowerPositionsAfterTruncation();
                log.info("{}Truncated log from end offset {} to {} ({}); high watermark now {}", logPrefix, before,
                        log_.logEndOffset(), reason, log_.highWatermark());
            } else if (!epochBefore.equals(log_.latestEpoch())) {
                log.info("{}Dropped leader epoch {} started at the log end {} without records ({}); latest epoch now "
                        + "{}", logPrefix, epochBefore.orElse(-1), before, reason, log_.latestEpoch().orElse(-1));
            }
        } finally {
            leaderIsrLock.writeLock().unlock();
        }
    }

    /**
     * Applies the truncation points decided for every replica of the partition (a mirror partition's, decision 38)
     * that this replica has not applied yet: cuts the log to the lowest of their offsets (empties it and restarts
     * it there when that is below the log start), then records the latest id next to the log, synced, so no point
     * is applied twice. Explicit, not through epoch comparison: the epochs of two clusters can match where their
     * records differ.
     *
     * @return true if this call applied something; false if every point was applied before
     */
    public boolean applyTruncationPoints(TruncationPoints truncation) throws IOException {
        leaderIsrLock.writeLock().lock();
        try {
            OptionalLong cut = truncation.cutFor(appliedTruncationId());
            if (cut.isEmpty()) {
                return false;
            }
            long offset = cut.getAsLong();
            long end = log_.logEndOffset();
            String reason = truncation.reason() + " (truncation point " + truncation.latestId() + ")";
            if (offset < log_.logStartOffset()) {
                truncateFullyAndStartAt(offset, reason);
            } else {
                // also at or past the log end: an epoch entry that starts there holds no record (a leadership that
                // wrote nothing, kept in the leader-epoch checkpoint) and must go, or the fetcher sends it as the
                // last fetched epoch and the source reports a divergence no cut can repair (campaign defect 1)
                truncateTo(offset, reason);
            }
            TruncationPointFile.write(log_.dir().toPath(), truncation.latestId(), offset);
            appliedTruncationId = OptionalLong.of(truncation.latestId());
            if (offset < end) {
                log.info("{}Applied truncation point {} at offset {}: dropped offsets {}-{} ({})", logPrefix,
                        truncation.latestId(), offset, offset, end - 1, truncation.reason());
            } else {
                // every replica of every mirror partition applies the start's point: nothing to say at INFO
                log.debug("{}Applied truncation point {} at offset {}: nothing to drop (log end {})", logPrefix,
                        truncation.latestId(), offset, end);
            }
            return true;
        } finally {
            leaderIsrLock.writeLock().unlock();
        }
    }

    /** The id of the last truncation point this replica applied ({@link #applyTruncationPoints}), if any. */
    public OptionalLong appliedTruncationId() throws IOException {
        OptionalLong known = appliedTruncationId;
        if (known == null) {
            known = TruncationPointFile.read(log_.dir().toPath());
            appliedTruncationId = known;
        }
        return known;
    }

    /** The log end offsets of the followers as this leader last saw them fetch (-1: unknown since a cut). */
    public synchronized Map<Integer, Long> followerLogEndOffsets() {
        Map<Integer, Long> out = new HashMap<>();
        followers.forEach((id, state) -> out.put(id, state.logEndOffset));
        return out;
    }

    /** Empties the log and restarts it at {@code offset} (the leader's log start is past our end). */
    public void truncateFullyAndStartAt(long offset, String reason) {
        leaderIsrLock.writeLock().lock();
        try {
            long before = log_.logEndOffset();
            log_.truncateFullyAndStartAt(offset, Optional.empty());
            latestBarrier = -1;
            forgetFollowerPositionsAfterTruncation();
            log.info("{}Emptied log (end offset was {}) and restarted it at {} ({})", logPrefix, before, offset, reason);
        } finally {
            leaderIsrLock.writeLock().unlock();
        }
    }

    /**
     * A leader that cut its own log (a mirror leader aligning with its source) no longer knows what its followers
     * hold: their last fetch positions may count records it no longer has, or that differ from what it will append
     * at the same offsets. Until each follower fetches again (and truncates on the diverging epoch it is answered),
     * it counts for nothing in the high watermark. The epoch's start offset moves back with the log end, so a
     * follower that converges can rejoin the ISR.
     */
    private void forgetFollowerPositionsAfterTruncation() {
        if (!isLeader()) {
            return;
        }
        synchronized (this) {
            for (ReplicaState follower : followers.values()) {
                follower.forgetPosition();
            }
        }
        leaderEpochStartOffset = Math.min(leaderEpochStartOffset, log_.logEndOffset());
    }

    /**
     * Leader side of a follower's fetch: validates epochs, reports divergence (the follower's last fetched epoch
     * ends earlier here, or is unknown), reads up to the log end, and records the follower's progress.
     */
    public FollowerFetch readForFollower(int replicaId, long brokerEpoch, long fetchOffset,
                                         Optional<Integer> currentLeaderEpoch, Optional<Integer> lastFetchedEpoch,
                                         int maxBytes, boolean minOneMessage, long nowMs,
                                         IsrChangeSender isrChanges) throws IOException {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            checkLeaderEpoch(currentLeaderEpoch);
            if (!replicas.contains(replicaId)) {
                throw new NotLeaderOrFollowerException("Broker " + replicaId + " is not a replica of " + topicPartition
                        + " (replicas " + replicas + ")");
            }
            if (lastFetchedEpoch.isPresent() && lastFetchedEpoch.get() >= 0) {
                Optional<OffsetAndEpoch> diverging = DivergingEpoch.forFollower(lastFetchedEpoch.get(), fetchOffset,
                        log_.endOffsetForEpoch(lastFetchedEpoch.get()), log_.latestEpoch(), log_.logEndOffset());
                if (diverging.isPresent()) {
                    return new FollowerFetch(null, Optional.of(new FetchResponseData.EpochEndOffset()
                            .setEpoch(diverging.get().epoch()).setEndOffset(diverging.get().offset())),
                            log_.highWatermark(), log_.logStartOffset(), log_.logEndOffset(), false);
                }
            }
            long leaderLogEndOffset = log_.logEndOffset();
            FetchDataInfo info = log_.read(fetchOffset, maxBytes, FetchIsolation.LOG_END, minOneMessage);
            boolean highWatermarkMoved = updateFollowerFetchState(replicaId, brokerEpoch, fetchOffset,
                    leaderLogEndOffset, nowMs, isrChanges);
            return new FollowerFetch(info, Optional.empty(), log_.highWatermark(), log_.logStartOffset(),
                    leaderLogEndOffset, highWatermarkMoved);
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    /** The result of a follower fetch on the leader. */
    public record FollowerFetch(FetchDataInfo info, Optional<FetchResponseData.EpochEndOffset> divergingEpoch,
                                long highWatermark, long logStartOffset, long logEndOffset,
                                boolean highWatermarkMoved) {
    }

    private boolean updateFollowerFetchState(int replicaId, long brokerEpoch, long fetchOffset,
                                             long leaderLogEndOffset, long nowMs, IsrChangeSender isrChanges) {
        List<Integer> expandTo = null;
        synchronized (this) {
            ReplicaState state = followers.computeIfAbsent(replicaId, id -> new ReplicaState(nowMs));
            state.onFetch(fetchOffset, leaderLogEndOffset, nowMs, brokerEpoch);
            boolean inIsr = isr.contains(replicaId);
            if (!inIsr && pendingIsr == null && fetchOffset >= log_.highWatermark()
                    && fetchOffset >= leaderEpochStartOffset && isrChanges.isEligibleForIsr(replicaId, brokerEpoch)) {
                LinkedHashSet<Integer> next = new LinkedHashSet<>(isr);
                next.add(replicaId);
                expandTo = new ArrayList<>(next);
                pendingIsr = expandTo;
            }
        }
        if (expandTo != null) {
            // a proposal: the controller logs the change it commits ("ISR of ..."), this line says why
            log.info("{}Proposing ISR {} -> {} to the controller: follower {} caught up to offset {} (high "
                    + "watermark {})", logPrefix,
                    isr, expandTo, replicaId, fetchOffset, log_.highWatermark());
            isrChanges.submit(this, leaderEpoch, partitionEpoch, expandTo);
        }
        return maybeIncrementHighWatermark();
    }

    /**
     * Proposes removing followers that have not caught up for {@code maxLagMs}. Called periodically on the
     * leader.
     */
    public void maybeShrinkIsr(long nowMs, long maxLagMs, IsrChangeSender isrChanges) {
        leaderIsrLock.readLock().lock();
        try {
            if (!isLeader()) {
                return;
            }
            List<Integer> shrinkTo = null;
            List<Integer> lagging = new ArrayList<>();
            synchronized (this) {
                if (pendingIsr != null) {
                    return;
                }
                long leaderLogEndOffset = log_.logEndOffset();
                for (Integer r : isr) {
                    if (r == localBrokerId) {
                        continue;
                    }
                    ReplicaState s = followers.get(r);
                    // Kafka's ReplicaState.isCaughtUp: a follower at the leader's log end stays in sync however
                    // long ago it fetched, so an idle partition keeps its ISR (which replicas are electable must
                    // not differ from Kafka's)
                    if (s == null || (s.logEndOffset != leaderLogEndOffset && nowMs - s.lastCaughtUpTimeMs > maxLagMs)) {
                        lagging.add(r);
                    }
                }
                if (!lagging.isEmpty()) {
                    shrinkTo = new ArrayList<>(isr);
                    shrinkTo.removeAll(lagging);
                    pendingIsr = new ArrayList<>(isr); // the maximal ISR stays the larger one until committed
                }
            }
            if (shrinkTo != null) {
                log.info("{}Proposing ISR {} -> {} to the controller: followers {} not caught up for {} ms "
                        + "(leader end offset {}, "
                        + "high watermark {}, follower states {})", logPrefix, isr, shrinkTo, lagging, maxLagMs,
                        log_.logEndOffset(), log_.highWatermark(), followerStates());
                isrChanges.submit(this, leaderEpoch, partitionEpoch, shrinkTo);
            }
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    private synchronized Map<Integer, String> followerStates() {
        Map<Integer, String> out = new HashMap<>();
        followers.forEach((id, s) -> out.put(id, "LEO " + s.logEndOffset));
        return out;
    }

    /** The controller answered (or the attempt failed): another ISR change may be proposed. */
    public synchronized void onIsrChangeCompleted() {
        pendingIsr = null;
    }

    /**
     * Moves the high watermark to the smallest log end offset of the maximal ISR.
     *
     * @return true if it moved
     */
    boolean maybeIncrementHighWatermark() {
        if (!isLeader()) {
            return false;
        }
        long newHighWatermark = log_.logEndOffset();
        synchronized (this) {
            LinkedHashSet<Integer> maximal = new LinkedHashSet<>(isr);
            if (pendingIsr != null) {
                maximal.addAll(pendingIsr);
            }
            for (Integer r : maximal) {
                if (r == localBrokerId) {
                    continue;
                }
                ReplicaState s = followers.get(r);
                long followerEnd = s == null ? -1L : s.logEndOffset;
                newHighWatermark = Math.min(newHighWatermark, Math.max(followerEnd, 0L));
            }
        }
        try {
            if (newHighWatermark > log_.highWatermark()) {
                log_.maybeIncrementHighWatermark(log_.maybeConvertToOffsetMetadata(newHighWatermark));
                highWatermarkListener.onHighWatermarkUpdated(topicPartition, log_.highWatermark());
                return true;
            }
            return false;
        } catch (IOException e) {
            throw new IllegalStateException(logPrefix + "could not advance the high watermark to " + newHighWatermark, e);
        }
    }

    /** Reads for a consumer (isolation HIGH_WATERMARK or TXN_COMMITTED) from the leader. */
    public ReadResult read(long fetchOffset, Optional<Integer> currentLeaderEpoch, Optional<Integer> lastFetchedEpoch,
                           int maxBytes, FetchIsolation isolation, boolean minOneMessage) throws IOException {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            checkLeaderEpoch(currentLeaderEpoch);
            LogOffsetSnapshot snapshot = log_.fetchOffsetSnapshot();
            Optional<OffsetAndEpoch> diverging = Optional.empty();
            if (lastFetchedEpoch.isPresent() && lastFetchedEpoch.get() >= 0) {
                if (fetchOffset < snapshot.logStartOffset()) {
                    throw new OffsetOutOfRangeException("Fetch offset " + fetchOffset + " is below the log start "
                            + snapshot.logStartOffset() + " of " + topicPartition);
                }
                diverging = DivergingEpoch.forReader(lastFetchedEpoch.get(), fetchOffset,
                        log_.endOffsetForEpoch(lastFetchedEpoch.get()));
            }
            FetchDataInfo info = diverging.isPresent() ? new FetchDataInfo(new LogOffsetMetadata(fetchOffset),
                    MemoryRecords.EMPTY) : log_.read(fetchOffset, maxBytes, isolation, minOneMessage);
            return new ReadResult(info, snapshot.highWatermark().messageOffset, snapshot.lastStableOffset().messageOffset,
                    snapshot.logStartOffset(), snapshot.logEndOffset().messageOffset,
                    diverging.map(d -> new FetchResponseData.EpochEndOffset().setEpoch(d.epoch())
                            .setEndOffset(d.offset())));
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    public LogOffsetSnapshot offsetSnapshot() throws IOException {
        return log_.fetchOffsetSnapshot();
    }

    /**
     * ListOffsets on the leader. LATEST is the last offset a reader of that isolation level may read (high
     * watermark, last stable offset, or for a replica the log end); EARLIEST is the log start; other timestamps
     * search the log and find nothing past what the reader may read.
     */
    public Optional<FileRecords.TimestampAndOffset> fetchOffsetForTimestamp(long timestamp, Optional<IsolationLevel> isolation,
                                                                           Optional<Integer> currentLeaderEpoch) {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            checkLeaderEpoch(currentLeaderEpoch);
            long lastFetchable = isolation.isEmpty() ? log_.logEndOffset()
                    : isolation.get() == IsolationLevel.READ_COMMITTED ? log_.lastStableOffset() : log_.highWatermark();
            if (timestamp == ListOffsetsRequest.LATEST_TIMESTAMP) {
                return Optional.of(new FileRecords.TimestampAndOffset(RecordBatch.NO_TIMESTAMP, lastFetchable,
                        Optional.of(leaderEpoch)));
            }
            OffsetResultHolder holder = log_.fetchOffsetByTimestamp(timestamp, Optional.empty());
            if (holder.maybeOffsetsError().isPresent()) {
                throw holder.maybeOffsetsError().get();
            }
            Optional<FileRecords.TimestampAndOffset> found = holder.timestampAndOffsetOpt();
            if (timestamp == ListOffsetsRequest.EARLIEST_TIMESTAMP
                    || timestamp == ListOffsetsRequest.EARLIEST_LOCAL_TIMESTAMP) {
                return found;
            }
            return found.filter(t -> t.offset < lastFetchable);
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    /** OffsetsForLeaderEpoch on the leader: the end offset of the requested epoch, Kafka semantics. */
    public Optional<OffsetAndEpoch> endOffsetForEpoch(int requestedEpoch, Optional<Integer> currentLeaderEpoch) {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            checkLeaderEpoch(currentLeaderEpoch);
            return log_.endOffsetForEpoch(requestedEpoch);
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    private void checkLeader() {
        if (!isLeader()) {
            throw new NotLeaderOrFollowerException("Broker " + localBrokerId + " is not the leader of "
                    + topicPartition + " (leader is " + leaderId + ")");
        }
    }

    /** Fences a caller whose view of the leader epoch is older (FENCED) or newer (UNKNOWN) than ours. */
    public void checkLeaderEpoch(Optional<Integer> requested) {
        if (requested.isEmpty() || requested.get() == -1) {
            return;
        }
        int r = requested.get();
        if (r < leaderEpoch) {
            throw new FencedLeaderEpochException("Leader epoch " + r + " of the request is older than the current "
                    + leaderEpoch + " of " + topicPartition);
        }
        if (r > leaderEpoch) {
            throw new UnknownLeaderEpochException("Leader epoch " + r + " of the request is newer than the current "
                    + leaderEpoch + " of " + topicPartition);
        }
    }

    /**
     * DeleteRecords on the leader: moves the log start offset to {@code offset} ({@link
     * DeleteRecordsRequest#HIGH_WATERMARK} means the high watermark), never past the high watermark, since records
     * above it may still be truncated. Followers take the new log start from the leader's fetch responses; the caller
     * waits for {@link #lowWatermarkIfLeader()} to reach it.
     *
     * @return the log start offset after the deletion
     * @throws NotLeaderOrFollowerException when this broker does not lead the partition
     * @throws OffsetOutOfRangeException    when {@code offset} is negative or beyond the high watermark
     */
    public long deleteRecordsOnLeader(long offset) {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            long highWatermark = log_.highWatermark();
            long target = offset == DeleteRecordsRequest.HIGH_WATERMARK ? highWatermark : offset;
            if (target < 0 || target > highWatermark) {
                throw new OffsetOutOfRangeException("Cannot delete records of " + topicPartition + " before offset "
                        + offset + ": it is beyond the high watermark " + highWatermark);
            }
            if (log_.maybeIncrementLogStartOffset(target, LogStartOffsetIncrementReason.ClientRecordDeletion)) {
                log.info("{}Log start offset moved to {} (DeleteRecords)", logPrefix, log_.logStartOffset());
            }
            return log_.logStartOffset();
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    /**
     * A follower's fetch reported its log start offset (the leader's side of DeleteRecords).
     *
     * @return whether it moved, so waiting DeleteRecords requests should be checked
     */
    public synchronized boolean updateFollowerLogStartOffset(int replicaId, long logStartOffset) {
        Long before = followerLogStartOffsets.put(replicaId, logStartOffset);
        return before == null || before != logStartOffset;
    }

    /**
     * The lowest log start offset among the leader and its in-sync followers (Kafka's low watermark), or -1 when
     * this broker does not lead; a follower that has not fetched yet counts as 0. A follower out of the ISR is not
     * waited for: it takes the log start from the leader when it catches up.
     */
    public long lowWatermarkIfLeader() {
        leaderIsrLock.readLock().lock();
        try {
            if (!isLeader()) {
                return -1L;
            }
            long low = log_.logStartOffset();
            synchronized (this) {
                for (int replicaId : isr) {
                    if (replicaId != localBrokerId) {
                        low = Math.min(low, followerLogStartOffsets.getOrDefault(replicaId, 0L));
                    }
                }
            }
            return low;
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    @Override
    public String toString() {
        return logPrefix + "leader=" + leaderId + " epoch=" + leaderEpoch + " isr=" + isr;
    }

    /** What one partition read returned, with the offsets the Fetch response reports. */
    /**
     * A reader's fetch on the leader; {@code divergingEpoch} when the reader's last fetched epoch ends earlier here
     * (then {@code info} holds no records).
     */
    public record ReadResult(FetchDataInfo info, long highWatermark, long lastStableOffset, long logStartOffset,
                             long logEndOffset, Optional<FetchResponseData.EpochEndOffset> divergingEpoch) {
    }
}
