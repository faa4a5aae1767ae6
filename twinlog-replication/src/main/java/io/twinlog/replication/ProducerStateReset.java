package io.twinlog.replication;

import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.ProducerStateEntry;
import org.apache.kafka.storage.internals.log.ProducerStateManager;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.OptionalLong;

/**
 * Applies a {@link ProducerStateBarrier} to one replica's log, and again after a crash that replayed across it.
 *
 * <p>Applying: the producer state is emptied as of the offset after the barrier and an (empty) producer snapshot
 * is written there, so Kafka's own reloads (truncation, restart) start from it. Nothing is synced: the barrier
 * batch in the log is the durable record.
 *
 * <p>After a crash: Kafka's log recovery rebuilds producer state by replaying batches from an older snapshot (the
 * barrier's own may not have reached the disk), knows nothing of barriers, and so may bring back producers from
 * before one. {@link #recoverAfterLoad} looks for the latest barrier after the oldest batch the reloaded state still
 * remembers and, if there is one, applies it again. After a clean shutdown Kafka reloads the snapshot it wrote at
 * close, taken with every barrier applied, and nothing is read. (Until 2026-12 a marker file recorded each barrier,
 * written and synced before the append: a failover of a thousand partitions paid three thousand syncs for it.)
 *
 * <p>Threading: called with the partition's leadership write lock or from the one thread that appends to the
 * replica (follower or mirror fetcher), so no append races the reset; Kafka's periodic producer-expiration task
 * may run concurrently and at worst fails one run.
 */
final class ProducerStateReset {
    private static final Logger log = LoggerFactory.getLogger(ProducerStateReset.class);
    /** How much of the log one read of the post-crash scan takes (batch headers are read, not records). */
    private static final int SCAN_CHUNK_BYTES = 1 << 20;

    private ProducerStateReset() {
    }

    /** Empties the producer state as of the offset after the barrier at {@code barrierOffset}. */
    static void apply(UnifiedLog log, long barrierOffset, String logPrefix) throws IOException {
        ProducerStateManager producers = log.producerStateManager();
        int forgotten = producers.activeProducers().size();
        long from = Math.max(barrierOffset + 1, log.logStartOffset());
        producers.truncateFullyAndStartAt(from);
        producers.takeSnapshot(false);
        if (log.logEndOffset() > from) {
            // batches after the barrier (only when applying it again after a restart): replay them under the log's
            // own lock. Kafka's loadProducerState also moves the high watermark to the log end, which would count
            // records not yet replicated, so the high watermark is put back.
            long highWatermark = log.highWatermark();
            log.loadProducerState(log.logEndOffset());
            log.updateHighWatermark(highWatermark);
        }
        // on a live append nothing follows the barrier yet, and the source's ABORT markers before it left no open
        // transaction, so the log's first unstable offset is already right
        ProducerStateReset.log.info("{}Applied the producer-state barrier at offset {}: forgot {} producers copied "
                        + "before it; {} producers known after it", logPrefix, barrierOffset, forgotten,
                log.producerStateManager().activeProducers().size());
    }

    /**
     * After the log was loaded (broker start): if Kafka's recovery replayed across a barrier, so that the producer
     * state knows producers from before it, applies it again.
     *
     * @param afterCrash whether the log was loaded without a clean shutdown (Kafka then replays from an older
     *                   snapshot); after a clean one the state is the one snapshotted at close and nothing is read
     * @return the barrier found after the oldest batch the reloaded state remembers, if any (applied again)
     */
    static OptionalLong recoverAfterLoad(UnifiedLog log, boolean afterCrash, String logPrefix) throws IOException {
        if (!afterCrash) {
            return OptionalLong.empty();
        }
        OptionalLong oldest = oldestRemembered(log);
        if (oldest.isEmpty()) {
            return OptionalLong.empty(); // no producer known: nothing a barrier could have to clear
        }
        OptionalLong barrier = latestBarrierFrom(log, Math.max(oldest.getAsLong(), log.logStartOffset()));
        if (barrier.isPresent()) {
            ProducerStateReset.log.info("{}The reloaded producer state holds producers from before the barrier at "
                    + "offset {} (recovery replayed across it); applying it again", logPrefix, barrier.getAsLong());
            apply(log, barrier.getAsLong(), logPrefix);
        }
        return barrier;
    }

    /** The first offset of the oldest batch (or open transaction) any known producer still has in its state. */
    private static OptionalLong oldestRemembered(UnifiedLog log) {
        long oldest = Long.MAX_VALUE;
        for (ProducerStateEntry entry : log.producerStateManager().activeProducers().values()) {
            if (entry.firstDataOffset() >= 0) {
                oldest = Math.min(oldest, entry.firstDataOffset());
            }
            if (entry.currentTxnFirstOffset().isPresent()) {
                oldest = Math.min(oldest, entry.currentTxnFirstOffset().getAsLong());
            }
        }
        return oldest == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(oldest);
    }

    /** The offset of the last barrier batch at or after {@code from}, reading batch headers to the log end. */
    static OptionalLong latestBarrierFrom(UnifiedLog log, long from) throws IOException {
        OptionalLong found = OptionalLong.empty();
        long offset = from;
        long end = log.logEndOffset();
        while (offset < end) {
            FetchDataInfo info = log.read(offset, SCAN_CHUNK_BYTES, FetchIsolation.LOG_END, true);
            long next = offset;
            for (RecordBatch batch : info.records.batches()) {
                if (batch.lastOffset() >= from && ProducerStateBarrier.isBarrier(batch)) {
                    found = OptionalLong.of(batch.baseOffset());
                }
                next = batch.nextOffset();
            }
            if (next <= offset) {
                break; // nothing more could be read
            }
            offset = next;
        }
        return found;
    }
}
