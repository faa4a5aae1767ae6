package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.FaultProxy;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A mirror whose source address starts answering for another cluster stops mirroring and says why. */
class SourceClusterIdTest {

    @Test
    void aChangedSourceClusterIdStopsTheMirror() throws Exception {
        try (TestCluster first = TestCluster.builder().brokers(1).build().start();
             TestCluster second = TestCluster.builder().brokers(1).build().start();
             TestCluster destination = TestCluster.builder().brokers(1).build().start()) {
            int firstPort = first.broker(0).boundPort("PLAINTEXT");
            try (FaultProxy address = new FaultProxy("source-address", "127.0.0.1", firstPort);
                 Admin admin = first.admin();
                 MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
                admin.createTopics(List.of(new NewTopic("t", 1, (short) 1))).all().get();
                // the source's brokers advertise their own address: the proxy stands only for the bootstrap
                mirrors.createClusterMirror("m", Map.of("bootstrap.servers", address.address()));
                String firstId = mirrors.describeClusterMirrors(List.of("m")).get("m").sourceClusterId();
                assertEquals(admin.describeCluster().clusterId().get(), firstId);
                assertEquals(Map.of(), mirrors.startMirrorTopics("m", List.of("t"), List.of(), List.of()));
                Waits.waitUntil("mirroring", () -> state(mirrors).equals("MIRRORING"));

                // the address now leads to another cluster, and the first one is gone
                address.retarget("127.0.0.1", second.broker(0).boundPort("PLAINTEXT"));
                first.killBroker(0);
                Waits.waitUntil("the mirror fails with the reason", () -> {
                    MirrorAdmin.MirrorDescription d = mirrors.describeClusterMirrors(List.of("m")).get("m");
                    return d.state().equals("FAILED") && d.stateReason() != null
                            && d.stateReason().contains("source cluster ID changed");
                }, Duration.ofSeconds(60));
                MirrorAdmin.PartitionDescription p = mirrors.describeClusterMirrors(List.of("m")).get("m").topics()
                        .get("t").partitions().get(0);
                assertEquals("FAILED", p.state());
                assertTrue(p.lastError().contains(firstId), p.lastError());
                assertEquals(-1, p.retryAttempt(), "not retried: it needs the operator");
            }
        }
    }

    private static String state(MirrorAdmin mirrors) throws Exception {
        return mirrors.describeClusterMirrors(List.of("m")).get("m").topics().get("t").partitions().get(0).state();
    }
}
