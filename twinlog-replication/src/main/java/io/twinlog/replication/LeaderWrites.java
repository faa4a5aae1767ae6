package io.twinlog.replication;

import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.server.common.TransactionVersion;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogStartOffsetIncrementReason;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Optional;

/**
 * A partition leader's writes from this broker's clients and coordinators: producer records (acks=all's
 * min.insync.replicas rule), transaction markers, a transaction coordinator's state in its epoch, a group
 * coordinator's records, DeleteRecords' log start; and what acks=all and DeleteRecords wait for (the ISR has the
 * records, the in-sync replicas' log starts). Each takes the partition's leader/ISR read lock and checks the role
 * first, as before. Split from {@link Partition}, which hands these calls here; logs under its logger.
 */
final class LeaderWrites {
    private static final Logger log = LoggerFactory.getLogger(Partition.class);

    private final Partition p;
    /** The partition's log (final there). */
    private final UnifiedLog log_;

    LeaderWrites(Partition p) {
        this.p = p;
        this.log_ = p.log();
    }

    /**
     * {@link #appendRecordsToLeader(MemoryRecords, short)} for records whose transaction was verified with the
     * coordinator (KIP-890): {@code guard} is what {@link #maybeStartTransactionVerification} handed out before the
     * verification; the log refuses the transactional batch (INVALID_TXN_STATE) if the producer's state moved on in
     * the meantime (a marker ended the transaction, a newer epoch wrote), so a late write cannot open a transaction
     * no coordinator will end.
     */
    LogAppendInfo appendRecordsToLeader(MemoryRecords records, short requiredAcks, VerificationGuard guard)
            throws IOException {
        p.lock().readLock().lock();
        try {
            p.checkLeader();
            if (requiredAcks == -1) {
                checkMinIsr();
            }
            LogAppendInfo info = log_.appendAsLeader(records, p.leaderEpoch(), AppendOrigin.CLIENT,
                    RequestLocal.noCaching(), guard, TransactionVersion.TV_0.featureLevel());
            p.maybeIncrementHighWatermark();
            return info;
        } finally {
            p.lock().readLock().unlock();
        }
    }

    /**
     * The min.insync.replicas acks=all needs here: the topic's, but no more than its replication factor, as Kafka's
     * {@code Partition.effectiveMinIsr} (a single-replica topic of a cluster whose default is 2 takes acks=all
     * writes, rather than refusing every one).
     */
    int effectiveMinIsr() {
        return Math.min(log_.config().minInSyncReplicas, Math.max(1, p.replicas().size()));
    }

    /** acks=all's precondition: the ISR holds min.insync.replicas members. Under the leader/ISR read lock. */
    private void checkMinIsr() {
        int minIsr = effectiveMinIsr();
        if (p.isr().size() < minIsr) {
            throw new NotEnoughReplicasException("The size of the current ISR " + p.isr()
                    + " is insufficient to satisfy the min.isr requirement of " + minIsr + " for partition "
                    + p.topicPartition());
        }
    }

    /**
     * Starts the verification of a transactional write by {@code producerId} (KIP-890) as leader: SENTINEL when the
     * producer already has a transaction open here in {@code producerEpoch} (nothing to verify), otherwise the guard
     * the append must carry once the coordinator has confirmed the partition is in the transaction. An epoch older
     * than the one the partition knows is refused (InvalidProducerEpochException, from the log).
     */
    VerificationGuard maybeStartTransactionVerification(long producerId, int sequence, short producerEpoch,
                                                               boolean supportsEpochBump) {
        p.lock().readLock().lock();
        try {
            p.checkLeader();
            return log_.maybeStartTransactionVerification(producerId, sequence, producerEpoch, supportsEpochBump);
        } finally {
            p.lock().readLock().unlock();
        }
    }

    /**
     * Appends a transaction marker (WriteTxnMarkers, from a transaction coordinator) as leader, with acks=all's
     * rule that the ISR holds min.insync.replicas members, as Kafka appends markers. Kafka's log checks it against
     * the producer's state: a stale coordinator epoch is refused TRANSACTION_COORDINATOR_FENCED, a stale producer
     * epoch INVALID_PRODUCER_EPOCH, with {@code transactionVersion}'s epoch rules (2: the marker's epoch is one
     * above the transaction's).
     */
    LogAppendInfo appendTransactionMarker(MemoryRecords marker, short transactionVersion) throws IOException {
        p.lock().readLock().lock();
        try {
            p.checkLeader();
            checkMinIsr();
            LogAppendInfo info = log_.appendAsLeader(marker, p.leaderEpoch(), AppendOrigin.COORDINATOR,
                    RequestLocal.noCaching(), VerificationGuard.SENTINEL, transactionVersion);
            p.maybeIncrementHighWatermark();
            return info;
        } finally {
            p.lock().readLock().unlock();
        }
    }

