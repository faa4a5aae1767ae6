package io.twinlog.replication;

import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.server.common.TransactionVersion;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.ProducerStateEntry;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The failover writes of a mirror partition's leader and the producer-state barriers they leave: batches mirrored
 * from the source appended unchanged, the source's open transactions aborted, the barrier appended and applied
 * (every producer copied from the source forgotten, durably), and every replicated barrier applied before the
 * batches after it. Knows the latest barrier this replica appended or applied. Takes the partition's leader/ISR
 * lock as before (the write lock for the barrier: no other append between it and the reset). Split from
 * {@link Partition}, which hands these calls here; logs under its logger.
 */
final class ProducerStateBarriers {
    private static final Logger log = LoggerFactory.getLogger(Partition.class);

    private final Partition p;
    /** The partition's log (final there). */
    private final UnifiedLog log_;
    /**
     * The offset of the latest producer-state barrier this replica appended or applied, -1 if none is known (a
     * clean restart forgets it: the state snapshotted at close already reflects it). Written under the leadership
     * write lock or by the one appending thread; cleared when a truncation removes it.
     */
    private volatile long latestBarrier = -1;

    ProducerStateBarriers(Partition p) {
        this.p = p;
        this.log_ = p.log();
    }

    /** A truncation to {@code logEndOffset}: a barrier at or past it is gone. Under the leadership write lock. */
    void forgetFrom(long logEndOffset) {
        if (latestBarrier >= logEndOffset) {
            latestBarrier = -1;
        }
    }

    /** The log was emptied. Under the leadership write lock. */
    void forget() {
        latestBarrier = -1;
    }

    /**
     * Appends batches mirrored from the source cluster on this (leader) replica, unchanged: the source's offsets,
     * batch epochs and CRCs. Followers replicate them as usual and the high watermark advances with the ISR.
     *
     * @return the log end offset after the append
     */
    long appendMirroredRecords(MemoryRecords records) throws IOException {
        p.lock().readLock().lock();
        try {
            p.checkLeader();
            // the mirror fetcher has already checked every batch's epoch against ours
            appendAsFollowerThroughBarriers(records);
            p.maybeIncrementHighWatermark();
            return log_.logEndOffset();
        } finally {
            p.lock().readLock().unlock();
        }
    }

    /**
     * Failover of a mirror partition: every transaction left open by a source producer is aborted with an ABORT
     * marker in the current (post-failover) leader epoch, as a transaction coordinator would, so read_committed
     * consumers are not held at the last stable offset forever by a producer on a cluster that is gone.
     *
     * @return the producer ids whose transactions were aborted
     */
    List<Long> abortOpenTransactions(long nowMs) throws IOException {
        p.lock().readLock().lock();
        try {
            p.checkLeader();
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
                log_.appendAsLeader(marker, p.leaderEpoch(), AppendOrigin.COORDINATOR, RequestLocal.noCaching(),
                        VerificationGuard.SENTINEL, TransactionVersion.TV_0.featureLevel());
                aborted.add(e.getKey());
            }
            p.maybeIncrementHighWatermark();
            return aborted;
        } finally {
            p.lock().readLock().unlock();
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
    long appendProducerStateBarrier(long nowMs) throws IOException {
        p.lock().writeLock().lock(); // no client or coordinator append between the barrier and the reset
        try {
            p.checkLeader();
            List<Long> open = log_.producerStateManager().activeProducers().entrySet().stream()
                    .filter(e -> e.getValue().currentTxnFirstOffset().isPresent()).map(Map.Entry::getKey).toList();
            if (!open.isEmpty()) {
                throw new IllegalStateException(p.logPrefix() + "producers " + open + " still have a transaction open: "
                        + "the producer-state barrier waits until they are aborted");
            }
            long barrierOffset = log_.logEndOffset();
            log_.appendAsLeader(ProducerStateBarrier.create(nowMs), p.leaderEpoch(), AppendOrigin.COORDINATOR,
                    RequestLocal.noCaching(), VerificationGuard.SENTINEL, TransactionVersion.TV_0.featureLevel());
            ProducerStateReset.apply(log_, barrierOffset, p.logPrefix());
            latestBarrier = barrierOffset;
            p.maybeIncrementHighWatermark();
            return barrierOffset;
        } finally {
            p.lock().writeLock().unlock();
        }
    }

    /**
     * The offset of the latest producer-state barrier in this replica's log (written at a failover here or
     * replicated), or empty if the log holds none that this replica applied.
     */
    OptionalLong latestProducerStateBarrier() {
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
    void recoverProducerStateBarrier(boolean afterCrash) throws IOException {
        p.lock().writeLock().lock();
        try {
            ProducerStateReset.recoverAfterLoad(log_, afterCrash, p.logPrefix()).ifPresent(b -> latestBarrier = b);
        } finally {
            p.lock().writeLock().unlock();
        }
    }

    /**
     * Appends replicated batches (from the leader, or from the source cluster), stopping at every producer-state
     * barrier to apply it before the batches after it: those are this cluster's own producers, whose ids may equal
     * the forgotten ones. Integer.MAX_VALUE: appendAsFollower skips batches whose epoch is above the one given
     * (KAFKA-18723), and a replica must take every batch.
     */
    void appendAsFollowerThroughBarriers(MemoryRecords records) throws IOException {
        ByteBuffer buffer = records.buffer();
        int start = buffer.position();
        int position = start;
        for (RecordBatch batch : records.batches()) {
            position += batch.sizeInBytes();
            if (ProducerStateBarrier.isBarrier(batch)) {
                long barrierOffset = batch.baseOffset();
                log_.appendAsFollower(slice(buffer, start, position), Integer.MAX_VALUE);
                ProducerStateReset.apply(log_, barrierOffset, p.logPrefix());
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
}
