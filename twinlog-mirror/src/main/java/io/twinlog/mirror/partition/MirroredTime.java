package io.twinlog.mirror.partition;

/**
 * How far back in time a mirror partition holds everything its source had (issue 30 point 1, decision 122): what
 * {@code --describe}, the {@code RpoSeconds} gauges, the dashboard and {@code --stop --at common} report. Pure.
 *
 * <ul>
 *   <li><b>newest mirrored timestamp</b>: the max timestamp of the last batch (by offset) the partition holds from
 *       the source; -1 when it holds none or it is not known.</li>
 *   <li><b>mirrored-up-to time</b>: the newest mirrored timestamp; but when the partition's last fetch found it
 *       caught up with the source (its log end reached the source's high watermark), the destination-clock time
 *       that fetch was sent, if later: an idle source partition that is fully copied has lost nothing older than
 *       that fetch, so its RPO does not grow with the idleness (decision 122). -1 when not known.</li>
 *   <li><b>RPO</b>: now minus the mirrored-up-to time, at least 0; -1 when that is unknown.</li>
 * </ul>
 * The send time of the fetch, not its answer's, stands for "caught up": the source's high watermark was read after
 * the request left, so the figure errs on the side of a larger RPO.
 *
 * @param newestTimestamp the newest mirrored timestamp (ms since the epoch), or -1
 * @param mirroredUpToMs  the mirrored-up-to time (ms since the epoch, destination clock), or -1
 */
public record MirroredTime(long newestTimestamp, long mirroredUpToMs) {
    public static final MirroredTime UNKNOWN = new MirroredTime(-1L, -1L);

    public MirroredTime {
        newestTimestamp = Math.max(-1L, newestTimestamp);
        mirroredUpToMs = Math.max(-1L, mirroredUpToMs);
    }

    /**
     * What a leader knows from its own log before its first fetch (a new leader, a restart, the return to
     * MIRRORING after a cut): the max timestamp of its log's last batch; nothing says yet that it is caught up.
     */
    public static MirroredTime fromLog(long lastBatchMaxTimestamp) {
        return new MirroredTime(lastBatchMaxTimestamp, lastBatchMaxTimestamp);
    }

    /**
     * After a fetch answer for the partition (or an incremental fetch session's silence about a partition that
     * was caught up, which says that nothing changed).
     *
     * @param appendedNewestTimestamp the max timestamp of the last batch appended from the answer; negative when
     *                                nothing was appended (the newest mirrored timestamp stays)
     * @param caughtUpAtMs            when that fetch was sent, if after it the log end reached the source's high
     *                                watermark; negative when it did not
     */
    public MirroredTime afterFetch(long appendedNewestTimestamp, long caughtUpAtMs) {
        long newest = appendedNewestTimestamp >= 0 ? appendedNewestTimestamp : newestTimestamp;
        long upTo = caughtUpAtMs >= 0 ? Math.max(newest, caughtUpAtMs) : newest;
        return newest == newestTimestamp && upTo == mirroredUpToMs ? this : new MirroredTime(newest, upTo);
    }

    /** The RPO of a failover at {@code nowMs} in milliseconds, or -1 when the mirrored-up-to time is unknown. */
    public long rpoMs(long nowMs) {
        return rpoMs(mirroredUpToMs, nowMs);
    }

    /** {@link #rpoMs(long)} of a mirrored-up-to time as recorded (describe answers from the record). */
    public static long rpoMs(long mirroredUpToMs, long nowMs) {
        return mirroredUpToMs < 0 ? -1L : Math.max(0L, nowMs - mirroredUpToMs);
    }
}
