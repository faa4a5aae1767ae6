package io.twinlog.campaign;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The checks after every round, once the faults are healed and the producer paused (so the logs are still):
 * <ol>
 *   <li>no partition stuck: within {@link MirrorPair#BOUND} every partition of every topic of both clusters has a
 *       leader and a full ISR, and the destination's mirror partitions are MIRRORING (one FAILED for good is
 *       restarted with {@code --start}, as an operator would, and counted);</li>
 *   <li>every replica identical: within the bound, every replica of the mirrored topic and of the quarantine holds
 *       the same batches (offsets, leader epochs, CRCs) as the others in its cluster, read from the segment files of
 *       each broker, and the destination's log equals the source's;</li>
 *   <li>nothing acknowledged lost: every value the producer saw acknowledged is in the source's log or in the
 *       quarantine ({@code __twinlog_quarantine}) of either cluster.</li>
 * </ol>
 * A broken invariant throws {@link CampaignViolation} with what was seen.
 */
final class InvariantCheck {
    private static final Logger log = LoggerFactory.getLogger(InvariantCheck.class);
    static final String QUARANTINE = "__twinlog_quarantine";

    private final MirrorPair pair;
    private final CampaignStats stats;

    InvariantCheck(MirrorPair pair, CampaignStats stats) {
        this.pair = pair;
        this.stats = stats;
    }

    /** What one check found, for the round's line. */
    record Outcome(long acknowledged, long inLog, long quarantined, long duplicatesInLog, String note) {
    }

    Outcome check(Map<String, String> acknowledged) throws Exception {
        for (ProcessCluster c : pair.both()) {
            awaitNoPartitionStuck(c);
        }
        String note = awaitMirroring();
        Map<TopicPartition, List<ReplicaFiles.Batch>> sourceLogs = new LinkedHashMap<>();
        for (int p = 0; p < pair.partitions(); p++) {
            TopicPartition tp = new TopicPartition(pair.topic(), p);
            List<ReplicaFiles.Batch> source = awaitIdentical(pair.source(), tp);
            sourceLogs.put(tp, source);
            awaitMirrored(tp);
        }
        Set<String> quarantined = new HashSet<>();
        for (ProcessCluster c : pair.both()) {
            for (TopicPartition tp : quarantinePartitions(c)) {
                for (ReplicaFiles.Batch b : awaitIdentical(c, tp)) {
                    quarantined.addAll(b.values());
                }
            }
        }
        Set<String> inLog = new HashSet<>();
        long duplicates = 0;
        for (List<ReplicaFiles.Batch> logOf : sourceLogs.values()) {
            for (ReplicaFiles.Batch b : logOf) {
                for (String v : b.values()) {
                    if (!inLog.add(v)) {
                        duplicates++;
                    }
                }
            }
        }
        List<String> lost = new ArrayList<>();
        for (Map.Entry<String, String> e : acknowledged.entrySet()) {
            if (!inLog.contains(e.getKey()) && !quarantined.contains(e.getKey())) {
                lost.add(e.getKey() + " (acknowledged by " + e.getValue() + ")");
            }
        }
        if (!lost.isEmpty()) {
            stats.lost += lost.size();
            throw new CampaignViolation(CampaignViolation.Invariant.ACKNOWLEDGED_RECORD_LOST, lost.size()
                    + " acknowledged records are neither in " + pair.source() + "'s log nor in a quarantine; the first: "
                    + lost.subList(0, Math.min(20, lost.size())));
        }
        return new Outcome(acknowledged.size(), inLog.size(), quarantined.size(), duplicates, note);
    }

    private void awaitNoPartitionStuck(ProcessCluster c) {
        try {
            Waits.waitFor("every partition of " + c + " to have a leader and a full ISR", () -> unhealthy(c),
                    List::isEmpty, MirrorPair.BOUND);
        } catch (AssertionError e) {
            stats.stuckPartitions++;
            throw new CampaignViolation(CampaignViolation.Invariant.PARTITION_STUCK, e.getMessage());
        }
    }

    /** The partitions of {@code c} without a leader or with replicas outside the ISR. */
    private static List<String> unhealthy(ProcessCluster c) throws Exception {
        List<String> out = new ArrayList<>();
        try (Admin admin = c.admin()) {
            Set<String> names = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get();
            for (TopicDescription d : admin.describeTopics(names).allTopicNames().get().values()) {
                for (TopicPartitionInfo p : d.partitions()) {
                    if (p.leader() == null || p.leader().isEmpty() || p.isr().size() < p.replicas().size()) {
                        out.add(d.name() + "-" + p.partition() + " leader " + (p.leader() == null ? "none"
                                : p.leader().id()) + " isr " + p.isr().stream().map(n -> n.id()).toList()
                                + " replicas " + p.replicas().stream().map(n -> n.id()).toList());
                    }
                }
            }
        }
        return out;
    }

