package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.server.BrokerServer;
import io.twinlog.testkit.FaultProxy;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A mirror whose source address starts answering for another cluster (decision 68): its MIRRORING partition goes
 * FAILED (retriable) with a reason naming both cluster IDs, nothing of the other cluster is appended and nothing is
 * cut, the mirror's state reason says so too, and once the address leads to the source cluster again the
 * partition mirrors by itself, the records the source took meanwhile included. Twice: with the source's brokers
 * advertising their own address (the proxy stands only for the bootstrap, and the source is away meanwhile), and
 * advertising the proxy's (every address the fetcher learned leads to the other cluster while retargeted).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SourceClusterIdTest {
    private static final String TOPIC = FailbackTest.TOPIC;
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @Test
    void aBootstrapAddressRetargetedWhileTheSourceIsAwayFailsThePartitionUntilTheSourceIsBack() throws Exception {
        try (TestCluster first = TestCluster.builder().brokers(1).build().start();
             TestCluster second = TestCluster.builder().brokers(1).build().start();
             TestCluster destination = TestCluster.builder().brokers(1).build().start()) {
            int firstPort = first.broker(0).boundPort("PLAINTEXT");
            try (FaultProxy address = new FaultProxy("source-address", "127.0.0.1", firstPort);
                 MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
                createAndProduce(first, "first", 10);
                createAndProduce(second, "second", 50);
                mirrors.createClusterMirror("m", Map.of("bootstrap.servers", address.address()));
                String firstId = startAndMirror(mirrors, first, destination, 10);

                // the address now leads to another cluster, and the first one is gone
                address.retarget("127.0.0.1", second.broker(0).boundPort("PLAINTEXT"));
                first.stopBroker(0);
                assertFailedForTheOtherCluster(mirrors, firstId, clusterId(second), destination, 10);

                first.startBroker(0); // back on its port, with its records and 5 more
                FailbackTest.produce(first, "first-later", 5);
                address.retarget("127.0.0.1", firstPort);
                assertMirroringAgain(mirrors, destination, 15);
            }
        }
    }

    @Test
    void aSourceAdvertisingTheRetargetedAddressIsNotMixedWithTheOtherClusterAndMirrorsOnceHealed() throws Exception {
        try (FaultProxy address = new FaultProxy("source-address", "127.0.0.1", 1); // aimed once first is up
             TestCluster first = TestCluster.builder().brokers(1)
                     .brokerProperty("listeners", "PLAINTEXT://127.0.0.1:0,MIRROR://127.0.0.1:0")
                     .brokerProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:0,MIRROR://" + address.address())
                     .brokerProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,MIRROR:PLAINTEXT")
                     .brokerProperty("inter.broker.listener.name", "PLAINTEXT")
                     .build().start();
             TestCluster second = TestCluster.builder().brokers(1).build().start();
             TestCluster destination = TestCluster.builder().brokers(1).build().start();
             MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
            int firstMirrorPort = first.broker(0).boundPort("MIRROR");
            address.retarget("127.0.0.1", firstMirrorPort);
            createAndProduce(first, "first", 10);
            createAndProduce(second, "second", 50);
            mirrors.createClusterMirror("m", Map.of("bootstrap.servers", address.address()));
            String firstId = startAndMirror(mirrors, first, destination, 10);

            // every address the fetcher knows (the bootstrap and the one Metadata advertised) leads elsewhere now
            address.retarget("127.0.0.1", second.broker(0).boundPort("PLAINTEXT"));
            FailbackTest.produce(first, "first-meanwhile", 5); // the source is up and takes writes meanwhile
            assertFailedForTheOtherCluster(mirrors, firstId, clusterId(second), destination, 10);

            address.retarget("127.0.0.1", firstMirrorPort);
            assertMirroringAgain(mirrors, destination, 15);
        }
    }

    private static void createAndProduce(TestCluster cluster, String prefix, int count) throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
        }
        FailbackTest.produce(cluster, prefix, count);
    }

    /** Starts mirroring {@value #TOPIC}, waits for {@code count} records on the destination; the recorded ID. */
    private static String startAndMirror(MirrorAdmin mirrors, TestCluster source, TestCluster destination,
                                         long count) throws Exception {
        String recorded = mirrors.describeClusterMirrors(List.of("m")).get("m").sourceClusterId();
        assertEquals(clusterId(source), recorded);
        assertEquals(Map.of(), mirrors.startMirrorTopics("m", List.of(TOPIC), List.of(), List.of()));
        Waits.waitUntil("mirroring " + count + " records", () -> partition(mirrors).state().equals("MIRRORING")
                && end(destination.broker(0)) == count, Duration.ofSeconds(60));
        return recorded;
    }

    private static void assertFailedForTheOtherCluster(MirrorAdmin mirrors, String firstId, String otherId,
                                                       TestCluster destination, long end) throws Exception {
        MirrorAdmin.PartitionDescription p = Waits.waitFor("the partition failed for the other cluster",
                () -> partition(mirrors), d -> d.state().equals("FAILED") && d.lastError() != null
                        && d.lastError().contains("WRONG_CLUSTER"), Duration.ofSeconds(60));
        assertTrue(p.lastError().contains(firstId) && p.lastError().contains(otherId), p.lastError());
        assertTrue(p.retryAttempt() >= 0, "a doubt, retried: " + p.retryAttempt());
        MirrorAdmin.MirrorDescription m = Waits.waitFor("the mirror says why", () -> mirrors
                .describeClusterMirrors(List.of("m")).get("m"), d -> d.stateReason() != null
                && d.stateReason().contains(otherId), Duration.ofSeconds(30));
        assertEquals("ACTIVE", m.state(), "not failed for good");
        assertEquals(end, end(destination.broker(0)), "nothing of the other cluster appended, nothing cut");
        assertTrue(FailbackTest.readAll(destination, end).stream().allMatch(v -> v.startsWith("first")));
    }

    private static void assertMirroringAgain(MirrorAdmin mirrors, TestCluster destination, long end)
            throws Exception {
        Waits.waitUntil("mirroring again by itself, " + end + " records", () -> partition(mirrors).state()
                .equals("MIRRORING") && end(destination.broker(0)) == end, Duration.ofSeconds(90));
        List<String> values = FailbackTest.readAll(destination, end);
        assertEquals(end, values.size());
        assertTrue(values.stream().allMatch(v -> v.startsWith("first")), "only the source cluster's records");
        Waits.waitUntil("the mirror's state reason cleared", () -> {
            String reason = mirrors.describeClusterMirrors(List.of("m")).get("m").stateReason();
            return reason == null || reason.isEmpty();
        });
    }

    private static String clusterId(TestCluster cluster) throws Exception {
        try (Admin admin = cluster.admin()) {
            return admin.describeCluster().clusterId().get();
        }
    }

    private static MirrorAdmin.PartitionDescription partition(MirrorAdmin mirrors) throws Exception {
        return mirrors.describeClusterMirrors(List.of("m")).get("m").topics().get(TOPIC).partitions().get(0);
    }

    private static long end(BrokerServer broker) {
        return broker.logStore().log(TP).map(l -> l.logEndOffset()).orElse(-1L);
    }
}
