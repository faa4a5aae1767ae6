package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorAdmin.FailoverPreview;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.regex.Pattern;

/**
 * {@code --stop --dry-run [--at TIMESTAMP|common]} (issue 30 point 4): per selected partition, what a failover now
 * would keep (up to which offset, and the newest time kept), what it would quarantine, and its RPO. Each partition's
 * leader answers from its log with the real failover's cut (PreviewMirrorFailover); nothing is changed.
 */
final class FailoverDryRun {
    private FailoverDryRun() {
    }

    /** The mirror's topics {@code --topic} selects: plain names exactly, the others as regexes over the whole name. */
    static List<MirrorAdmin.TopicDescription> selected(MirrorAdmin.MirrorDescription d, List<String> topicPatterns) {
        List<String> names = MirrorTopicsAction.names(topicPatterns);
        List<Pattern> patterns = MirrorTopicsAction.patterns(topicPatterns).stream().map(Pattern::compile).toList();
        List<MirrorAdmin.TopicDescription> out = new ArrayList<>();
        for (MirrorAdmin.TopicDescription t : new TreeMap<>(d.topics()).values()) {
            if (names.contains(t.name()) || patterns.stream().anyMatch(p -> p.matcher(t.name()).matches())) {
                out.add(t);
            }
        }
        return out;
    }

    /** Asks each selected partition's leader and prints one line per partition; {@code atMs} -1: a plain failover. */
    static void print(MirrorAdmin admin, Map<String, Object> configs, String mirror, List<String> topicPatterns,
                      long atMs, PrintWriter out) throws IOException {
        MirrorAdmin.MirrorDescription d = admin.describeClusterMirrors(List.of(mirror)).get(mirror);
        if (d == null) {
            throw CommandException.failed("No cluster mirror named '" + mirror + "'");
        }
        Map<String, List<Integer>> wanted = new LinkedHashMap<>();
        // the mirrored-up-to times as describe reports them (the leaders' progress records): what --at common and
        // the RPO columns go by
        Map<String, Long> upTo = new HashMap<>();
        for (MirrorAdmin.TopicDescription t : selected(d, topicPatterns)) {
            wanted.put(t.name(), t.partitions().stream().map(MirrorAdmin.PartitionDescription::partition).sorted()
                    .toList());
            t.partitions().forEach(p -> upTo.put(t.name() + "-" + p.partition(), p.mirroredUpToMs()));
        }
        if (wanted.isEmpty()) {
            throw CommandException.failed("No topic of mirror " + mirror + " matches " + topicPatterns);
        }
        out.println("Mirror " + mirror + ": dry run of a failover of topics matching " + topicPatterns
                + (atMs < 0 ? "" : " to " + PointInTimeFailover.time(atMs) + " (" + atMs + ")")
                + "; nothing is changed.");
        Map<String, FailoverPreview> answers = new HashMap<>();
        for (Map.Entry<Node, Map<String, List<Integer>>> e : byLeader(configs, wanted).entrySet()) {
            Map<String, Object> leaderConfigs = new HashMap<>(configs);
            leaderConfigs.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, e.getKey().host() + ":" + e.getKey().port());
            try (MirrorAdmin leader = MirrorAdmin.create(leaderConfigs)) {
                for (FailoverPreview p : leader.previewMirrorFailover(mirror, atMs, e.getValue())) {
                    answers.put(p.topic() + "-" + p.partition(), p);
                }
            }
        }
        wanted.forEach((topic, partitions) -> {
            for (int p : partitions) {
                FailoverPreview answer = answers.get(topic + "-" + p);
                out.println("  " + topic + "-" + p + ": " + (answer == null || answer.errorCode() != 0
                        ? "no leader answered (it may be moving): ask again"
                        : line(answer, atMs, Math.max(answer.mirroredUpToMs(), upTo.get(topic + "-" + p)))));
            }
        });
    }

    /** One partition's preview, as the operator reads it; {@code mirroredUpToMs} -1 when not known. */
    static String line(FailoverPreview p, long atMs, long mirroredUpToMs) {
        StringBuilder b = new StringBuilder("would keep up to offset " + p.keptOffset() + " (newest kept batch "
                + (p.keptTimestamp() < 0 ? "none" : PointInTimeFailover.time(p.keptTimestamp())) + ")");
        if (p.keptOffset() < p.logEndOffset()) {
            b.append(", quarantine ").append(PointInTimeFailover.quarantined(p.quarantinedRecords(), p.keptOffset(),
                    p.logEndOffset()));
        } else if (atMs >= 0) {
            b.append(", nothing after the time to quarantine");
        }
        boolean reached = atMs < 0 || p.keptOffset() < p.logEndOffset() || mirroredUpToMs > atMs;
        if (!reached) {
            b.append("; not reached yet (mirrored up to ").append(mirroredUpToMs < 0 ? "an unknown time"
                    : PointInTimeFailover.time(mirroredUpToMs)).append("): the failover would wait for it up to "
                    + "--timeout-ms");
        }
        // what the failover loses: everything after the time kept (the time, or how far it got)
        long keptUpTo = reached && atMs >= 0 ? atMs : mirroredUpToMs >= 0 ? mirroredUpToMs : p.keptTimestamp();
        b.append("; RPO ").append(keptUpTo < 0 ? "unknown" : String.format("%.1f s",
                Math.max(0, p.nowMs() - keptUpTo) / 1000.0));
        return b.toString();
    }

    /** The selected partitions grouped by their leader now (Kafka's Admin: the broker's metadata). */
    private static Map<Node, Map<String, List<Integer>>> byLeader(Map<String, Object> configs,
                                                                  Map<String, List<Integer>> wanted)
            throws IOException {
        Map<Node, Map<String, List<Integer>>> out = new LinkedHashMap<>();
        try (Admin kafka = Admin.create(configs)) {
            Map<String, TopicDescription> topics = kafka.describeTopics(wanted.keySet()).allTopicNames().get();
            wanted.forEach((topic, partitions) -> {
                for (TopicPartitionInfo info : topics.get(topic).partitions()) {
                    if (partitions.contains(info.partition()) && info.leader() != null && !info.leader().isEmpty()) {
                        out.computeIfAbsent(info.leader(), n -> new LinkedHashMap<>())
                                .computeIfAbsent(topic, t -> new ArrayList<>()).add(info.partition());
                    }
                }
            });
        } catch (ExecutionException e) {
            throw new IOException("Could not find the partitions' leaders: " + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("Interrupted while finding the partitions' leaders", e);
        }
        return out;
    }
}
