package io.twinlog.common.mirror;

import java.util.Collection;
import java.util.List;
import java.util.OptionalLong;

/**
 * The truncation points decided for every replica of a partition (a mirror partition's, decision 38), oldest first.
 * A replica applies those it has not applied yet, once, before it serves as leader or follower: it cuts its log to
 * the lowest of their offsets (a replica away through several truncations holds records each of them removed), and
 * records their ids next to its log among the last ones it applied (the replication layer's
 * {@code Partition.applyTruncationPoints}).
 */
public record TruncationPoints(List<Point> points, String reason) {
    public TruncationPoints {
        points = List.copyOf(points);
    }

    /** One truncation point: its id (never 0) and the offset every replica keeps the records below. */
    public record Point(long id, long offset) {
    }

    public long latestId() {
        return points.isEmpty() ? 0L : points.get(points.size() - 1).id();
    }

    /**
     * The points a replica that applied the points {@code appliedIds} has still to apply: those after the newest
     * listed one it applied; all of them if it applied none that is listed (it never applied one, or the record was
     * recreated with fresh ids). A replica that applied a point newer than this list (a leader cuts before it
     * records, decision 38, so its metadata thread can see the previous record after the cut) still finds the
     * list's points among those it applied, and has nothing to apply: never a cut to an older point again
     * (decision 125).
     */
    public List<Point> toApply(Collection<Long> appliedIds) {
        for (int i = points.size() - 1; i >= 0; i--) {
            if (appliedIds.contains(points.get(i).id())) {
                return points.subList(i + 1, points.size());
            }
        }
        return points;
    }

    /** Where a replica that applied {@code appliedIds} must cut: the lowest offset of {@link #toApply}, if any. */
    public OptionalLong cutFor(Collection<Long> appliedIds) {
        List<Point> due = toApply(appliedIds);
        if (due.isEmpty()) {
            return OptionalLong.empty();
        }
        long cut = Long.MAX_VALUE;
        for (Point p : due) {
            cut = Math.min(cut, p.offset());
        }
        return OptionalLong.of(cut);
    }
}
