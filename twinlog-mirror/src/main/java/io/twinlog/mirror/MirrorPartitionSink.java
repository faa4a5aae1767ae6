package io.twinlog.mirror;

import org.apache.kafka.common.record.internal.MemoryRecords;

import java.io.IOException;
import java.util.Optional;

/**
 * What the mirror fetcher needs of the local (destination) partition it feeds: its log position and epochs, and
 * appends that keep the source's offsets and batch epochs. Implemented by the replication layer's partition.
 */
public interface MirrorPartitionSink {
    boolean isLeader();

    int leaderEpoch();

    long logEndOffset();

    long logStartOffset();

    Optional<Integer> latestEpoch();

    /** Appends source batches unchanged (offsets, epochs, CRCs); offset gaps from compaction are kept. */
    void appendMirrored(MemoryRecords records) throws IOException;

    /** Restarts an empty log at the source's log start (source retention moved past us). */
    void truncateFullyAndStartAt(long offset, String reason);
}
