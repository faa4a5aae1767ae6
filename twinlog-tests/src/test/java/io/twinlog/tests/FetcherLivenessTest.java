package io.twinlog.tests;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.common.tasks.TaskHealth;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Fetcher threads report the age of their last completed round as background tasks (issue 25, point 8; decision
 * 69): a replica fetcher whose leader is blackholed (its round waits out the request timeout) shows a growing age,
 * and a small one again once the leader answers; a mirror's fetch threads report theirs while they mirror.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class FetcherLivenessTest {
    private static final long STUCK_MS = 5_000;
    private static final long FRESH_MS = 2_000;

    @Test
    void aReplicaFetcherStuckOnABlackholedLeaderAges() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(2).withFaultProxies()
                .brokerProperty("replica.socket.timeout.ms", "15000")
                .brokerProperty("replica.lag.time.max.ms", "60000").build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("followed", Map.of(0, List.of(0, 1))))).all().get();
            String task = "replica-fetcher-1-from-0-0";
            Waits.waitUntil(task + " reports fresh rounds", () -> age(cluster, 1, task).map(a -> a < FRESH_MS)
                    .orElse(false));

            cluster.blackholeNetwork(1, 0);
            Waits.waitFor(task + " ages while its fetch waits on the blackholed leader", () -> age(cluster, 1, task),
                    a -> a.map(ms -> ms > STUCK_MS).orElse(false), Duration.ofSeconds(30));
            cluster.healNetwork(1, 0);
            Waits.waitFor(task + " completes rounds again", () -> age(cluster, 1, task),
                    a -> a.map(ms -> ms < FRESH_MS).orElse(false), Duration.ofSeconds(60));
        }
    }

    /**
     * A mirror's metadata loop and its source-broker fetch thread report fresh rounds while they mirror. (Blackholing
     * the source does not hold a source-broker fetch round: the age stays small, so the stuck case is shown on the
     * replica fetcher above.)
     */
    @Test
    void aMirrorsFetchThreadsReportTheirRounds() throws Exception {
        try (TestCluster source = TestCluster.builder().brokers(1).build().start();
             TestCluster destination = TestCluster.builder().brokers(1).build().start();
             Admin sourceAdmin = source.admin();
             MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
            sourceAdmin.createTopics(List.of(new NewTopic("orders", 1, (short) 1))).all().get();
            MirrorSteps.startMirroring(mirrors, "m", source, "orders");
            Waits.waitUntil("the mirror's fetch thread and metadata loop report fresh rounds", () ->
                    age(destination, 0, "mirror-fetcher-m-from-0").map(a -> a < FRESH_MS).orElse(false)
                            && age(destination, 0, "mirror-fetcher-m").map(a -> a < FRESH_MS).orElse(false),
                    Duration.ofSeconds(60));
        }
    }

    /** The age of background task {@code name}'s last success on broker {@code id}, if it reports one. */
    private static Optional<Long> age(TestCluster cluster, int id, String name) {
        return cluster.broker(id).metrics().backgroundTasks().health().stream().filter(t -> t.name().equals(name))
                .findFirst().map(TaskHealth::lastSuccessAgeMs);
    }
}
