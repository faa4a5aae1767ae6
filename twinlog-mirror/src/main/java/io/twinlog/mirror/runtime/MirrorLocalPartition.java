package io.twinlog.mirror.runtime;

import io.twinlog.mirror.MirrorPartitionSink;
import io.twinlog.mirror.partition.PartitionView;
import org.apache.kafka.common.record.internal.Records;

import java.io.IOException;
import java.util.List;

/**
 * A destination partition as the mirror runtime acts on it: what the fetcher appends to ({@link MirrorPartitionSink})
 * plus the state machine's view and the cuts and markers its actions ask for. The broker implements it on its
 * replicated partition; keeping it an interface is what lets the runtime live outside the server.
 */
public interface MirrorLocalPartition extends MirrorPartitionSink {
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

    /** Aborts the transactions left open by source producers; the producer ids whose transactions were aborted. */
    List<Long> abortOpenTransactions(long nowMs) throws IOException;

    /** Writes the producer-state barrier (failover); its offset. */
    long appendProducerStateBarrier(long nowMs) throws IOException;
}
