package io.twinlog.common.mirror;

import java.util.List;
import java.util.OptionalLong;

/**
 * The truncation points decided for every replica of a partition (a mirror partition's, decision 38), oldest first.
 * A replica applies those it has not applied yet, once, before it serves as leader or follower: it cuts its log to
 * the lowest of their offsets (a replica away through several truncations holds records each of them removed), and
 * records the latest id next to its log (the replication layer's {@code Partition.applyTruncationPoints}).
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
     * Where a replica that last applied {@code appliedId} must cut: the lowest offset of the points after it, all
     * of them if it applied none that is listed; empty when it applied the latest (or there is none).
     */
    public OptionalLong cutFor(OptionalLong appliedId) {
        if (points.isEmpty() || (appliedId.isPresent() && appliedId.getAsLong() == latestId())) {
            return OptionalLong.empty();
        }
        int from = 0;
        if (appliedId.isPresent()) {
            for (int i = 0; i < points.size(); i++) {
                if (points.get(i).id() == appliedId.getAsLong()) {
                    from = i + 1;
                }
            }
        }
        long cut = Long.MAX_VALUE;
        for (Point p : points.subList(from, points.size())) {
            cut = Math.min(cut, p.offset());
        }
        return OptionalLong.of(cut);
    }
}
