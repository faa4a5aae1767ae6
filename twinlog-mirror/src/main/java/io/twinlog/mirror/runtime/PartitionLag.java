package io.twinlog.mirror.runtime;

/**
 * How far a mirror partition's log is behind its source, in records, bytes and time: pure functions of what the
 * mirror fetcher last saw (docs/operations.md, "Mirror metrics"). {@code -1} stands for "not known".
 *
 * <ul>
 *   <li><b>records</b>: the source's high watermark (from its last fetch response) minus this log's end offset; 0
 *       while the source's high watermark is not known yet.</li>
 *   <li><b>bytes</b>: an estimate, the lag in records times the average size per offset of what this broker has
 *       mirrored of the partition (bytes appended over offsets appended, batch headers included); 0 before anything
 *       was mirrored.</li>
 *   <li><b>time</b>: the RPO a failover would cost now, 0 when caught up; otherwise the source's newest record
 *       timestamp (ListOffsets max timestamp, looked up when the partition falls behind and every few seconds while
 *       it stays behind) minus the max timestamp of the newest batch mirrored, at least 0. From a source that cannot
 *       say ({@link #UNAVAILABLE}: before ListOffsets v7), the age of the newest batch mirrored ({@code now} minus
 *       its max timestamp), an upper bound while the source is being written to. 0 before anything was mirrored,
 *       and during the one round trip before the source's first answer.</li>
 * </ul>
 */
final class PartitionLag {
    /** The source's newest timestamp was not asked for yet. */
    static final long NOT_ASKED = -1;
    /** The source could not say what its newest timestamp is. */
    static final long UNAVAILABLE = -2;

    private PartitionLag() {
    }

    static long records(long sourceHighWatermark, long logEndOffset) {
        return sourceHighWatermark < 0 ? 0 : Math.max(0, sourceHighWatermark - logEndOffset);
    }

    static long bytes(long lagRecords, long bytesMirrored, long offsetsMirrored) {
        if (lagRecords <= 0 || bytesMirrored <= 0 || offsetsMirrored <= 0) {
            return 0;
        }
        double perOffset = (double) bytesMirrored / offsetsMirrored;
        return (long) Math.ceil(lagRecords * perOffset);
    }

    static long millis(long lagRecords, long sourceNewestTimestamp, long mirroredNewestTimestamp, long nowMs) {
        if (lagRecords <= 0 || mirroredNewestTimestamp < 0 || sourceNewestTimestamp == NOT_ASKED) {
            return 0;
        }
        if (sourceNewestTimestamp == UNAVAILABLE) {
            return Math.max(0, nowMs - mirroredNewestTimestamp);
        }
        return Math.max(0, sourceNewestTimestamp - mirroredNewestTimestamp);
    }
}
