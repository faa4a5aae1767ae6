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
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.OptionalLong;

/**
 * Applies a {@link ProducerStateBarrier} to one replica's log, durably.
 *
 * <p>Applying: the producer state is emptied as of the offset after the barrier and an (empty) producer snapshot
 * is written there, synced, so Kafka's own reloads (truncation, restart) start from it.
 *
 * <p>Why a marker file as well: Kafka's log recovery after a crash rebuilds producer state by replaying batches
 * from an older snapshot, knows nothing of barriers, and snapshots what it rebuilt. So before a replica appends a
 * barrier it records the barrier's offset in {@value #MARKER_FILE} in the partition directory (synced, replaced
 * atomically); when the log is opened again, {@link #recoverAfterLoad} checks whether the reloaded producer state
 * still holds anything from before that barrier and, if so, applies it again and replays only the batches after
 * it. The marker holds the latest barrier: clearing there also clears what earlier barriers cleared.
 *
 * <p>Threading: called with the partition's leadership write lock or from the one thread that appends to the
 * replica (follower or mirror fetcher), so no append races the reset; Kafka's periodic producer-expiration task
 * may run concurrently and at worst fails one run.
 */
final class ProducerStateReset {
    static final String MARKER_FILE = "twinlog-producer-state-barrier";
    private static final Logger log = LoggerFactory.getLogger(ProducerStateReset.class);

    private ProducerStateReset() {
    }

    /** Records, durably, that a barrier is about to be appended at {@code barrierOffset}. */
    static void recordBeforeAppend(UnifiedLog log, long barrierOffset) throws IOException {
        Path marker = log.dir().toPath().resolve(MARKER_FILE);
        Path temporary = log.dir().toPath().resolve(MARKER_FILE + ".tmp");
        try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            channel.write(ByteBuffer.wrap((barrierOffset + "\n").getBytes(StandardCharsets.UTF_8)));
            channel.force(true);
        }
        Files.move(temporary, marker, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Empties the producer state as of the offset after the barrier at {@code barrierOffset}. */
    static void apply(UnifiedLog log, long barrierOffset, String logPrefix) throws IOException {
        ProducerStateManager producers = log.producerStateManager();
        int forgotten = producers.activeProducers().size();
        long from = Math.max(barrierOffset + 1, log.logStartOffset());
        producers.truncateFullyAndStartAt(from);
        producers.takeSnapshot(true);
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
     * After the log was loaded (broker start): if it holds the barrier recorded in the marker and its producer
     * state still knows producers from before it (Kafka's recovery replayed across it), applies it again.
     *
     * @return true if the barrier was applied again
     */
    static boolean recoverAfterLoad(UnifiedLog log, String logPrefix) throws IOException {
        OptionalLong held = latestBarrier(log);
        if (held.isEmpty()) {
            return false;
        }
        long barrierOffset = held.getAsLong();
        boolean stale = false;
        for (ProducerStateEntry entry : log.producerStateManager().activeProducers().values()) {
            if (entry.firstDataOffset() < barrierOffset
                    || (entry.currentTxnFirstOffset().isPresent() && entry.currentTxnFirstOffset().getAsLong() < barrierOffset)) {
                stale = true;
                break;
            }
        }
        if (!stale) {
            return false;
        }
        ProducerStateReset.log.info("{}The reloaded producer state holds producers from before the barrier at "
                + "offset {} (recovery replayed across it); applying it again", logPrefix, barrierOffset);
        apply(log, barrierOffset, logPrefix);
        return true;
    }

    /**
     * The offset of the latest barrier this replica applied, if its log still holds it there: empty when there was
     * none, or it was truncated away (it will be fetched again) or the marker is from an older history.
     */
    static OptionalLong latestBarrier(UnifiedLog log) throws IOException {
        OptionalLong recorded = recordedBarrier(log);
        if (recorded.isEmpty()) {
            return recorded;
        }
        long offset = recorded.getAsLong();
        if (offset < log.logStartOffset() || offset >= log.logEndOffset() || !holdsBarrierAt(log, offset)) {
            return OptionalLong.empty();
        }
        return recorded;
    }

    private static OptionalLong recordedBarrier(UnifiedLog log) throws IOException {
        Path marker = log.dir().toPath().resolve(MARKER_FILE);
        if (!Files.exists(marker)) {
            return OptionalLong.empty();
        }
        String text = Files.readString(marker, StandardCharsets.UTF_8).trim();
        try {
            return OptionalLong.of(Long.parseLong(text));
        } catch (NumberFormatException e) {
            throw new IOException("Corrupt producer-state barrier marker " + marker + ": '" + text + "'", e);
        }
    }

    private static boolean holdsBarrierAt(UnifiedLog log, long offset) throws IOException {
        FetchDataInfo info = log.read(offset, 1, FetchIsolation.LOG_END, true);
        Iterator<? extends RecordBatch> batches = info.records.batches().iterator();
        if (!batches.hasNext()) {
            return false;
        }
        RecordBatch batch = batches.next();
        return batch.baseOffset() == offset && ProducerStateBarrier.isBarrier(batch);
    }
}
