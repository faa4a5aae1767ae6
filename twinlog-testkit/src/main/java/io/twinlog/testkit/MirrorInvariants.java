package io.twinlog.testkit;

import org.apache.kafka.common.TopicPartition;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Invariants every mirroring, failover and failback test checks across both clusters, on every replica:
 * <ul>
 *   <li>every replica of a partition, in each cluster, holds the same log (same batches, offsets, epochs, CRCs);</li>
 *   <li>while mirroring, the destination's log is a prefix of the source's, batch for batch ({@link #awaitMirrored});
 *       after a failover, the destination's log up to the last mirrored offset still is
 *       ({@link #awaitSharedPrefix}).</li>
 * </ul>
 * Waits (bounded) until the replicas converge and fails with what it last saw.
 */
public final class MirrorInvariants {
    private MirrorInvariants() {
    }

    /** Every running replica of {@code tp} in {@code cluster} holds the same log; returns it. */
    public static List<ReplicaLogs.Batch> awaitReplicasIdentical(TestCluster cluster, TopicPartition tp) {
        return ReplicaLogs.awaitIdentical(cluster, tp, hostingBrokers(cluster, tp));
    }

    /**
     * Every replica of both clusters holds the same log of {@code tp}, identical batch for batch: what a caught-up
     * mirror (or a failed-back old source, once it caught up) must show.
     */
    public static List<ReplicaLogs.Batch> awaitMirrored(TestCluster source, TestCluster destination,
                                                        TopicPartition tp) {
        return awaitMirrored(source, tp, destination, tp);
    }

    /**
     * {@link #awaitMirrored(TestCluster, TestCluster, TopicPartition)} for a mirror topic named otherwise than its
     * source topic (a prefixed mirror's {@code a.orders-0} of {@code orders-0}).
     */
    public static List<ReplicaLogs.Batch> awaitMirrored(TestCluster source, TopicPartition sourceTp,
                                                        TestCluster destination, TopicPartition destinationTp) {
        return Waits.waitFor("every replica of " + sourceTp + " (source) and " + destinationTp + " (destination) "
                + "to hold the same log", () -> {
                    Map<String, List<ReplicaLogs.Batch>> logs = new TreeMap<>();
                    collect(logs, "source", source, sourceTp);
                    collect(logs, "destination", destination, destinationTp);
                    return logs;
                }, logs -> logs.values().stream().distinct().count() == 1).values().iterator().next();
    }

    /**
     * Both clusters' replicas agree within each cluster, and the two logs share their first {@code sharedOffsets}
     * offsets batch for batch (the records mirrored before a failover).
     */
    public static void awaitSharedPrefix(TestCluster source, TestCluster destination, TopicPartition tp,
                                         long sharedOffsets) {
        List<ReplicaLogs.Batch> sourceLog = awaitReplicasIdentical(source, tp);
        List<ReplicaLogs.Batch> destinationLog = awaitReplicasIdentical(destination, tp);
        List<ReplicaLogs.Batch> sourcePrefix = prefix(sourceLog, sharedOffsets);
        List<ReplicaLogs.Batch> destinationPrefix = prefix(destinationLog, sharedOffsets);
        if (!sourcePrefix.equals(destinationPrefix)) {
            throw new AssertionError("The first " + sharedOffsets + " offsets of " + tp + " differ between the "
                    + "clusters:\n source:      " + sourcePrefix + "\n destination: " + destinationPrefix);
        }
    }

    private static List<ReplicaLogs.Batch> prefix(List<ReplicaLogs.Batch> log, long endOffset) {
        return log.stream().filter(b -> b.lastOffset() < endOffset).toList();
    }

    private static void collect(Map<String, List<ReplicaLogs.Batch>> logs, String name, TestCluster cluster,
                                TopicPartition tp) throws Exception {
        for (Integer id : hostingBrokers(cluster, tp)) {
            logs.put(name + "-" + id, ReplicaLogs.read(cluster.broker(id), tp));
        }
    }

    private static List<Integer> hostingBrokers(TestCluster cluster, TopicPartition tp) {
        return cluster.runningBrokerIds().stream()
                .filter(id -> cluster.broker(id).logStore().log(tp).isPresent()).toList();
    }
}
