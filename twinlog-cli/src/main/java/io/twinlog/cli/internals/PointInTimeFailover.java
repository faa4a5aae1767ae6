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
import java.util.Optional;
import java.util.OptionalLong;

/**
 * {@code --stop --at TIMESTAMP|common} and {@code --stop --dry-run [--at ...]} (issue 30 points 2, 3 and 4): a
 * failover to a point in time. Each selected partition keeps what it mirrored up to its last batch at or before the
 * time; what it mirrored after is cut on every replica, kept in the quarantine. A partition not there yet mirrors on
 * for up to {@code --timeout-ms} while the source answers. {@code common} is the oldest mirrored-up-to time of the
 * selected partitions at the call. Prints the time, then per partition what was kept, quarantined, or not reached;
 * the dry run prints what a failover now would do ({@link FailoverDryRun}) and changes nothing.
 */
public final class PointInTimeFailover implements MirrorAction {
    /** {@code --at common}: the oldest mirrored-up-to time of the selected partitions at the call. */
    static final String COMMON = "common";

    private final String mirror;
    private final List<String> topicPatterns;
    /** The time asked for; empty for {@code common} (and for a plain dry run, {@code plain}). */
    private final OptionalLong atMs;
    /** A dry run without {@code --at}: what a plain failover would keep. */
    private final boolean plain;
    private final boolean dryRun;
    private final long timeoutMs;
    /** The command's admin client configs: the dry run asks each partition's leader with them. */
    private final Map<String, Object> configs;

    /** {@code --stop --at} (a time, or empty for {@code common}), without {@code --dry-run}. */
    public PointInTimeFailover(String mirror, List<String> topicPatterns, OptionalLong atMs, long timeoutMs) {
        this(mirror, topicPatterns, atMs, false, false, timeoutMs, Map.of());
    }

    private PointInTimeFailover(String mirror, List<String> topicPatterns, OptionalLong atMs, boolean plain,
                                boolean dryRun, long timeoutMs, Map<String, Object> configs) {
        this.mirror = mirror;
        this.topicPatterns = List.copyOf(topicPatterns);
        this.atMs = atMs;
        this.plain = plain;
        this.dryRun = dryRun;
        this.timeoutMs = timeoutMs;
        this.configs = Map.copyOf(configs);
    }

    /** {@code --stop --dry-run}, with {@code --at} ({@code at} present) or without (a plain failover's). */
    public static PointInTimeFailover dryRun(String mirror, List<String> topicPatterns, Optional<OptionalLong> at,
                                             long timeoutMs) {
        return new PointInTimeFailover(mirror, topicPatterns, at.orElse(OptionalLong.empty()), at.isEmpty(), true,
                timeoutMs, Map.of());
    }

    /** This action reaching the cluster with {@code adminConfigs} (the dry run asks each leader). */
    public PointInTimeFailover reading(Map<String, Object> adminConfigs) {
        return new PointInTimeFailover(mirror, topicPatterns, atMs, plain, dryRun, timeoutMs, adminConfigs);
    }

    public boolean isDryRun() {
        return dryRun;
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
        long at = plain ? -1L : atMs.isPresent() ? atMs.getAsLong() : common(admin, out);
        if (dryRun) {
            FailoverDryRun.print(admin, configs, mirror, topicPatterns, at, out);
            return;
        }
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

    /**
     * {@code --at common}: the oldest mirrored-up-to time of the selected partitions now, from describe; printed.
     * A partition whose time is not known yet (it never fetched, or holds nothing) makes it fail: no common time can
     * be promised for it.
     */
    private long common(MirrorAdmin admin, PrintWriter out) throws IOException {
        MirrorAdmin.MirrorDescription d = admin.describeClusterMirrors(List.of(mirror)).get(mirror);
        if (d == null) {
            throw CommandException.failed("No cluster mirror named '" + mirror + "'");
        }
        long oldest = Long.MAX_VALUE;
        String which = null;
        for (MirrorAdmin.TopicDescription t : FailoverDryRun.selected(d, topicPatterns)) {
            for (MirrorAdmin.PartitionDescription p : t.partitions()) {
                if (p.mirroredUpToMs() < 0) {
                    throw CommandException.failed(t.name() + "-" + p.partition() + " has no mirrored-up-to time yet "
                            + "(" + p.state() + "): no common time can be chosen; give --at a time");
                }
                if (p.mirroredUpToMs() < oldest) {
                    oldest = p.mirroredUpToMs();
                    which = t.name() + "-" + p.partition();
                }
            }
        }
        if (which == null) {
            throw CommandException.failed("No topic of mirror " + mirror + " matches " + topicPatterns);
        }
        out.println("Mirror " + mirror + ": the common time is " + time(oldest) + " (" + oldest + "), the oldest "
                + "mirrored-up-to time of the selected partitions (" + which + "'s).");
        return oldest;
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
            b.append(", quarantined ").append(quarantined(p.quarantinedRecords(), p.quarantinedFrom(),
                    p.quarantinedTo()));
        } else if (p.keptOffset() >= 0) {
            b.append(", nothing after the time to quarantine");
        }
        return b.toString();
    }

    /**
     * What went (or would go) to the quarantine: offsets [from, to), and the records when counted (a broker counts
     * them no more: that read every batch of the tail, at every pass; -1).
     */
    static String quarantined(long records, long from, long to) {
        return (records >= 0 ? records + " records, " : "") + "offsets [" + from + "," + to + ")";
    }

    static String time(long ms) {
        return Instant.ofEpochMilli(ms).toString();
    }
}
