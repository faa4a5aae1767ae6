package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Failover while the destination's controller is cut off from ZooKeeper: a mirroring leader's epoch is already above
 * every mirrored epoch (fencing), so the failover records the last mirrored epoch and offset, writes the barrier and
 * makes the topic writable without the controller (decision 37); the topic takes writes at the mirrored offsets
 * before the controller is back. (A failover that does need the controller, from a leader epoch not above the last
 * mirrored one, waits for it up to {@code mirror.state.timeout.ms}: {@code MirrorPartitionMachineTest} and the
 * simulation.)
 */
@Timeout(300)
class FailoverWithoutControllerTest {
    private static final String TOPIC = "orders";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @Test
    void aFailoverCompletesWhileTheControllerIsCutOff() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(1),
                TestCluster.builder().brokers(3).withFaultProxies()
                        .brokerProperty("default.replication.factor", "3")
                        .brokerProperty("mirror.state.timeout.ms", "2000")
                        // the controller's loss is noticed after the session timeout, well after the failover
                        .brokerProperty("zookeeper.session.timeout.ms", "15000"))) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            Admin destAdmin = clusters.destinationAdmin();
            clusters.createSourceTopics(new NewTopic(TOPIC, 1, (short) 1));
            produce(source, 300, "s");
            clusters.mirror("dr", TOPIC);
            Waits.waitUntil("300 records on every destination replica", () ->
                    ReplicaLogs.logEndOffsets(destination, TP).size() == 3
                            && ReplicaLogs.logEndOffsets(destination, TP).values().stream().allMatch(e -> e == 300));
            clusters.awaitMirrored(TP);

            // the image's controller: DescribeCluster names any live broker, as KRaft brokers do
            int controller = destination.broker(0).metadata().image().controllerId();
            int leader = moveLeadershipOff(destAdmin, controller);
            int mirroringEpoch = destination.broker(leader).metadata().image().topic(TOPIC).orElseThrow()
                    .partitions().get(0).leaderEpoch();
            destination.cutZooKeeper(controller);

            // talk to the partition leader: the cut-off broker's view of ZooKeeper is frozen
            try (MirrorAdmin viaLeader = MirrorAdmin.create(destination.broker(leader).bootstrapServers(),
                    Duration.ofSeconds(30))) {
                assertEquals(Map.of(), viaLeader.stopMirrorTopics("dr", List.of(TOPIC), List.of()),
                        "the failover completes within the call, controller or not");
                MirrorAdmin.PartitionDescription stopped = partition(viaLeader);
                assertEquals("STOPPED", stopped.state());
                assertEquals(300L, stopped.lastMirroredOffset());
                assertTrue(stopped.lastMirroredEpoch() < mirroringEpoch, stopped.lastMirroredEpoch() + " vs "
                        + mirroringEpoch);
            }
            assertEquals(mirroringEpoch, destination.broker(leader).metadata().image().topic(TOPIC).orElseThrow()
                    .partitions().get(0).leaderEpoch(), "no epoch raise was needed");
            try (KafkaProducer<byte[], byte[]> p = destination.producer(Map.of("delivery.timeout.ms", 60_000))) {
                long offset = p.send(new ProducerRecord<>(TOPIC, 0, null, bytes("after-failover"))).get().offset();
                assertEquals(301L, offset, "writes continue after the mirrored offsets and the producer-state barrier");
            }
            destination.healZooKeeper(controller);
            // every replica, the old controller's too, keeps the 300 mirrored offsets the source has
            MirrorInvariants.awaitSharedPrefix(source, destination, TP, 300);
        }
    }

    /** Makes a broker other than the controller lead the partition (preferred replica first), returns it. */
    private static int moveLeadershipOff(Admin admin, int controller) throws Exception {
        List<Integer> replicas = new ArrayList<>(List.of(0, 1, 2));
        replicas.remove(Integer.valueOf(controller));
        replicas.add(controller);
        admin.alterPartitionReassignments(Map.of(TP, Optional.of(new NewPartitionReassignment(replicas)))).all().get();
        int target = replicas.get(0);
        Waits.waitUntil("broker " + target + " leads " + TP, () -> {
            try {
                admin.electLeaders(ElectionType.PREFERRED, Set.of(TP)).all().get();
            } catch (Exception e) {
                // ELECTION_NOT_NEEDED once it leads; anything else: poll again
            }
            return admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC).partitions().get(0).leader()
                    .id() == target;
        });
        return target;
    }

    private static MirrorAdmin.PartitionDescription partition(MirrorAdmin mirrors) throws Exception {
        return MirroredClusters.partition(mirrors, "dr", TP);
    }

    private static void produce(TestCluster cluster, int count, String prefix) throws Exception {
        cluster.produce(TOPIC, 0, count, prefix);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
