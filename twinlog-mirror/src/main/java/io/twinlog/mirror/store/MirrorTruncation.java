package io.twinlog.mirror.store;

import io.twinlog.common.mirror.TruncationPoints;
import io.twinlog.common.mirror.TruncationPoints.Point;

import java.util.ArrayList;
import java.util.List;

/**
 * The partition-wide truncation points of a mirror partition (issue 12; decision 38), oldest first: where every
 * replica's log is cut when the partition (re)starts mirroring, each decided once by the leader in LOG_TRUNCATION.
 * They stay in the partition's record, so a replica that was away through several applies them all (the lowest
 * offset among those it missed) when it returns, before it serves.
 *
 * @param points   the truncation points, oldest first (empty: none yet)
 * @param complete the latest is no longer awaited: the replicas that had to take part applied it and caught up, or
 *                 a new start superseded it (a replica that missed it still applies it)
 * @param proposed where a source divergence would cut, kept with a partition FAILED for it until the operator
 *                 starts the topic again (-1: none); not a point yet, so no replica applies it
 * @param removed  offsets the leaders' cuts removed so far, all points together (their data records are kept in
 *                 the quarantine topic first)
 * @param consistentFrom the offset from which this partition's records are guaranteed consistent with the other
 *                 cluster's even through unclean elections: the point of the first truncation every assigned replica
 *                 applied with {@code mirror.support.unclean.leader.election}, kept while later ones are too; -1
 *                 (none yet) after one completed without the flag
 */
public record MirrorTruncation(List<Point> points, boolean complete, long proposed, long removed,
                               long consistentFrom) {
    /** No truncation recorded yet. */
    public static final MirrorTruncation NONE = new MirrorTruncation(List.of(), true, -1L, 0L, -1L);

    public MirrorTruncation(List<Point> points, boolean complete) {
        this(points, complete, -1L, 0L, -1L);
    }

    public MirrorTruncation {
        points = List.copyOf(points);
    }

    public boolean isNone() {
        return points.isEmpty();
    }

    /** The latest point; only when not {@link #isNone()}. */
    public Point latest() {
        return points.get(points.size() - 1);
    }

    /** Whether a truncation is recorded and its replicas have not all confirmed it yet. */
    public boolean pending() {
        return !isNone() && !complete;
    }

    /** With {@code next} as the latest point, awaited; the leader's cut to it removes {@code removing} offsets. */
    public MirrorTruncation with(Point next, long removing) {
        List<Point> all = new ArrayList<>(points);
        all.add(next);
        return new MirrorTruncation(all, false, -1L, removed + Math.max(0, removing), consistentFrom);
    }

    /** With {@code offset} proposed (a source divergence that waits for the operator). */
    public MirrorTruncation proposing(long offset) {
        return new MirrorTruncation(points, complete, offset, removed, consistentFrom);
    }

    /** The points as every replica applies them ({@link TruncationPoints#cutFor}). */
    public TruncationPoints toPoints(String reason) {
        return new TruncationPoints(points, reason);
    }

    /** No longer awaited (superseded by a new start). */
    public MirrorTruncation completed() {
        return new MirrorTruncation(points, true, proposed, removed, consistentFrom);
    }

    /**
     * The latest point applied by the replicas that had to: every assigned one ({@code everyReplica}, the flag)
     * makes the records from it on (or from an earlier such point) consistent across clusters; the ISR only does not.
     */
    public MirrorTruncation appliedBy(boolean everyReplica) {
        long from = !everyReplica ? -1L : consistentFrom >= 0 ? consistentFrom : latest().offset();
        return new MirrorTruncation(points, true, proposed, removed, from);
    }
}
