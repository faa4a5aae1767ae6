package io.twinlog.mirror.runtime;

import io.twinlog.mirror.MirrorPartitionSink;
import io.twinlog.mirror.partition.PartitionView;
import io.twinlog.mirror.partition.TimeCut;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;

import java.io.IOException;
import java.util.List;

/**
 * A destination partition as the mirror runtime acts on it: what the fetcher appends to ({@link MirrorPartitionSink})
 * plus the state machine's view and the cuts and markers its actions ask for. The broker implements it on its
 * replicated partition; keeping it an interface is what lets the runtime live outside the server.
 */
public interface MirrorLocalPartition extends MirrorPartitionSink {
    /** Bytes per read of {@link #timeCut}: headers are what is read, so the size only bounds a slice. */
    int TIME_CUT_READ_BYTES = 1 << 20;

    /**
     * The state machine's read-only view of the local partition: log end, high watermark, epoch history, barrier,
     * replicas, ISR, followers' positions and min.insync.replicas (the cluster's part is added by the runtime).
     */
    PartitionView view() throws IOException;

    /**
     * Applies the partition-wide truncation point {@code id} to this replica (once): cuts the log to {@code offset},
     * or empties it and starts it there when that is below the log start, and records the id next to the log.
     */
    void applyTruncationPoint(long id, long offset, String reason) throws IOException;

    /** The log's batches from {@code offset} (at least one batch, up to about {@code maxBytes}). */
    Records read(long offset, int maxBytes) throws IOException;

    /**
     * Where a search for the cut of the point in time {@code atMs} may start reading: no batch before it has a max
     * timestamp after {@code atMs}, or it is the log start. The log start here; a log with a time index finds a
     * later start (the result is the same, the read shorter).
     */
    default long timeSearchStart(long atMs) throws IOException {
        return logStartOffset();
    }

    /**
     * Where a failover to the point in time {@code atMs} cuts this log now ({@link TimeCut}): its batches read from
     * {@link #timeSearchStart} up to the first one after the time (headers only; what follows is quarantined by
     * offsets, not read), plus the batch before the first one read when none of those is kept. The one reading of the
     * cut, for the failover and its dry run: bounded by the cut, not by the log end.
     */
    default TimeCut timeCut(long atMs) throws IOException {
        long end = logEndOffset();
        long start = Math.max(logStartOffset(), timeSearchStart(atMs));
        TimeCut.Scan scan = new TimeCut.Scan(atMs);
        long offset = start;
        long firstBase = -1L;
        while (offset < end && !scan.pastCut()) {
            long next = offset;
            for (RecordBatch batch : read(offset, TIME_CUT_READ_BYTES).batches()) {
                if (batch.baseOffset() >= end || scan.pastCut()) {
                    break;
                }
                firstBase = firstBase < 0 ? batch.baseOffset() : firstBase;
                scan.accept(batch);
                next = batch.nextOffset();
            }
            if (next == offset) {
                break; // nothing more to read (a concurrent cut)
            }
            offset = next;
        }
        long before = -1L;
        if (!scan.keptAny() && firstBase > logStartOffset()) {
            for (RecordBatch batch : read(firstBase - 1, 1).batches()) {
                if (batch.baseOffset() < firstBase) {
                    before = batch.maxTimestamp();
                }
                break;
            }
        }
        return scan.result(end, before);
    }

    /** Aborts the transactions left open by source producers; the producer ids whose transactions were aborted. */
    List<Long> abortOpenTransactions(long nowMs) throws IOException;

    /** Writes the producer-state barrier (failover); its offset. */
    long appendProducerStateBarrier(long nowMs) throws IOException;
}
