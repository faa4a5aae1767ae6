package io.twinlog.replication;

import io.twinlog.common.mirror.TruncationPoints;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownLeaderEpochException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogOffsetSnapshot;
import org.apache.kafka.storage.internals.log.LogStartOffsetIncrementReason;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * One partition hosted on this broker: its log, its role (leader or follower) in the current leader epoch, the
 * ISR, and — as leader — what it knows of each follower and the high watermark.
 *
 * <p>Threading: leadership changes hold the write lock (metadata thread); appends, reads and follower-state
 * updates hold the read lock (plus the {@link FollowerTracker}'s monitor), so an append never runs against a
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
 *
 * <p>This class holds the role, the lock and leadership changes; each job's calls go to a collaborator that takes
 * the same lock: {@link LeaderWrites}, {@link LeaderReads}, {@link FollowerReplication} (follower fetches, ISR
 * proposals), {@link ProducerStateBarriers} (failover writes), {@link ReplicaTruncation}.
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
    /** What this leader knows of its followers and the ISR change in flight; its own monitor guards it. */
    private final FollowerTracker followers;
    // true for a mirror partition before failover: its leader-epoch history must stay the source's, so becoming
    // leader adds no local epoch (mirroring-design.md, DLE >= SLE)
    private volatile boolean keepSourceEpochs;
    private final HighWatermarkListener highWatermarkListener;
    private final LeaderWrites writes;
    private final LeaderReads reads;
    private final FollowerReplication replication;
    private final ProducerStateBarriers barriers;
    private final ReplicaTruncation truncation;

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
        this.followers = new FollowerTracker(localBrokerId);
        this.writes = new LeaderWrites(this);
        this.reads = new LeaderReads(this);
        this.replication = new FollowerReplication(this);
        this.barriers = new ProducerStateBarriers(this);
        this.truncation = new ReplicaTruncation(this);
    }

    // ---- for the collaborators (same package), which run under this partition's lock as its methods did ----

    ReentrantReadWriteLock lock() {
        return leaderIsrLock;
    }

    String logPrefix() {
        return logPrefix;
    }

    FollowerTracker followers() {
        return followers;
    }

    ProducerStateBarriers barriers() {
        return barriers;
    }

    long leaderEpochStartOffset() {
        return leaderEpochStartOffset;
    }

    /** A leader that cut its own log: the epoch's start moves back with the log end. Under the write lock. */
    void capLeaderEpochStartOffset(long logEndOffset) {
        leaderEpochStartOffset = Math.min(leaderEpochStartOffset, logEndOffset);
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
            // only a new record ends an in-flight ISR change; a new term starts every follower afresh
            followers.onLeadershipRecord(newRecord, newTerm, newReplicas, nowMs);
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

    /** Appends client records as leader; acks=all (-1) also requires min.insync.replicas members in the ISR. */
    public LogAppendInfo appendRecordsToLeader(MemoryRecords records, short requiredAcks) throws IOException {
        return appendRecordsToLeader(records, requiredAcks, VerificationGuard.SENTINEL);
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
            barriers.appendAsFollowerThroughBarriers(records);
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

    /** The log end offsets of the followers as this leader last saw them fetch (-1: unknown since a cut). */
    public Map<Integer, Long> followerLogEndOffsets() {
        return followers.logEndOffsets();
    }

    /** The result of a follower fetch on the leader. */
    public record FollowerFetch(FetchDataInfo info, Optional<FetchResponseData.EpochEndOffset> divergingEpoch,
                                long highWatermark, long logStartOffset, long logEndOffset,
                                boolean highWatermarkMoved) {
    }

    /** The controller answered (or the attempt failed): another ISR change may be proposed. */
    public void onIsrChangeCompleted() {
        followers.onIsrChangeCompleted();
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
        long newHighWatermark = followers.highWatermarkBound(isr, log_.logEndOffset());
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

    public LogOffsetSnapshot offsetSnapshot() throws IOException {
        return log_.fetchOffsetSnapshot();
    }

    void checkLeader() {
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
     * A follower's fetch reported its log start offset (the leader's side of DeleteRecords).
     *
     * @return whether it moved, so waiting DeleteRecords requests should be checked
     */
    public boolean updateFollowerLogStartOffset(int replicaId, long logStartOffset) {
        return followers.updateLogStartOffset(replicaId, logStartOffset);
    }

    // ---- handed to the collaborators, which keep the rules and the locking of each call ----

    /** Appends records verified with their coordinator (KIP-890) ({@link LeaderWrites#appendRecordsToLeader}). */
    public LogAppendInfo appendRecordsToLeader(MemoryRecords records, short requiredAcks, VerificationGuard guard)
            throws IOException {
        return writes.appendRecordsToLeader(records, requiredAcks, guard);
    }

    /** The min.insync.replicas acks=all needs here ({@link LeaderWrites#effectiveMinIsr}). */
    public int effectiveMinIsr() {
        return writes.effectiveMinIsr();
    }

    /** Starts verifying a transactional write (KIP-890) ({@link LeaderWrites#maybeStartTransactionVerification}). */
    public VerificationGuard maybeStartTransactionVerification(long producerId, int sequence, short producerEpoch,
                                                               boolean supportsEpochBump) {
        return writes.maybeStartTransactionVerification(producerId, sequence, producerEpoch, supportsEpochBump);
    }

    /** Appends a transaction marker as leader (acks=all's ISR rule) ({@link LeaderWrites#appendTransactionMarker}). */
    public LogAppendInfo appendTransactionMarker(MemoryRecords marker, short transactionVersion) throws IOException {
        return writes.appendTransactionMarker(marker, transactionVersion);
    }

    /** Appends a transaction coordinator's state as leader in its epoch: {@link LeaderWrites}. */
    public LogAppendInfo appendCoordinatorState(MemoryRecords records, int expectedLeaderEpoch) throws IOException {
        return writes.appendCoordinatorState(records, expectedLeaderEpoch);
    }

    /** Appends a hosted coordinator's records, not waiting for the ISR ({@link LeaderWrites#appendAsCoordinator}). */
    public long appendAsCoordinator(MemoryRecords records, VerificationGuard guard, short transactionVersion)
            throws IOException {
        return writes.appendAsCoordinator(records, guard, transactionVersion);
    }

    /** acks=all: have the records reached the ISR ({@link LeaderWrites#checkEnoughReplicasReachOffset}). */
    public Optional<Errors> checkEnoughReplicasReachOffset(long requiredOffset) {
        return writes.checkEnoughReplicasReachOffset(requiredOffset);
    }

    /** DeleteRecords: moves the log start, never past the high watermark: {@link LeaderWrites}. */
    public long deleteRecordsOnLeader(long offset) {
        return writes.deleteRecordsOnLeader(offset);
    }

    /** The lowest log start of the leader and its in-sync followers, or -1: {@link LeaderWrites}. */
    public long lowWatermarkIfLeader() {
        return writes.lowWatermarkIfLeader();
    }

    /** Appends batches mirrored from the source unchanged, as leader: {@link ProducerStateBarriers}. */
    public long appendMirroredRecords(MemoryRecords records) throws IOException {
        return barriers.appendMirroredRecords(records);
    }

    /** Failover: aborts the transactions the source left open ({@link ProducerStateBarriers#abortOpenTransactions}). */
    public List<Long> abortOpenTransactions(long nowMs) throws IOException {
        return barriers.abortOpenTransactions(nowMs);
    }

    /** Failover: appends the producer-state barrier ({@link ProducerStateBarriers#appendProducerStateBarrier}). */
    public long appendProducerStateBarrier(long nowMs) throws IOException {
        return barriers.appendProducerStateBarrier(nowMs);
    }

    /** The latest producer-state barrier this replica applied: {@link ProducerStateBarriers}. */
    public OptionalLong latestProducerStateBarrier() {
        return barriers.latestProducerStateBarrier();
    }

    /** After a restart: applies a replayed barrier again: {@link ProducerStateBarriers}. */
    public void recoverProducerStateBarrier(boolean afterCrash) throws IOException {
        barriers.recoverProducerStateBarrier(afterCrash);
    }

    /** Truncates this replica's log, never below the log start ({@link ReplicaTruncation#truncateTo}). */
    public void truncateTo(long offset, String reason) {
        truncation.truncateTo(offset, reason);
    }

    /** Applies the truncation points this replica has not applied yet: {@link ReplicaTruncation}. */
    public boolean applyTruncationPoints(TruncationPoints truncation) throws IOException {
        return this.truncation.applyTruncationPoints(truncation);
    }

    /** The ids of the last truncation points this replica applied (decision 125): {@link ReplicaTruncation}. */
    public Set<Long> appliedTruncationIds() throws IOException {
        return truncation.appliedTruncationIds();
    }

    /** Empties the log and restarts it at the offset ({@link ReplicaTruncation#truncateFullyAndStartAt}). */
    public void truncateFullyAndStartAt(long offset, String reason) {
        truncation.truncateFullyAndStartAt(offset, reason);
    }

    /** The leader's side of a follower's fetch ({@link FollowerReplication#readForFollower}). */
    public FollowerFetch readForFollower(int replicaId, long brokerEpoch, long fetchOffset,
                                         Optional<Integer> currentLeaderEpoch, Optional<Integer> lastFetchedEpoch,
                                         int maxBytes, boolean minOneMessage, long nowMs,
                                         IsrChangeSender isrChanges) throws IOException {
        return replication.readForFollower(replicaId, brokerEpoch, fetchOffset, currentLeaderEpoch, lastFetchedEpoch,
                maxBytes, minOneMessage, nowMs, isrChanges);
    }

    /** Reads for a consumer from the leader ({@link LeaderReads#read}). */
    public ReadResult read(long fetchOffset, Optional<Integer> currentLeaderEpoch, Optional<Integer> lastFetchedEpoch,
                           int maxBytes, FetchIsolation isolation, boolean minOneMessage) throws IOException {
        return reads.read(fetchOffset, currentLeaderEpoch, lastFetchedEpoch, maxBytes, isolation, minOneMessage);
    }

    /** ListOffsets on the leader ({@link LeaderReads#fetchOffsetForTimestamp}). */
    public Optional<FileRecords.TimestampAndOffset> fetchOffsetForTimestamp(long timestamp,
                                                                           Optional<IsolationLevel> isolation,
                                                                           Optional<Integer> currentLeaderEpoch) {
        return reads.fetchOffsetForTimestamp(timestamp, isolation, currentLeaderEpoch);
    }

    /** OffsetsForLeaderEpoch on the leader ({@link LeaderReads#endOffsetForEpoch}). */
    public Optional<OffsetAndEpoch> endOffsetForEpoch(int requestedEpoch, Optional<Integer> currentLeaderEpoch) {
        return reads.endOffsetForEpoch(requestedEpoch, currentLeaderEpoch);
    }

    /** Proposes removing followers that have not caught up ({@link FollowerReplication#maybeShrinkIsr}). */
    public void maybeShrinkIsr(long nowMs, long maxLagMs, IsrChangeSender isrChanges) {
        replication.maybeShrinkIsr(nowMs, maxLagMs, isrChanges);
    }

    @Override
    public String toString() {
        return logPrefix + "leader=" + leaderId + " epoch=" + leaderEpoch + " isr=" + isr;
    }

    /**
     * A reader's fetch on the leader; {@code divergingEpoch} when the reader's last fetched epoch ends earlier here
     * (then {@code info} holds no records).
     */
    public record ReadResult(FetchDataInfo info, long highWatermark, long lastStableOffset, long logStartOffset,
                             long logEndOffset, Optional<FetchResponseData.EpochEndOffset> divergingEpoch) {
    }
}
