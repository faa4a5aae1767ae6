package io.twinlog.tests.replication;

import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.twinlog.tests.replication.Replication.awaitIsr;
import static io.twinlog.tests.replication.Replication.awaitLeaderIn;
import static io.twinlog.tests.replication.Replication.createTopic;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An operator stops (SIGTERM) a broker that has lost ZooKeeper: the controlled shutdown cannot reach the controller,
 * so the broker gives up after {@code controlled.shutdown.timeout.ms} and stops, rather than retrying its ZooKeeper
 * write for minutes (Curator's retries, each as long as the connection timeout); its partitions move once its
 * session expires, as after a crash.
 */
@Timeout(300)
class ShutdownWithoutZooKeeperTest {
    private static final long SHUTDOWN_TIMEOUT_MS = 3_000;
    private static final TopicPartition TP = new TopicPartition("t", 0);

    @Test
    void aBrokerCutOffZooKeeperStopsWithinItsControlledShutdownTimeout() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).withFaultProxies()
                .brokerProperty("controlled.shutdown.timeout.ms", Long.toString(SHUTDOWN_TIMEOUT_MS))
                .brokerProperty("zookeeper.session.timeout.ms", "6000").build().start();
             Admin admin = cluster.admin()) {
            int controller = admin.describeCluster().controller().get().id();
            int stopped = controller == 0 ? 1 : 0;
            int other = 3 - controller - stopped;
            createTopic(admin, "t", Map.of(0, List.of(stopped, other, controller)), Map.of());
            awaitIsr(admin, TP, Set.of(0, 1, 2), Duration.ofSeconds(30));

            cluster.cutZooKeeper(stopped);
            long start = System.nanoTime();
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> cluster.stopBroker(stopped),
                    "broker " + stopped + " must not wait on ZooKeeper past its controlled shutdown timeout");
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(tookMs < SHUTDOWN_TIMEOUT_MS + 10_000, "stopped in " + tookMs + " ms");
            // its session expires and the partition moves, as after a crash
            awaitLeaderIn(admin, TP, Set.of(other, controller), Duration.ofSeconds(30));
        }
    }
}
