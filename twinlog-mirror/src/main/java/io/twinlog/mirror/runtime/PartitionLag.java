package io.twinlog.mirror.runtime;

/**
 * How far a mirror partition's log is behind its source, in records, bytes and time: pure functions of what the
 * mirror fetcher last saw (docs/operations.md, "Mirror metrics"). {@link #UNKNOWN} ({@code -1}) stands for "not
 * known": a lag of 0 says a failover now would lose nothing, so it is reported only when that is known.
 *
 * <ul>
 *   <li><b>records</b>: the source's high watermark (from its last fetch response) minus this log's end offset, at
 *       least 0; unknown while the source's high watermark is (nothing fetched since this broker took the
 *       partition: a new leader, a restart, while the source does not answer).</li>
 *   <li><b>bytes</b>: an estimate, the lag in records times the average size per offset of what this broker has
 *       mirrored of the partition (bytes appended over offsets appended, batch headers included); 0 when caught up;
 *       unknown when the lag in records is, or when there is a lag but nothing was mirrored to estimate it from.</li>
 *   <li><b>time</b>: the RPO a failover would cost now, 0 when caught up; otherwise the source's newest record
 *       timestamp (ListOffsets max timestamp, looked up when the partition falls behind and every few seconds while
 *       it stays behind) minus the max timestamp of the newest batch mirrored, at least 0. From a source that cannot
 *       say ({@link #UNAVAILABLE}: before ListOffsets v7), the age of the newest batch mirrored ({@code now} minus
 *       its max timestamp), an upper bound while the source is being written to. Unknown when the lag in records
 *       is, and while behind before this broker mirrored a batch of the partition or before the source's first
 *       answer (one round trip while it answers): neither is known to be caught up.</li>
 * </ul>
 */
final class PartitionLag {
    /** A lag that is not known. */
    static final long UNKNOWN = -1;
    /** The source's newest timestamp was not asked for yet. */
    static final long NOT_ASKED = -1;
    /** The source could not say what its newest timestamp is. */
    static final long UNAVAILABLE = -2;

    private PartitionLag() {
    }

    /** @param sourceHighWatermark the source's as last fetched; negative before the first fetch response */
    static long records(long sourceHighWatermark, long logEndOffset) {
        return sourceHighWatermark < 0 ? UNKNOWN : Math.max(0, sourceHighWatermark - logEndOffset);
    }

    static long bytes(long lagRecords, long bytesMirrored, long offsetsMirrored) {
        if (lagRecords <= 0) {
            return lagRecords; // caught up, or unknown
        }
        if (bytesMirrored <= 0 || offsetsMirrored <= 0) {
            return UNKNOWN;
        }
        double perOffset = (double) bytesMirrored / offsetsMirrored;
        return (long) Math.ceil(lagRecords * perOffset);
    }

    static long millis(long lagRecords, long sourceNewestTimestamp, long mirroredNewestTimestamp, long nowMs) {
        if (lagRecords <= 0) {
            return lagRecords; // caught up, or unknown
        }
        if (mirroredNewestTimestamp < 0 || sourceNewestTimestamp == NOT_ASKED) {
            return UNKNOWN;
        }
        if (sourceNewestTimestamp == UNAVAILABLE) {
            return Math.max(0, nowMs - mirroredNewestTimestamp);
        }
        return Math.max(0, sourceNewestTimestamp - mirroredNewestTimestamp);
    }

    /** A lag in milliseconds as a gauge's seconds: {@link #UNKNOWN} stays -1 (not -0.001). */
    static double seconds(long millis) {
        return millis < 0 ? UNKNOWN : millis / 1000.0;
    }
}
