package io.twinlog.cli.internals;

import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The action flags of {@code twinlog-mirrors.sh} (exactly one is given) and the two options only {@code --verify}
 * takes, as picocli fills them in; {@link ActionResolver} checks them. The {@code order} of each option is its place
 * in {@code --help}.
 */
public final class ActionFlags {
    @Option(names = "--create", order = 11, description = "Create a cluster mirror --mirror NAME from the source "
            + "cluster --source-bootstrap-server.")
    boolean create;

    @Option(names = "--list", order = 12, description = "List the cluster mirrors (only --mirror NAME if given): "
            + "MIRROR STATE TOPICS SOURCE-CLUSTER-ID SOURCE-BOOTSTRAP-SERVER.")
    boolean list;

    @Option(names = "--describe", order = 13, description = "Describe every cluster mirror, or --mirror NAME: "
            + "state, source, patterns, configs (credentials shown as [hidden]), the oldest mirrored-up-to time "
            + "with the highest RPO, then one line per mirror "
            + "partition: MIRROR TOPIC PARTITION STATE SOURCE-END DESTINATION-END LAG NEWEST-MIRRORED RPO-S "
            + "LAST-MIRRORED-EPOCH OUT-OF-SYNC TRUNCATION CONSISTENT-FROM ERROR (NEWEST-MIRRORED: the timestamp "
            + "(UTC) of the newest record held from the source; RPO-S: the seconds a failover now could lose, "
            + "small for an idle partition that is caught up; OUT-OF-SYNC: destination replicas outside the ISR; "
            + "CONSISTENT-FROM: the offset from which records are consistent with the source even through "
            + "unclean elections, set by a truncation every replica applied with "
            + "mirror.support.unclean.leader.election; TRUNCATION: "
            + "the partition's latest truncation point, the offsets truncations removed (their records are kept "
            + "in the topic __twinlog_quarantine), and the replicas a truncation still waits for), and "
            + "one line per consumer or share group whose offsets it syncs: MIRROR GROUP TYPE LAST-SYNC "
            + "OFFSETS-SYNCED OFFSETS-CLAMPED.")
    boolean describe;

    @Option(names = "--alter", order = 13, description = "Change configs of the cluster mirror --mirror NAME "
            + "(the options of --create; only those given change).")
    boolean alter;

    @Option(names = "--delete", order = 14, description = "Delete the cluster mirror --mirror NAME (refused "
            + "while any of its topics is not stopped).")
    boolean delete;

    @Option(names = "--start", order = 15, description = "Start mirroring the source topics matching --topic "
            + "(created here with the source's topic IDs).")
    boolean start;

    @Option(names = "--add", order = 16, description = "Same as --start.")
    boolean add;

    @Option(names = "--stop", order = 17, description = "Stop the mirror topics matching --topic and make them "
            + "writable: failover (works with the source down).")
    boolean stop;

    @Option(names = "--remove", order = 18, description = "Same as --stop.")
    boolean remove;

    @Option(names = "--at", paramLabel = "TIMESTAMP|common", order = 18, description = "With --stop: fail over to "
            + "a point in time, ISO-8601 (2026-12-07T10:14:00Z, or with an offset) or epoch milliseconds: each "
            + "partition keeps what it mirrored up to its last batch at or before it; what it mirrored after is cut "
            + "on every replica and kept in __twinlog_quarantine. A partition not there yet mirrors on for up to "
            + "--timeout-ms while the source answers. 'common': the oldest mirrored-up-to time of the selected "
            + "partitions now, so all fail over at one time.")
    String at;

    @Option(names = "--dry-run", order = 18, description = "With --stop (and --at): print per partition what a "
            + "failover now would keep (up to which offset and time) and quarantine, and its RPO, as each "
            + "partition's leader reads it from its log; nothing is changed.")
    boolean dryRun;

    @Option(names = "--pause", order = 19, description = "Pause the mirror topics matching --topic (they stay "
            + "read-only).")
    boolean pause;

    @Option(names = "--resume", order = 20, description = "Resume the paused mirror topics matching --topic.")
    boolean resume;

    @Option(names = "--verify", order = 21, description = "Compare each partition of the mirror --mirror NAME's "
            + "topics (or those matching --topic) on this cluster with the same partition on the source, without "
            + "stopping anything: one line per partition, 'TOPIC PARTITION identical up to OFFSET' or 'TOPIC "
            + "PARTITION differ from offset OFFSET (here: epoch E crc C; source: epoch E crc C)'; a failed-over "
            + "partition shows where it forked. Batches are compared by offsets, leader epoch and CRC, the first "
            + "difference found by binary search (--full: every batch). Exit status 0 when nothing differs where "
            + "the clusters should agree, 1 when something does, 2 on an error.")
    boolean verify;

    @Option(names = "--full", order = 22, description = "With --verify: compare every batch, not a binary search.")
    boolean full;

    @Option(names = "--source-command-config", paramLabel = "FILE", order = 22, description = "With --verify: "
            + "Kafka client configs for reading the source (security.protocol, sasl.*, ssl.*), needed when the "
            + "mirror's own source credentials are secret (they are never shown back, so the tool cannot reuse "
            + "them); they override the mirror's source configs.")
    Path sourceCommandConfig;

    @Option(names = "--add-acl", order = 23, description = "Add ACLs on the cluster mirror --mirror NAME (or, "
            + "with --resource-pattern-type prefixed, on the mirrors whose names start with NAME): "
            + "--allow-principal/--deny-principal with --operation, as kafka-acls does for Kafka's resources.")
    boolean addAcl;

    @Option(names = "--remove-acl", order = 24, description = "Remove the ACLs on --mirror NAME of the given "
            + "principals (and --operation, else every operation).")
    boolean removeAcl;

    @Option(names = "--list-acls", order = 25, description = "List the cluster-mirror ACLs, or those that apply "
            + "to --mirror NAME.")
    boolean listAcls;

    /** The action flags given, in a fixed order. */
    List<String> given() {
        List<String> given = new ArrayList<>();
        addIf(given, create, "--create");
        addIf(given, alter, "--alter");
        addIf(given, list, "--list");
        addIf(given, describe, "--describe");
        addIf(given, delete, "--delete");
        addIf(given, start, "--start");
        addIf(given, add, "--add");
        addIf(given, stop, "--stop");
        addIf(given, remove, "--remove");
        addIf(given, pause, "--pause");
        addIf(given, resume, "--resume");
        addIf(given, verify, "--verify");
        addIf(given, addAcl, "--add-acl");
        addIf(given, removeAcl, "--remove-acl");
        addIf(given, listAcls, "--list-acls");
        return given;
    }

    /** Whether the command verifies: its exit code then tells "differs" (1) from "could not tell" (2). */
    public boolean isVerify() {
        return verify;
    }

    private static void addIf(List<String> list, boolean condition, String value) {
        if (condition) {
            list.add(value);
        }
    }
}
