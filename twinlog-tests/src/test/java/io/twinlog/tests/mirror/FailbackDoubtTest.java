package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.server.BrokerServer;
import io.twinlog.testkit.FaultProxy;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.Quarantined;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.SaslConfigs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.HashMap;
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
 * connections (cut), or leads to another cluster (retargeted); or B serves SASL only and the mirror's password no
 * longer matches its user's there. In each case A's partition stays in LOG_TRUNCATION
 * with the error in describe and its attempts counting up, its log untouched and nothing quarantined; once the
 * fault is healed the failback completes with the cut at B's last mirrored offset (100), not at 0.
 *
 * <p>A's partition lives on its broker 1 alone, stopped while the topic is started (a start asks the source
 * itself, through the same proxy) and started again with the fault in place, so that its very first question to
 * B meets the fault.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class FailbackDoubtTest {
    private static final String TOPIC = FailbackTest.TOPIC;
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final int LEADER = 1;
    private static final String MIRROR_PASSWORD = "mirror-secret";
    private static final String PLAIN_LOGIN = "org.apache.kafka.common.security.plain.PlainLoginModule";

    /** What goes wrong between A's leader and B, and the failure kind describe must name. */
    enum Fault {
        BLACKHOLE("TIMEOUT"),
        CUT("DISCONNECTED"),
        ANOTHER_CLUSTER("WRONG_CLUSTER"),
        /** B serves SASL only, and the mirror's SCRAM password no longer matches B's (changed on B). */
        WRONG_PASSWORD("AUTHENTICATION");

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
             TestCluster b = (fault == Fault.WRONG_PASSWORD ? saslCluster() : TestCluster.builder().brokers(1))
                     .build().start();
             TestCluster other = fault == Fault.ANOTHER_CLUSTER ? TestCluster.builder().brokers(1).build().start()
                     : null;
             Admin aAdmin = a.admin();
             MirrorAdmin onB = MirrorAdmin.create(clientConfigs(b));
             MirrorAdmin onA = MirrorAdmin.create(a.bootstrapServers(), Duration.ofSeconds(60))) {
            aAdmin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(LEADER))))).all().get();
            FailbackTest.produce(a, "a", 100);
            MirrorSteps.startMirroring(onB, "from-a", a, TOPIC);
            Waits.waitUntil("B holds A's 100 records", () -> end(b.broker(0)) == 100);
            MirrorSteps.failOver(onB, "from-a", TOPIC);
            FailbackTest.produce(a, "lost", 20); // A's tail B never saw: the only records the failback may cut
            FailbackTest.produce(b, "b", 30);

            String[] bAddress = b.bootstrapServers().split(",")[0].split(":");
            try (FaultProxy toB = new FaultProxy("a-to-b", bAddress[0], Integer.parseInt(bAddress[1]))) {
                Map<String, String> fromB = new HashMap<>(Map.of("bootstrap.servers", toB.address()));
                if (fault == Fault.BLACKHOLE) {
                    // the mirror's fetchers give up on the blackholed source in 3 s, not Kafka's default 30 s
                    fromB.put("request.timeout.ms", "3000");
                }
                if (fault == Fault.WRONG_PASSWORD) {
                    setMirrorPassword(b, MIRROR_PASSWORD);
                    fromB.putAll(mirrorUser());
                }
                onA.createClusterMirror("from-b", fromB); // B's cluster ID recorded
                a.stopBroker(LEADER);
                assertEquals(Map.of(), onA.startMirrorTopics("from-b", List.of(TOPIC), List.of(), List.of()));
                switch (fault) {
                    case BLACKHOLE -> toB.blackhole();
                    case CUT -> toB.cut();
                    case ANOTHER_CLUSTER -> {
                        String[] otherAddress = other.bootstrapServers().split(",")[0].split(":");
                        toB.retarget(otherAddress[0], Integer.parseInt(otherAddress[1]));
                    }
                    case WRONG_PASSWORD -> setMirrorPassword(b, "rotated-on-b-only");
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
                    case WRONG_PASSWORD -> setMirrorPassword(b, MIRROR_PASSWORD);
                }
                MirrorAdmin.PartitionDescription done = Waits.waitFor("A mirrors B's records after the shared "
                        + "prefix", () -> partition(onA), p -> p.state().equals("MIRRORING")
                        && end(a.broker(LEADER)) == 131, Duration.ofSeconds(60));
                assertEquals(100, done.truncationOffset(), "cut at B's last mirrored offset, not at 0");
                assertEquals(20, done.truncatedOffsets(), "only A's own tail");
                assertTrue(done.lastError() == null || done.lastError().isEmpty(), done.lastError());
                List<String> values = FailbackTest.readAll(a, 131);
                assertEquals(130, values.size());
                assertTrue(values.stream().noneMatch(v -> v.startsWith("lost")), "A's own tail is cut");
                assertEquals(20, Quarantined.read(a, 20).size(), "and kept in the quarantine");
            }
        }
    }

    /**
     * An operator's mistake in the order of steps: A starts mirroring back from B while B still mirrors the topic
     * from A (its failover not run yet). That would be a loop (A's records copied back into A): the start is refused
     * with MIRROR_LOOP, naming the step missing, and changes nothing on A (decision 125; before prefixed mirrors the
     * start was taken and waited in LOG_TRUNCATION for B's failover, decision 76, which still answers a start made
     * while B's failover runs). Once B fails over, the failback completes at B's point.
     */
    @Test
    void aFailbackStartedBeforeThePeersFailoverIsRefusedAsALoopAndCutsNothing() throws Exception {
        try (TestCluster a = TestCluster.builder().brokers(1).build().start();
             TestCluster b = TestCluster.builder().brokers(1).build().start();
             Admin aAdmin = a.admin();
             MirrorAdmin onB = MirrorAdmin.create(clientConfigs(b));
             MirrorAdmin onA = MirrorAdmin.create(a.bootstrapServers(), Duration.ofSeconds(60))) {
            aAdmin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            FailbackTest.produce(a, "a", 100);
            MirrorSteps.startMirroring(onB, "from-a", a, TOPIC);
            Waits.waitUntil("B holds A's 100 records", () -> end(b.broker(0)) == 100);

            onA.createClusterMirror("from-b", Map.of("bootstrap.servers", b.bootstrapServers()));
            Map<String, ? extends Exception> refused = onA.startMirrorTopics("from-b", List.of(TOPIC), List.of(),
                    List.of());
            assertEquals(List.of(TOPIC), List.copyOf(refused.keySet()), "the start is refused: " + refused);
            String reason = String.valueOf(refused.get(TOPIC).getMessage());
            assertTrue(reason.contains("MIRROR_LOOP") && reason.contains("--stop"), reason);
            assertEquals(100, end(a.broker(0)), "A's log is untouched");
            assertFalse(aAdmin.listTopics().names().get().contains(Quarantined.TOPIC), "nothing quarantined");
            FailbackTest.produce(a, "a-after-refusal", 1);
            Waits.waitUntil("A's topic stays writable", () -> end(a.broker(0)) == 101);
            Waits.waitUntil("B mirrors A's record", () -> end(b.broker(0)) == 101);

            MirrorSteps.failOver(onB, "from-a", TOPIC);
            FailbackTest.produce(b, "b", 30);
            assertEquals(Map.of(), onA.startMirrorTopics("from-b", List.of(TOPIC), List.of(), List.of()),
                    "after B's failover the same start is a failback");
            // B's log: A's 101 records, B's producer-state barrier at 101, B's 30
            MirrorAdmin.PartitionDescription done = Waits.waitFor("A mirrors B's new records after the shared "
                    + "prefix", () -> partition(onA), p -> p.state().equals("MIRRORING")
                    && end(a.broker(0)) == 132, Duration.ofSeconds(60));
            assertEquals(101, done.truncationOffset(), "cut at B's last mirrored offset, not at 0");
            assertEquals(0, done.truncatedOffsets(), "nothing of A's cut");
            assertEquals(131, FailbackTest.readAll(a, 132).size());
        }
    }

    private static MirrorAdmin.PartitionDescription partition(MirrorAdmin onA) throws Exception {
        return onA.describeClusterMirrors(List.of("from-b")).get("from-b").topics().get(TOPIC).partitions().get(0);
    }

    private static long end(BrokerServer broker) {
        return broker.logStore().log(TP).map(l -> l.logEndOffset()).orElse(-1L);
    }

    /** One broker serving SASL_PLAINTEXT only: the broker logs in with PLAIN, users with SCRAM-SHA-512. */
    private static TestCluster.Builder saslCluster() {
        return TestCluster.builder().brokers(1)
                .brokerProperty("listeners", "SASL_PLAINTEXT://127.0.0.1:0")
                .brokerProperty("inter.broker.listener.name", "SASL_PLAINTEXT")
                .brokerProperty("sasl.mechanism.inter.broker.protocol", "PLAIN")
                .brokerProperty("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512")
                .brokerProperty("listener.name.sasl_plaintext.plain.sasl.jaas.config", PLAIN_LOGIN
                        + " required username=\"broker\" password=\"broker-secret\" user_broker=\"broker-secret\";")
                .brokerProperty("listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config",
                        "org.apache.kafka.common.security.scram.ScramLoginModule required;")
                .clientProperty(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT")
                .clientProperty(SaslConfigs.SASL_MECHANISM, "PLAIN")
                .clientProperty(SaslConfigs.SASL_JAAS_CONFIG, PLAIN_LOGIN
                        + " required username=\"broker\" password=\"broker-secret\";");
    }

    /** The source client configs of A's mirror: B's SCRAM user "mirror". */
    private static Map<String, String> mirrorUser() {
        return Map.of(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT",
                SaslConfigs.SASL_MECHANISM, "SCRAM-SHA-512",
                SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.scram.ScramLoginModule required "
                        + "username=\"mirror\" password=\"" + MIRROR_PASSWORD + "\";");
    }

    /** Sets the password of B's SCRAM user "mirror" (live on B's brokers). */
    private static void setMirrorPassword(TestCluster b, String password) throws Exception {
        try (Admin admin = b.admin()) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("mirror",
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), password))).all().get();
        }
    }

    private static Map<String, Object> clientConfigs(TestCluster cluster) {
        Map<String, Object> configs = new HashMap<>(cluster.clientProperties());
        configs.put("bootstrap.servers", cluster.bootstrapServers());
        configs.put("request.timeout.ms", 60_000);
        configs.put("default.api.timeout.ms", 60_000);
        return configs;
    }
}
