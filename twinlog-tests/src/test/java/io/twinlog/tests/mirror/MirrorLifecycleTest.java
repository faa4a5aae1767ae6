package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mirroring into a replicated destination: every destination replica ends identical to the source, a destination
 * leader kill is survived (the new leader continues from the durable state), pause stops the flow and resume
 * catches up, and bad topic requests get distinct errors.
 */
@Timeout(300)
class MirrorLifecycleTest {
    private static final TopicPartition TP = new TopicPartition("events", 0);

    @Test
    void replicatedDestinationSurvivesLeaderKillAndPauseResume() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(1),
                TestCluster.builder().brokers(3).brokerProperty("default.replication.factor", "3"))) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            Admin destAdmin = clusters.destinationAdmin();
            MirrorAdmin mirrors = clusters.mirrors();
            clusters.createSourceTopics(new NewTopic("events", 1, (short) 1));
            produce(source, 200, "a");
            clusters.mirror("m", "events");
            Waits.waitUntil("200 records on every destination replica", () ->
                    ReplicaLogs.logEndOffsets(destination, TP).values().stream().allMatch(e -> e == 200)
                            && ReplicaLogs.logEndOffsets(destination, TP).size() == 3);
            assertEquals(ReplicaLogs.read(source.broker(0), TP),
                    ReplicaLogs.awaitIdentical(destination, TP, List.of(0, 1, 2)));

            int leader = describe(destAdmin).partitions().get(0).leader().id();
            destination.killBroker(leader);
            produce(source, 100, "b");
            Waits.waitUntil("the new destination leader continues mirroring", () -> {
                int l = describe(destAdmin).partitions().get(0).leader().id();
                return l != leader && destination.broker(l).logStore().log(TP).map(x -> x.logEndOffset()).orElse(0L) == 300;
            });
            assertEquals("MIRRORING", state(mirrors));
            MirrorInvariants.awaitMirrored(source, destination, TP); // the surviving replicas follow the new leader
            destination.startBroker(leader);
            assertEquals(ReplicaLogs.read(source.broker(0), TP),
                    ReplicaLogs.awaitIdentical(destination, TP, List.of(0, 1, 2)),
                    "the restarted replica catches up; all replicas equal the source batch for batch");

            assertEquals(Map.of(), mirrors.pauseMirrorTopics("m", List.of("events"), List.of()));
            Waits.waitUntil("paused", () -> state(mirrors).equals("PAUSED"));
            produce(source, 50, "c");
            int now = describe(destAdmin).partitions().get(0).leader().id();
            assertEquals(300L, destination.broker(now).logStore().log(TP).orElseThrow().logEndOffset(),
                    "nothing is fetched while paused");
            assertEquals(Map.of(), mirrors.resumeMirrorTopics("m", List.of("events"), List.of()));
            Waits.waitUntil("resumed and caught up", () -> state(mirrors).equals("MIRRORING")
                    && destination.broker(now).logStore().log(TP).orElseThrow().logEndOffset() == 350);
            MirrorInvariants.awaitMirrored(source, destination, TP);

            Map<String, MirrorException> errors = mirrors.stopMirrorTopics("m", List.of("not-mirrored"), List.of());
            assertEquals(MirrorErrors.TOPIC_NOT_IN_CLUSTER_MIRROR.code, errors.get("not-mirrored").errorCode());
            MirrorException unknown = assertThrows(MirrorException.class, () ->
                    mirrors.startMirrorTopics("nope", List.of("events"), List.of(), List.of()));
            assertEquals(MirrorErrors.UNKNOWN_CLUSTER_MIRROR.code, unknown.errorCode());
            assertEquals(MirrorErrors.CLUSTER_MIRROR_NOT_EMPTY.code,
                    assertThrows(MirrorException.class, () -> mirrors.deleteClusterMirror("m")).errorCode());
            Map<String, MirrorException> missing = mirrors.startMirrorTopics("m", List.of("no-such-topic"), List.of(),
                    List.of());
            assertTrue(missing.containsKey("no-such-topic"), "a topic the source does not have is refused");
            assertEquals(Map.of(), mirrors.stopMirrorTopics("m", List.of("events"), List.of()));
            mirrors.deleteClusterMirror("m");
            // failed over: the 350 mirrored offsets stay shared, the barrier after them is the destination's own
            MirrorInvariants.awaitSharedPrefix(source, destination, TP, 350);
        }
    }

    private static String state(MirrorAdmin mirrors) throws Exception {
        return MirroredClusters.partition(mirrors, "m", TP).state();
    }

    private static TopicDescription describe(Admin admin) throws Exception {
        return admin.describeTopics(List.of("events")).allTopicNames().get().get("events");
    }

    private static void produce(TestCluster cluster, int count, String prefix) throws Exception {
        cluster.produce("events", 0, count, prefix);
    }
}
