package io.twinlog.mirror.fetcher;

import org.apache.kafka.common.TopicPartition;

/** What the mirror fetcher reports to the mirror manager, which owns the partition state machine. */
public interface MirrorFetchListener {
    /** A fetched batch carries a source epoch at or above the local leader epoch: fence before appending it. */
    void onEpochFencingNeeded(TopicPartition partition, int sourceEpoch);

    /** Progress, for lag reporting. */
    void onProgress(TopicPartition partition, long sourceHighWatermark, long localLogEndOffset);

    /**
     * A fetch answer for the partition was appended (or an incremental session's answer left out a partition that
     * was caught up: nothing changed), for its mirrored-up-to time ({@code MirroredTime}); on the fetch thread.
     *
     * @param appendedNewestTimestamp the max timestamp of the last batch appended, or -1 if none was
     * @param caughtUpAtMs            when the fetch was sent, if after it the log end reached the source's high
     *                                watermark; -1 if it did not
     */
    void onMirrored(TopicPartition partition, long appendedNewestTimestamp, long caughtUpAtMs);

    /**
     * The source no longer holds what this cluster mirrored: its epoch {@code sourceEpoch} ends at
     * {@code sourceEndOffset} (-1 for either: no common epoch). The fetcher stopped fetching the partition.
     */
    void onSourceDiverged(TopicPartition partition, int sourceEpoch, long sourceEndOffset, String reason);

    /** The partition cannot be mirrored now; {@code retriable} when the cause may pass (source unreachable). */
    void onFailure(TopicPartition partition, String reason, boolean retriable);
}
