package io.twinlog.mirror.store;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * What a failover to a point in time did to one partition (issue 30 point 2), kept in its state record
 * ({@code "pointInTime"}) so the answer to the stop, describe and a new leader read the same: the time asked for, how
 * far the partition got towards it, where its log was cut and what went to the quarantine.
 *
 * @param atMs               the time asked for (-1: no failover to a point in time)
 * @param reach              why the partition stopped waiting: it reached the time, or stopped short of it
 * @param quarantinedFrom    the cut: the first offset removed (and copied to the quarantine); -1 before the cut
 * @param quarantinedTo      the log end before the cut (the quarantined offsets are [from, to)); -1 before the cut
 * @param quarantinedRecords data records copied to the quarantine and cut; -1: not counted (the offsets say what: a
 *                           count would read every batch header of the tail)
 * @param keptTimestamp      the max timestamp of the last batch kept (-1: none, or not yet decided)
 */
@JsonPropertyOrder({"atMs", "reach", "quarantinedFrom", "quarantinedTo", "quarantinedRecords", "keptTimestamp"})
public record PointInTimeOutcome(@JsonProperty("atMs") long atMs, @JsonProperty("reach") Reach reach,
                                 @JsonProperty("quarantinedFrom") long quarantinedFrom,
                                 @JsonProperty("quarantinedTo") long quarantinedTo,
                                 @JsonProperty("quarantinedRecords") long quarantinedRecords,
                                 @JsonProperty("keptTimestamp") long keptTimestamp) {
    public static final PointInTimeOutcome NONE = new PointInTimeOutcome(-1L, Reach.REACHED, -1L, -1L, 0L, -1L);

    /** Why a partition stopped waiting for the time (and failed over with what it had then). */
    public enum Reach {
        /** It holds a source batch newer than the time, or caught up with the source at a fetch after it. */
        REACHED,
        /** The source did not answer: it stopped at what it had. */
        SOURCE_UNREACHABLE,
        /** The deadline ({@code --timeout-ms}) passed first: it stopped at what it had. */
        TIMED_OUT,
        /** It was not mirroring when asked (paused, failed, truncating): it stopped at what it had. */
        NOT_MIRRORING
    }

    public PointInTimeOutcome {
        reach = reach == null ? Reach.REACHED : reach;
    }

    /** A failover to {@code atMs} that stopped waiting for {@code reach}, before any cut. */
    public static PointInTimeOutcome started(long atMs, Reach reach) {
        return new PointInTimeOutcome(atMs, reach, -1L, -1L, 0L, -1L);
    }

    public boolean isNone() {
        return atMs < 0;
    }

    /** This outcome with the cut decided: offsets [from, to) and their data records go to the quarantine. */
    public PointInTimeOutcome cut(long from, long to, long records, long kept) {
        return new PointInTimeOutcome(atMs, reach, from, to, records, kept);
    }

    /** This outcome with the newest timestamp kept (no cut needed). */
    public PointInTimeOutcome kept(long kept) {
        return new PointInTimeOutcome(atMs, reach, quarantinedFrom, quarantinedTo, quarantinedRecords, kept);
    }
}
