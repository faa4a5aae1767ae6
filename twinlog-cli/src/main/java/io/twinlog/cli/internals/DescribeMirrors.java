package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorAdmin;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * {@code --describe [--mirror NAME]}: for each mirror (all of them without {@code --mirror}), sorted by name, its
 * definition and state, then a table of its mirror partitions:
 * <pre>
 * Mirror: dr
 *   State: ACTIVE
 *   ...
 *   Configs:
 *     bootstrap.servers=10.0.0.1:9092
 *     sasl.jaas.config=[hidden]
 *   Topics: 1
 *     orders  DesiredState: MIRRORING  Partitions: 3
 *   MirroredUpTo: 2026-12-01T10:15:29.870Z  (highest RPO 0.6 s: orders-2)
 *
 * MIRROR  TOPIC  PARTITION  STATE  SOURCE-END  DESTINATION-END  LAG  NEWEST-MIRRORED  RPO-S  LAST-MIRRORED-EPOCH ...
 * dr      orders 0          ...
 *
 * MIRROR  GROUP    TYPE      LAST-SYNC                 OFFSETS-SYNCED  OFFSETS-CLAMPED
 * dr      billing  CONSUMER  2026-12-01T10:15:30.123Z  3               0
 * dr      tasks    SHARE     2026-12-01T10:15:30.123Z  2               0
 * </pre>
 * The group table lists the groups whose offsets the mirror syncs (TYPE: consumer groups' committed offsets, or
 * share groups' start offsets), with the time (UTC) their destination offsets were last brought in line with the
 * source; OFFSETS-CLAMPED counts partitions where the source group is ahead of what the destination holds.
 * NEWEST-MIRRORED is the timestamp (UTC) of the newest record each partition holds from the source; RPO-S the
 * seconds a failover now could lose: the age of its mirrored-up-to time, which for a partition whose last fetch
 * found it caught up is that fetch's time (an idle, fully copied partition has a small RPO, decision 122).
 * MirroredUpTo is the mirror's oldest mirrored-up-to time over its partitions that have an RPO (not failed over),
 * with the highest RPO and where it is, and how many partitions' RPO is not known.
 * Values the broker marks sensitive (it never sends them) print as {@value #HIDDEN}; unknown numbers as "-".
 */
public final class DescribeMirrors implements MirrorAction {
    public static final String HIDDEN = "[hidden]";

    private final Optional<String> mirror;

    public DescribeMirrors(Optional<String> mirror) {
        this.mirror = mirror;
    }

    @Override
    public void run(MirrorAdmin admin, PrintWriter out) throws IOException {
        Map<String, MirrorAdmin.MirrorDescription> mirrors = new TreeMap<>(
                admin.describeClusterMirrors(mirror.map(List::of).orElse(List.of())));
        boolean first = true;
        for (MirrorAdmin.MirrorDescription d : mirrors.values()) {
            if (!first) {
                out.println();
            }
            first = false;
            printMirror(d, out);
            out.println();
            partitionTable(d).print(out);
            out.println();
            groupTable(d).print(out);
        }
    }

    private static void printMirror(MirrorAdmin.MirrorDescription d, PrintWriter out) {
        out.println("Mirror: " + d.name());
        out.println("  State: " + Table.cell(d.state()));
        out.println("  Reason: " + Table.cell(d.stateReason()));
        out.println("  SourceClusterId: " + Table.cell(d.sourceClusterId()));
        out.println("  SourceBootstrapServer: " + Table.cell(d.sourceBootstrap()));
        out.println("  Include: " + Table.cell(String.join(",", d.includePatterns())));
        out.println("  Exclude: " + Table.cell(String.join(",", d.excludePatterns())));
        out.println("  Configs:" + (d.configs().isEmpty() ? " -" : ""));
        new TreeMap<>(d.configs()).forEach((name, value) -> out.println("    " + name + "="
                + (d.sensitiveConfigs().contains(name) ? HIDDEN : Table.oneLine(String.valueOf(value)))));
        out.println("  Topics: " + d.topics().size());
        d.topics().values().stream()
                .sorted(Comparator.comparing(MirrorAdmin.TopicDescription::name))
                .forEach(t -> out.println("    " + t.name() + "  DesiredState: " + Table.cell(t.desiredState())
                        + "  Partitions: " + t.partitions().size()
                        + (t.sourceTopic().equals(t.name()) ? "" : "  SourceTopic: " + t.sourceTopic())));
        if (!d.skippedTopics().isEmpty()) {
            // selected by a pattern but not started: a loop, or a failback into a topic of another name
            out.println("  SkippedSourceTopics: " + d.skippedTopics().size());
            new TreeMap<>(d.skippedTopics()).forEach((topic, why) -> out.println("    " + topic + "  Reason: "
                    + Table.oneLine(why)));
        }
        out.println("  MirroredUpTo: " + mirroredUpTo(d));
    }

    /**
     * The oldest mirrored-up-to time over the partitions that have an RPO, with the highest RPO and its partition,
     * and how many partitions that should have one do not know it: "2026-12-01T10:15:29.870Z  (highest RPO 0.6 s:
     * orders-2)"; "-" when none knows it.
     */
    static String mirroredUpTo(MirrorAdmin.MirrorDescription d) {
        MirrorAdmin.PartitionDescription oldest = null;
        String where = null;
        int unknown = 0;
        for (MirrorAdmin.TopicDescription t : new TreeMap<>(d.topics()).values()) {
            for (MirrorAdmin.PartitionDescription p : t.partitions()) {
                if (p.rpoMs() < 0 || p.mirroredUpToMs() < 0) {
                    unknown += "STOPPED".equals(p.state()) ? 0 : 1;
                } else if (oldest == null || p.rpoMs() > oldest.rpoMs()) {
                    oldest = p;
                    where = t.name() + "-" + p.partition();
                }
            }
        }
        String unknownNote = unknown == 0 ? "" : unknown + " partition(s) unknown";
        if (oldest == null) {
            return unknown == 0 ? Table.NONE : Table.NONE + "  (" + unknownNote + ")";
        }
        return Instant.ofEpochMilli(oldest.mirroredUpToMs()) + "  (highest RPO " + seconds(oldest.rpoMs()) + " s: "
                + where + (unknown == 0 ? "" : "; " + unknownNote) + ")";
    }

    /** Milliseconds as seconds with one decimal. */
    private static String seconds(long ms) {
        return String.format(Locale.ROOT, "%.1f", ms / 1000.0);
    }

    private static Table partitionTable(MirrorAdmin.MirrorDescription d) {
        Table table = new Table("MIRROR", "TOPIC", "PARTITION", "STATE", "SOURCE-END", "DESTINATION-END", "LAG",
                "NEWEST-MIRRORED", "RPO-S", "LAST-MIRRORED-EPOCH", "OUT-OF-SYNC", "TRUNCATION", "CONSISTENT-FROM",
                "ERROR");
        d.topics().values().stream()
                .sorted(Comparator.comparing(MirrorAdmin.TopicDescription::name))
                .forEach(t -> t.partitions().stream()
                        .sorted(Comparator.comparingInt(MirrorAdmin.PartitionDescription::partition))
                        .forEach(p -> table.addRow(d.name(), t.name(), p.partition(), p.state(),
                                known(p.sourceLogEndOffset()), known(p.destinationLogEndOffset()), known(p.lag()),
                                p.newestMirroredTimestamp() < 0 ? null : Instant.ofEpochMilli(
                                        p.newestMirroredTimestamp()),
                                p.rpoMs() < 0 ? null : seconds(p.rpoMs()), known(p.lastMirroredEpoch()), replicas(p.outOfSyncReplicas()), truncation(p),
                                known(p.consistentFromOffset()), error(p))));
        return table;
    }

    private static Table groupTable(MirrorAdmin.MirrorDescription d) {
        Table table = new Table("MIRROR", "GROUP", "TYPE", "LAST-SYNC", "OFFSETS-SYNCED", "OFFSETS-CLAMPED");
        new TreeMap<>(d.groups()).values().forEach(g -> table.addRow(d.name(), g.groupId(), g.groupType(),
                g.lastSyncTimeMs() < 0 ? null : Instant.ofEpochMilli(g.lastSyncTimeMs()), g.offsetsSynced(),
                g.offsetsClamped()));
        return table;
    }

    /** Negative offsets, lags and epochs mean "not known" on the wire. */
    private static Object known(long value) {
        return value < 0 ? null : value;
    }

    /** Destination replicas outside the ISR, comma-separated; none shows as the table's empty cell. */
    private static String replicas(List<Integer> ids) {
        return ids.isEmpty() ? null : ids.stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    /**
     * The latest truncation point, the offsets truncations removed (kept in the quarantine topic), and while a
     * truncation waits, the replicas that have not applied it: "at 100, 20 quarantined, waiting for 2".
     */
    private static String truncation(MirrorAdmin.PartitionDescription p) {
        if (p.truncationOffset() < 0) {
            return null;
        }
        return "at " + p.truncationOffset()
                + (p.truncatedOffsets() > 0 ? ", " + p.truncatedOffsets() + " quarantined" : "")
                + (p.truncationPendingReplicas().isEmpty() ? "" : ", waiting for "
                + replicas(p.truncationPendingReplicas()));
    }

    private static String error(MirrorAdmin.PartitionDescription p) {
        if (p.lastError() == null || p.lastError().isEmpty()) {
            return null;
        }
        return p.retryAttempt() > 0 ? p.lastError() + " (retry " + p.retryAttempt() + ")" : p.lastError();
    }
}
