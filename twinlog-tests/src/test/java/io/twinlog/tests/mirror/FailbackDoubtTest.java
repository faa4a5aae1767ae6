package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.server.BrokerServer;
import io.twinlog.testkit.FaultProxy;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.Quarantined;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A failback never cuts on doubt (issue 25, point 2). A is mirrored to B, B fails over and takes writes, A took 20
 * more that B never saw; then A mirrors back from B through a {@link FaultProxy} that fails the way a network or an
 * operator does when A's leader asks B what it last mirrored: it times out (blackholed), refuses and drops
 * connections (cut), or leads to another cluster (retargeted). In each case A's partition stays in LOG_TRUNCATION
 * with the error in describe and its attempts counting up, its log untouched and nothing quarantined; once the
 * fault is healed the failback completes with the cut at B's last mirrored offset (100), not at 0.
 *
 * <p>A's partition lives on its broker 1 alone, stopped while the topic is started (a start asks the source
 * itself, through the same proxy) and started again with the fault in place, so that its very first question to
 * B meets the fault.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class FailbackDoubtTest {
    private static final String TOPIC = "accounts";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final int LEADER = 1;

    /** What goes wrong between A's leader and B, and the failure kind describe must name. */
    enum Fault {
        BLACKHOLE("TIMEOUT"),
        CUT("DISCONNECTED"),
        ANOTHER_CLUSTER("WRONG_CLUSTER");

        final String failure;

        Fault(String failure) {
            this.failure = failure;
        }
    }

    @ParameterizedTest
    @EnumSource(Fault.class)
    void aFailbackWhosePeerFailsCutsNothingAndCompletesAtTheLastMirroredPointOnceHealed(Fault fault)
            throws Exception {
        try (TestCluster a = TestCluster.builder().brokers(2).build().start();
             TestCluster b = TestCluster.builder().brokers(1).build().start();
             TestCluster other = TestCluster.builder().brokers(1).build().start();
             Admin aAdmin = a.admin();
             MirrorAdmin onB = MirrorAdmin.create(b.bootstrapServers(), Duration.ofSeconds(60));
             MirrorAdmin onA = MirrorAdmin.create(a.bootstrapServers(), Duration.ofSeconds(60))) {
            aAdmin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(LEADER))))).all().get();
            produce(a, "a", 100);
            MirrorSteps.startMirroring(onB, "from-a", a, TOPIC);
            Waits.waitUntil("B holds A's 100 records", () -> end(b.broker(0)) == 100);
            MirrorSteps.failOver(onB, "from-a", TOPIC);
            produce(a, "lost", 20); // A's tail B never saw: the only records the failback may cut
            produce(b, "b", 30);

            String[] bAddress = b.bootstrapServers().split(",")[0].split(":");
            try (FaultProxy toB = new FaultProxy("a-to-b", bAddress[0], Integer.parseInt(bAddress[1]))) {
                onA.createClusterMirror("from-b", Map.of("bootstrap.servers", toB.address())); // B's ID recorded
                a.stopBroker(LEADER);
                assertEquals(Map.of(), onA.startMirrorTopics("from-b", List.of(TOPIC), List.of(), List.of()));
                switch (fault) {
                    case BLACKHOLE -> toB.blackhole();
                    case CUT -> toB.cut();
                    case ANOTHER_CLUSTER -> {
                        String[] otherAddress = other.bootstrapServers().split(",")[0].split(":");
                        toB.retarget(otherAddress[0], Integer.parseInt(otherAddress[1]));
                    }
                }
                a.startBroker(LEADER);

                MirrorAdmin.PartitionDescription doubting = Waits.waitFor("A's partition asked B twice and failed "
                        + "with " + fault.failure, () -> partition(onA), p -> p.retryAttempt() >= 2
                        && p.lastError() != null && p.lastError().contains(fault.failure), Duration.ofSeconds(60));
                assertEquals("LOG_TRUNCATION", doubting.state(), "the failback waits");
                assertTrue(doubting.lastError().contains("nothing is cut"), doubting.lastError());
                assertEquals(-1, doubting.truncationOffset(), "no truncation point decided");
                assertEquals(120, end(a.broker(LEADER)), "A's log is untouched");
                assertFalse(aAdmin.listTopics().names().get().contains(Quarantined.TOPIC), "nothing quarantined");

                switch (fault) {
                    case BLACKHOLE, CUT -> toB.heal();
                    case ANOTHER_CLUSTER -> toB.retarget(bAddress[0], Integer.parseInt(bAddress[1]));
                }
                MirrorAdmin.PartitionDescription done = Waits.waitFor("A mirrors B's records after the shared "
                        + "prefix", () -> partition(onA), p -> p.state().equals("MIRRORING")
                        && end(a.broker(LEADER)) == 131, Duration.ofSeconds(60));
                assertEquals(100, done.truncationOffset(), "cut at B's last mirrored offset, not at 0");
                assertEquals(20, done.truncatedOffsets(), "only A's own tail");
                assertTrue(done.lastError() == null || done.lastError().isEmpty(), done.lastError());
                List<String> values = readAll(a);
                assertEquals(130, values.size());
                assertTrue(values.stream().noneMatch(v -> v.startsWith("lost")), "A's own tail is cut");
                assertEquals(20, Quarantined.read(a, 20).size(), "and kept in the quarantine");
            }
        }
    }

    private static MirrorAdmin.PartitionDescription partition(MirrorAdmin onA) throws Exception {
        return onA.describeClusterMirrors(List.of("from-b")).get("from-b").topics().get(TOPIC).partitions().get(0);
    }

    private static long end(BrokerServer broker) {
        return broker.logStore().log(TP).map(l -> l.logEndOffset()).orElse(-1L);
    }

    private static void produce(TestCluster cluster, String prefix, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("linger.ms", 5))) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(TOPIC, 0, null, (prefix + "-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
    }

    private static List<String> readAll(TestCluster cluster) {
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = cluster.consumer(Map.of())) {
            c.assign(List.of(TP));
            Waits.waitUntil("read to the end", () -> {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
                    out.add(new String(r.value(), StandardCharsets.UTF_8));
                }
                return c.position(TP) >= end(cluster.broker(LEADER));
            });
        }
        return out;
    }
}
