package io.twinlog.common.mirror;

import java.util.Map;
import java.util.Optional;

/**
 * A failover to a point in time (issue 30 point 2): each partition of the topic keeps what it mirrored up to the last
 * batch whose max timestamp is at or before {@code atMs}, and waits for that point at most until {@code deadlineMs}
 * (the destination's clock). Carried durably with the desired state STOPPED in {@code /mirrors/<m>/topics/<t>}
 * ({@code "stopAtMs"}, {@code "stopDeadlineMs"}), so a new leader continues the same cut.
 */
public record PointInTimeStop(long atMs, long deadlineMs) {
    static final String AT = "stopAtMs";
    static final String DEADLINE = "stopDeadlineMs";

    /** The stop the desired-state document carries, if any (a plain stop has neither field). */
    public static Optional<PointInTimeStop> fromJson(Map<String, Object> json) {
        if (json.get(AT) instanceof Number at) {
            return Optional.of(new PointInTimeStop(at.longValue(),
                    json.get(DEADLINE) instanceof Number d ? d.longValue() : at.longValue()));
        }
        return Optional.empty();
    }

    /** Adds this stop's fields to a desired-state document. */
    public void addTo(Map<String, Object> json) {
        json.put(AT, atMs);
        json.put(DEADLINE, deadlineMs);
    }
}
