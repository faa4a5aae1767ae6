package io.twinlog.mirror.runtime;

import io.twinlog.mirror.MirrorPartitionSink;
import io.twinlog.mirror.partition.PartitionView;

import java.io.IOException;
import java.util.List;

/**
 * A destination partition as the mirror runtime acts on it: what the fetcher appends to ({@link MirrorPartitionSink})
 * plus the state machine's view and the cuts and markers its actions ask for. The broker implements it on its
 * replicated partition; keeping it an interface is what lets the runtime live outside the server.
 */
public interface MirrorLocalPartition extends MirrorPartitionSink {
    /** The state machine's read-only view: log end, high watermark, epoch history, barrier, replicas, ISR. */
    PartitionView view() throws IOException;

    /** Cuts the log (and its epoch history) back to {@code offset}. */
    void truncateTo(long offset, String reason);

    /** Aborts the transactions left open by source producers; the producer ids whose transactions were aborted. */
    List<Long> abortOpenTransactions(long nowMs) throws IOException;

    /** Writes the producer-state barrier (failover); its offset. */
    long appendProducerStateBarrier(long nowMs) throws IOException;
}
