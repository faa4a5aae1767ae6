package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.TestCluster;
import org.apache.kafka.common.TopicPartition;

import java.util.List;

/** What the failback and seed tests read of one partition: its leader and ISR, and its mirror description. */
final class MirrorPartitions {
    private MirrorPartitions() {
    }

    /** The running broker that leads {@code tp}, or -1. */
    static int leaderOf(TestCluster c, TopicPartition tp) {
        for (int id : c.runningBrokerIds()) {
            var p = c.broker(id).replicaManager().partition(tp);
            if (p.isPresent() && p.get().isLeader()) {
                return id;
            }
        }
        return -1;
    }

    /** The ISR as {@code tp}'s leader sees it (empty without a leader). */
    static List<Integer> isr(TestCluster c, TopicPartition tp) {
        int leader = leaderOf(c, tp);
        return leader < 0 ? List.of() : c.broker(leader).replicaManager().partition(tp).orElseThrow().isr();
    }

    /** {@code tp} as {@code mirror}'s describe shows it. */
    static MirrorAdmin.PartitionDescription described(MirrorAdmin admin, String mirror, TopicPartition tp)
            throws Exception {
        return admin.describeClusterMirrors(List.of(mirror)).get(mirror).topics().get(tp.topic()).partitions()
                .get(tp.partition());
    }
}
