package io.twinlog.tests.mirror;

import io.twinlog.cli.MirrorsCommand;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.Quarantined;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.twinlog.tests.mirror.MirrorPartitions.described;
import static io.twinlog.tests.mirror.MirrorPartitions.isr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An unclean leader election on the source while mirroring (issue 12, point 3): the source's new leader lacks
 * records the destination already mirrored, and takes new ones at the same offsets. The destination's fetcher sees
 * the source's epoch end before its own log end. With {@code mirror.support.unclean.leader.election} every replica
 * of the destination truncates to the diverging point and mirroring goes on (ULE_RECOVERY); without it the
 * partition is FAILED for good, saying which records this cluster holds that the source lost and the two choices,
 * and the operator's start makes it follow the source.
 */
@Timeout(300)
class SourceUncleanElectionTest {
    private static final String TOPIC = "orders";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final int COMMON = 10;
    private static final int LOST = 5;

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void withTheFlagEveryDestinationReplicaTruncatesToTheDivergingPointAndMirroringGoesOn() throws Exception {
        scenario(true);
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void withoutTheFlagThePartitionFailsWithWhatWouldBeLostUntilTheOperatorStartsIt() throws Exception {
        scenario(false);
    }

    private void scenario(boolean flag) throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(3).withFaultProxies()
                .brokerProperty("replica.lag.time.max.ms", "3000"),
                TestCluster.builder().brokers(3))) {
            TestCluster a = clusters.source();
            TestCluster b = clusters.destination();
            Admin aAdmin = clusters.sourceAdmin();
            Admin bAdmin = clusters.destinationAdmin();
            MirrorAdmin onB = clusters.mirrors();
            int controller = aAdmin.describeCluster().controller().get().id();
            int[] pair = List.of(0, 1, 2).stream().filter(id -> id != controller).mapToInt(Integer::intValue)
                    .toArray();
            int oldLeader = pair[0];
            int survivor = pair[1];
            aAdmin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(oldLeader, survivor)))
                    .configs(Map.of("unclean.leader.election.enable", "true")))).all().get();
            Waits.waitUntil("both replicas of A in sync", () -> isr(a, TP).size() == 2);
            try (KafkaProducer<byte[], byte[]> acksAll = a.producer(Map.of("acks", "all"))) {
                send(acksAll, "common", COMMON);
            }
            MirrorSteps.startMirroring(onB, "from-a", a, TOPIC);
            if (flag) {
                ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, TOPIC);
                Waits.waitUntil("B's mirror topic", () -> bAdmin.listTopics().names().get().contains(TOPIC));
                bAdmin.incrementalAlterConfigs(Map.of(topic, List.of(new AlterConfigOp(new ConfigEntry(
                        "mirror.support.unclean.leader.election", "true"), AlterConfigOp.OpType.SET)))).all().get();
            }
            Waits.waitUntil("B mirrored the common records", () -> ReplicaLogs.logEndOffsets(b, TP).values()
                    .stream().allMatch(end -> end == COMMON));

            // the survivor falls out of the ISR; the old leader takes records alone, which B mirrors
            a.cutNetwork(oldLeader, survivor);
            try (KafkaProducer<byte[], byte[]> acksOne = a.producer(Map.of("acks", "1"))) {
                Waits.waitUntil("A's ISR shrunk to the old leader", () -> {
                    send(acksOne, "shrinking", 1);
                    return isr(a, TP).equals(List.of(oldLeader));
                });
                send(acksOne, "lost", LOST);
            }
            long oldEnd = a.broker(oldLeader).logStore().log(TP).orElseThrow().logEndOffset();
            long divergedAt = a.broker(survivor).logStore().log(TP).orElseThrow().logEndOffset();
            Waits.waitUntil("B mirrored the old leader's tail", () -> ReplicaLogs.logEndOffsets(b, TP).values()
                    .stream().allMatch(end -> end == oldEnd));

            // the old leader dies; the out-of-sync survivor leads uncleanly and takes new records at those offsets
            a.killBroker(oldLeader);
            a.healNetwork(oldLeader, survivor);
            Waits.waitUntil("the survivor leads A", () -> a.broker(survivor).replicaManager().partition(TP)
                    .map(p -> p.isLeader()).orElse(false));
            try (KafkaProducer<byte[], byte[]> acksOne = a.producer(Map.of("acks", "1"))) {
                send(acksOne, "new-leader", 3);
            }

            if (!flag) {
                MirrorAdmin.PartitionDescription failed = Waits.waitFor("B's partition FAILED",
                        () -> partition(onB), p -> p.state().equals("FAILED"), Duration.ofSeconds(60));
                assertTrue(failed.retryAttempt() < 0, "not retried by itself");
                long held = oldEnd - divergedAt;
                assertTrue(failed.lastError().contains(held + " records at offsets " + divergedAt + " to "
                        + (oldEnd - 1)) && failed.lastError().contains("--remove")
                        && failed.lastError().contains("--start"), failed.lastError());
                assertEquals(oldEnd, ReplicaLogs.logEndOffsets(b, TP).values().iterator().next(),
                        "nothing is cut before the operator decides");
                // the operator's --verify shows where the two clusters part (exit status 1)
                StringWriter verifyOut = new StringWriter();
                CommandLine verify = MirrorsCommand.newCommandLine().setOut(new PrintWriter(verifyOut, true));
                int status = verify.execute("--bootstrap-server", b.bootstrapServers(), "--verify", "--mirror",
                        "from-a");
                assertEquals(1, status, verifyOut.toString());
                assertTrue(verifyOut.toString().startsWith(TOPIC + " 0 differ from offset " + divergedAt + " (here: "),
                        verifyOut.toString());
                assertTrue(onB.startMirrorTopics("from-a", List.of(TOPIC), List.of(), List.of()).isEmpty(),
                        "the operator starts the topic again: follow the source");
            }
            Waits.waitUntil("B mirrors again", () -> partition(onB).state().equals("MIRRORING"),
                    Duration.ofSeconds(60));
            a.startBroker(oldLeader);
            List<ReplicaLogs.Batch> converged = MirrorInvariants.awaitMirrored(a, b, TP);
            assertTrue(converged.stream().flatMap(batch -> batch.values().stream())
                    .noneMatch(v -> v != null && v.startsWith("lost")), "no replica kept what the source lost");
            assertTrue(converged.stream().flatMap(batch -> batch.values().stream())
                    .anyMatch("new-leader-2"::equals), "the source's new records are mirrored");
            assertEquals(divergedAt, partition(onB).truncationOffset(), "B's replicas were cut at the diverging point");
            List<Quarantined> kept = Quarantined.read(b, (int) (oldEnd - divergedAt));
            assertTrue(kept.stream().anyMatch(q -> "lost-0".equals(q.value())
                    && Long.toString(oldEnd - LOST).equals(
                            q.headers().get("twinlog.quarantine.offset"))), "B kept what it cut: " + kept);
            assertTrue(kept.stream().allMatch(q -> "from-a".equals(q.headers().get("twinlog.quarantine.mirror"))));
        }
    }

    private static void send(KafkaProducer<byte[], byte[]> producer, String prefix, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            producer.send(new ProducerRecord<>(TOPIC, 0, null, (prefix + "-" + i).getBytes(StandardCharsets.UTF_8)))
                    .get();
        }
    }

    /** The partition as mirror "from-a" describes it. */
    private static MirrorAdmin.PartitionDescription partition(MirrorAdmin admin) throws Exception {
        return described(admin, "from-a", TP);
    }
}
