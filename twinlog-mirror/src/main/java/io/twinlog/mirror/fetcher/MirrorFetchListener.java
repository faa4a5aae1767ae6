package io.twinlog.mirror.fetcher;

import org.apache.kafka.common.TopicPartition;

/** What the mirror fetcher reports to the mirror manager, which owns the partition state machine. */
public interface MirrorFetchListener {
    /** A fetched batch carries a source epoch at or above the local leader epoch: fence before appending it. */
    void onEpochFencingNeeded(TopicPartition partition, int sourceEpoch);

    /** Progress, for lag reporting. */
    void onProgress(TopicPartition partition, long sourceHighWatermark, long localLogEndOffset);

    /**
     * The source no longer holds what this cluster mirrored: its epoch {@code sourceEpoch} ends at
     * {@code sourceEndOffset} (-1 for either: no common epoch). The fetcher stopped fetching the partition.
     */
    void onSourceDiverged(TopicPartition partition, int sourceEpoch, long sourceEndOffset, String reason);

    /** The partition cannot be mirrored now; {@code retriable} when the cause may pass (source unreachable). */
    void onFailure(TopicPartition partition, String reason, boolean retriable);
}
