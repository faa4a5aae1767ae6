package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorAdmin.PointInTimeResult;
import io.twinlog.clients.mirror.MirrorException;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * {@code --stop --at TIMESTAMP|common} (issue 30 points 2 and 3): a failover to a point in time. Each selected
 * partition keeps what it mirrored up to its last batch at or before the time; what it mirrored after is cut on every
 * replica, kept in the quarantine. A partition not there yet mirrors on for up to {@code --timeout-ms} while the
 * source answers. Prints the time, then per partition what was kept, quarantined, or not reached.
 */
public final class PointInTimeFailover implements MirrorAction {
    /** {@code --at common}: the oldest mirrored-up-to time of the selected partitions at the call. */
    static final String COMMON = "common";

    private final String mirror;
    private final List<String> topicPatterns;
    /** The time asked for; empty for {@code common}. */
    private final OptionalLong atMs;
    private final long timeoutMs;

    public PointInTimeFailover(String mirror, List<String> topicPatterns, OptionalLong atMs, long timeoutMs) {
        this.mirror = mirror;
        this.topicPatterns = List.copyOf(topicPatterns);
        this.atMs = atMs;
        this.timeoutMs = timeoutMs;
    }

    /**
     * {@code --at}'s value: epoch milliseconds, an ISO-8601 instant ({@code 2026-12-07T10:14:00Z}) or date-time with
     * an offset ({@code 2026-12-07T11:14:00+01:00}), or {@code common} (empty). A time without a zone is refused: it
     * would be read in whatever zone the operator's machine is in.
     */
    public static OptionalLong parseAt(String value) {
        String v = value.trim();
        if (v.equalsIgnoreCase(COMMON)) {
            return OptionalLong.empty();
        }
        if (v.matches("[0-9]{1,18}")) {
            return OptionalLong.of(Long.parseLong(v));
        }
        try {
            return OptionalLong.of(OffsetDateTime.parse(v).toInstant().toEpochMilli());
        } catch (DateTimeParseException e) {
            throw CommandException.usage("--at takes epoch milliseconds, an ISO-8601 time with a zone (such as "
                    + "2026-12-07T10:14:00Z or 2026-12-07T11:14:00+01:00) or 'common', but got '" + value + "'");
        }
    }

    public String mirror() {
        return mirror;
    }

    public OptionalLong atMs() {
        return atMs;
    }

    /** How long the stop's answer may take: the wait for the time, then the failover itself. */
    public long answerTimeoutMs() {
        return timeoutMs + 60_000L;
    }

    @Override
    public void run(MirrorAdmin admin, PrintWriter out) throws IOException {
        long at = atMs.orElseThrow(() -> CommandException.failed("--at common is not available yet"));
        out.println("Mirror " + mirror + ": failing over topics matching " + topicPatterns + " to " + time(at) + " ("
                + at + "); partitions not mirrored up to it yet mirror on for up to " + timeoutMs + " ms.");
        out.flush();
        MirrorAdmin.PointInTimeStopResult result = admin.stopMirrorTopicsAt(mirror,
                MirrorTopicsAction.names(topicPatterns), MirrorTopicsAction.patterns(topicPatterns), at, timeoutMs);
        for (PointInTimeResult p : result.partitions()) {
            out.println("  " + line(p));
        }
        Map<String, MirrorException> errors = result.errors();
        if (errors.isEmpty()) {
            out.println("Mirror " + mirror + ": topics matching " + topicPatterns + " stopped (failed over, writable).");
            return;
        }
        Map.Entry<String, MirrorException> first = errors.entrySet().iterator().next();
        throw CommandException.failed(errors.size() + " topic(s) failed, first: " + first.getKey() + ": "
                + first.getValue().getMessage());
    }

    /** One partition's outcome, as the operator reads it. */
    static String line(PointInTimeResult p) {
        StringBuilder b = new StringBuilder(p.topic() + "-" + p.partition() + ": ");
        String shortOf = switch (p.reach()) {
            case "SOURCE_UNREACHABLE" -> "the source did not answer";
            case "TIMED_OUT" -> "the timeout passed";
            case "NOT_MIRRORING" -> "it was not mirroring";
            default -> "";
        };
        if (!shortOf.isEmpty()) {
            b.append("not reached (").append(shortOf).append("): stopped short of the time at ")
                    .append(p.keptTimestamp() < 0 ? "no record" : time(p.keptTimestamp())).append("; ");
        }
        if (p.keptOffset() < 0) {
            b.append("failover still in progress");
        } else {
            b.append("kept up to offset ").append(p.keptOffset()).append(" (newest kept batch ")
                    .append(p.keptTimestamp() < 0 ? "none" : time(p.keptTimestamp())).append(")");
        }
        if (p.quarantinedFrom() >= 0) {
            b.append(", quarantined ").append(p.quarantinedRecords()).append(" records, offsets [")
                    .append(p.quarantinedFrom()).append(",").append(p.quarantinedTo()).append(")");
        } else if (p.keptOffset() >= 0) {
            b.append(", nothing after the time to quarantine");
        }
        return b.toString();
    }

    static String time(long ms) {
        return Instant.ofEpochMilli(ms).toString();
    }
}