    /** The destination mirrors again; PAUSED is resumed, FAILED for good restarted (counted). */
    private String awaitMirroring() throws Exception {
        String note = "";
        List<MirrorAdmin.PartitionDescription> settled;
        try {
            settled = Waits.waitFor("the mirror on " + pair.destination() + " to mirror, or to wait for the operator",
                    pair::mirrorPartitions, ps -> ps.stream().allMatch(p -> p.state().equals("MIRRORING")
                            || p.state().equals("PAUSED") || p.state().equals("FAILED") && p.retryAttempt() < 0),
                    MirrorPair.BOUND);
        } catch (AssertionError e) {
            stats.stuckPartitions++;
            throw new CampaignViolation(CampaignViolation.Invariant.PARTITION_STUCK, e.getMessage());
        }
        if (settled.stream().anyMatch(p -> p.state().equals("PAUSED"))) {
            pair.resumeMirror();
        }
        List<MirrorAdmin.PartitionDescription> failed = settled.stream().filter(p -> p.state().equals("FAILED"))
                .toList();
        if (!failed.isEmpty()) {
            stats.operatorRestarts++;
            note = " (operator --start after FAILED: " + failed.stream().map(p -> p.partition() + ": "
                    + p.lastError()).toList() + ")";
            log.info("[Campaign] mirror partitions FAILED for good{}", note);
            pair.startMirror(pair.destination());
        }
        try {
            pair.awaitCaughtUp();
        } catch (AssertionError e) {
            stats.stuckPartitions++;
            throw new CampaignViolation(CampaignViolation.Invariant.PARTITION_STUCK, e.getMessage());
        }
        return note;
    }

    /** Waits until every replica of {@code tp} in {@code c} holds the same batches; returns that log. */
    private List<ReplicaFiles.Batch> awaitIdentical(ProcessCluster c, TopicPartition tp) {
        try {
            Map<String, List<ReplicaFiles.Batch>> logs = Waits.waitFor("every replica of " + tp + " on " + c
                    + " to hold the same batches", () -> replicas(c, tp), InvariantCheck::allEqual, MirrorPair.BOUND);
            return logs.values().iterator().next();
        } catch (AssertionError e) {
            stats.divergentReplicas++;
            throw new CampaignViolation(CampaignViolation.Invariant.DIVERGENT_REPLICAS, describe(replicasQuietly(c,
                    tp)) + "\n" + e.getMessage());
        }
    }

    /** The destination's replicas of {@code tp} hold the source's log, batch for batch. */
    private void awaitMirrored(TopicPartition tp) {
        try {
            Waits.waitFor("every replica of " + tp + " on both clusters to hold the same batches", () -> {
                Map<String, List<ReplicaFiles.Batch>> logs = new TreeMap<>(replicas(pair.source(), tp));
                logs.putAll(replicas(pair.destination(), tp));
                return logs;
            }, InvariantCheck::allEqual, MirrorPair.BOUND);
        } catch (AssertionError e) {
            stats.divergentReplicas++;
            Map<String, List<ReplicaFiles.Batch>> logs = new TreeMap<>(replicasQuietly(pair.source(), tp));
            logs.putAll(replicasQuietly(pair.destination(), tp));
            throw new CampaignViolation(CampaignViolation.Invariant.DIVERGENT_REPLICAS, "the destination's "
                    + tp + " is not the source's: " + describe(logs) + "\n" + e.getMessage());
        }
    }

    private static Map<String, List<ReplicaFiles.Batch>> replicas(ProcessCluster c, TopicPartition tp)
            throws Exception {
        Map<String, List<ReplicaFiles.Batch>> out = new TreeMap<>();
        for (BrokerNode b : c.brokers()) {
            Optional<List<ReplicaFiles.Batch>> log = ReplicaFiles.read(b.logDirs(), tp);
            log.ifPresent(l -> out.put(b.name(), l));
        }
        return out;
    }

    private static Map<String, List<ReplicaFiles.Batch>> replicasQuietly(ProcessCluster c, TopicPartition tp) {
        try {
            return replicas(c, tp);
        } catch (Exception e) {
            // broad: the report is written even when a replica cannot be read
            log.warn("[Campaign] could not read the replicas of {} for the report", tp, e);
            return Map.of("(unreadable)", List.of());
        }
    }

    private static boolean allEqual(Map<String, List<ReplicaFiles.Batch>> logs) {
        return !logs.isEmpty() && logs.values().stream().map(ReplicaFiles::summary).distinct().count() == 1;
    }

    /** Each replica's log end and where it first differs from the first replica's. */
    private static String describe(Map<String, List<ReplicaFiles.Batch>> logs) {
        StringBuilder out = new StringBuilder();
        List<ReplicaFiles.Batch> first = logs.isEmpty() ? List.of() : logs.values().iterator().next();
        for (Map.Entry<String, List<ReplicaFiles.Batch>> e : logs.entrySet()) {
            out.append("\n  ").append(e.getKey()).append(": ").append(e.getValue().size()).append(" batches, log end ")
                    .append(ReplicaFiles.logEndOffset(e.getValue())).append(", first difference with the first: ")
                    .append(ReplicaFiles.firstDifference(first, e.getValue()));
        }
        return out.toString();
    }

    /** The quarantine's partitions any broker of {@code c} holds a directory for. */
    private static Set<TopicPartition> quarantinePartitions(ProcessCluster c) {
        Set<TopicPartition> out = new HashSet<>();
        for (BrokerNode b : c.brokers()) {
            for (File logDir : b.logDirs()) {
                File[] dirs = logDir.listFiles((d, name) -> name.startsWith(QUARANTINE + "-")
                        && name.substring(QUARANTINE.length() + 1).chars().allMatch(Character::isDigit));
                if (dirs != null) {
                    for (File d : dirs) {
                        out.add(new TopicPartition(QUARANTINE, Integer.parseInt(d.getName()
                                .substring(QUARANTINE.length() + 1))));
                    }
                }
            }
        }
        return out;
    }
}
