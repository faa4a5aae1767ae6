package io.twinlog.campaign;

import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/** What a broker says of its log dirs, and where its partitions are, for {@link FaultKind#DISK_FULL}. */
final class LogDirs {
    private LogDirs() {
    }

    /** Whether broker {@code id} answers DescribeLogDirs with an error (KAFKA_STORAGE_ERROR) for {@code dir}. */
    static boolean isOffline(ProcessCluster c, int id, String dir) throws Exception {
        try (Admin admin = c.admin()) {
            Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(id)).allDescriptions().get().get(id);
            LogDirDescription d = dirs.get(dir);
            return d != null && d.error() != null;
        }
    }

    /** The partitions with a replica in {@code logDir}, from its directories ({@code topic-N}). */
    static List<TopicPartition> partitionsIn(File logDir) {
        List<TopicPartition> out = new ArrayList<>();
        File[] dirs = logDir.listFiles(File::isDirectory);
        if (dirs != null) {
            for (File d : dirs) {
                String name = d.getName();
                int dash = name.lastIndexOf('-');
                if (dash > 0 && dash < name.length() - 1 && name.substring(dash + 1).chars()
                        .allMatch(Character::isDigit)) {
                    out.add(new TopicPartition(name.substring(0, dash), Integer.parseInt(name.substring(dash + 1))));
                }
            }
        }
        out.sort((x, y) -> x.toString().compareTo(y.toString()));
        return out;
    }

    /** Waits until none of {@code partitions} is led by broker {@code id} nor has it in its ISR. */
    static void awaitNotLedBy(ProcessCluster c, int id, List<TopicPartition> partitions) {
        Waits.waitFor("the partitions " + partitions + " of the failed dir to be led by other brokers than " + id
                + " and to have it out of their ISR", () -> ledOrInSyncOn(c, id, partitions), List::isEmpty,
                MirrorPair.BOUND);
    }

    private static List<String> ledOrInSyncOn(ProcessCluster c, int id, List<TopicPartition> partitions)
            throws Exception {
        Set<String> topics = partitions.stream().map(TopicPartition::topic).collect(Collectors.toSet());
        List<String> out = new ArrayList<>();
        try (Admin admin = c.admin()) {
            Map<String, TopicDescription> described = admin.describeTopics(topics).allTopicNames().get();
            for (TopicPartition tp : partitions) {
                TopicPartitionInfo p = described.get(tp.topic()).partitions().get(tp.partition());
                Node leader = p.leader();
                if (leader == null || leader.isEmpty() || leader.id() == id
                        || p.isr().stream().anyMatch(n -> n.id() == id)) {
                    out.add(tp + " leader " + (leader == null || leader.isEmpty() ? "none" : leader.id()) + " isr "
                            + p.isr().stream().map(Node::id).toList());
                }
            }
        }
        return out;
    }
}