    /**
     * Appends a transaction coordinator's state records as leader in exactly {@code expectedLeaderEpoch} (the
     * coordinator epoch its decision was made in), with acks=all's min.insync.replicas rule: a coordinator that lost
     * and regained the leadership since cannot write a decision taken on state a newer epoch replaced
     * (NOT_LEADER_OR_FOLLOWER, as after a lost leadership).
     */
    LogAppendInfo appendCoordinatorState(MemoryRecords records, int expectedLeaderEpoch) throws IOException {
        p.lock().readLock().lock();
        try {
            p.checkLeader();
            if (p.leaderEpoch() != expectedLeaderEpoch) {
                throw new NotLeaderOrFollowerException(p.logPrefix() + "leads in epoch " + p.leaderEpoch()
                        + ", not in the "
                        + "coordinator epoch " + expectedLeaderEpoch + " the write was decided in");
            }
            checkMinIsr();
            LogAppendInfo info = log_.appendAsLeader(records, p.leaderEpoch(), AppendOrigin.COORDINATOR,
                    RequestLocal.noCaching(), VerificationGuard.SENTINEL, TransactionVersion.TV_0.featureLevel());
            p.maybeIncrementHighWatermark();
            return info;
        } finally {
            p.lock().readLock().unlock();
        }
    }

    /**
     * Appends records written by a coordinator hosted on this broker (the group coordinator's
     * {@code __consumer_offsets} batches) as leader, without waiting for replication: the coordinator waits for the
     * high watermark itself through {@link HighWatermarkListener}.
     *
     * @return the log end offset after the append
     */
    long appendAsCoordinator(MemoryRecords records, VerificationGuard guard, short transactionVersion)
            throws IOException {
        p.lock().readLock().lock();
        try {
            p.checkLeader();
            LogAppendInfo info = log_.appendAsLeader(records, p.leaderEpoch(), AppendOrigin.COORDINATOR,
                    RequestLocal.noCaching(), guard, transactionVersion);
            p.maybeIncrementHighWatermark();
            return info.lastOffset() + 1;
        } finally {
            p.lock().readLock().unlock();
        }
    }

    /**
     * acks=all: have the records before {@code requiredOffset} reached the ISR? Empty while the high watermark is
     * below it. Once this broker no longer leads, NOT_LEADER_OR_FOLLOWER: the records may have been truncated, and
     * only the new leader can tell (the producer retries there). When the high watermark passed them only because
     * the ISR shrank below min.insync.replicas, NOT_ENOUGH_REPLICAS_AFTER_APPEND. (Kafka's
     * {@code Partition.checkEnoughReplicasReachOffset}.)
     */
    Optional<Errors> checkEnoughReplicasReachOffset(long requiredOffset) {
        p.lock().readLock().lock();
        try {
            if (!p.isLeader()) {
                return Optional.of(Errors.NOT_LEADER_OR_FOLLOWER);
            }
            if (log_.highWatermark() < requiredOffset) {
                return Optional.empty();
            }
            int maximalIsrSize = p.followers().maximalIsrSize(p.isr());
            return Optional.of(maximalIsrSize >= effectiveMinIsr() ? Errors.NONE
                    : Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
        } finally {
            p.lock().readLock().unlock();
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
    long deleteRecordsOnLeader(long offset) {
        p.lock().readLock().lock();
        try {
            p.checkLeader();
            long highWatermark = log_.highWatermark();
            long target = offset == DeleteRecordsRequest.HIGH_WATERMARK ? highWatermark : offset;
            if (target < 0 || target > highWatermark) {
                throw new OffsetOutOfRangeException("Cannot delete records of " + p.topicPartition() + " before offset "
                        + offset + ": it is beyond the high watermark " + highWatermark);
            }
            if (log_.maybeIncrementLogStartOffset(target, LogStartOffsetIncrementReason.ClientRecordDeletion)) {
                log.info("{}Log start offset moved to {} (DeleteRecords)", p.logPrefix(), log_.logStartOffset());
            }
            return log_.logStartOffset();
        } finally {
            p.lock().readLock().unlock();
        }
    }

    /**
     * The lowest log start offset among the leader and its in-sync followers (Kafka's low watermark), or -1 when
     * this broker does not lead; a follower that has not fetched yet counts as 0. A follower out of the ISR is not
     * waited for: it takes the log start from the leader when it catches up.
     */
    long lowWatermarkIfLeader() {
        p.lock().readLock().lock();
        try {
            if (!p.isLeader()) {
                return -1L;
            }
            return p.followers().lowWatermark(p.isr(), log_.logStartOffset());
        } finally {
            p.lock().readLock().unlock();
        }
    }
}
