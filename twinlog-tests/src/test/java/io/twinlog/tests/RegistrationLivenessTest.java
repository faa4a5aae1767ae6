package io.twinlog.tests;

import io.twinlog.common.tasks.TaskHealth;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The broker's registration check is among its background tasks (issue 25, point 8; decision 78): its age is the
 * time since a check last found the broker registered in ZooKeeper (or wrote it), so a broker cut off from ZooKeeper,
 * and so unregistered once its session expires, shows a growing age, and a small one again once it is back.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RegistrationLivenessTest {
    private static final String TASK = "broker-registration";
    /** Two checks' worth (one every 5 s). */
    private static final long FRESH_MS = 10_000;
    private static final long STALE_MS = 15_000;

    @Test
    void aBrokerCutOffFromZooKeeperShowsItsRegistrationAging() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).withFaultProxies().build().start()) {
            Waits.waitUntil(TASK + " reports fresh checks", () -> age(cluster).map(a -> a < FRESH_MS).orElse(false));

            cluster.cutZooKeeper(0);
            Waits.waitFor(TASK + " ages while ZooKeeper is away", () -> age(cluster),
                    a -> a.map(ms -> ms > STALE_MS).orElse(false), Duration.ofSeconds(45));
            cluster.healZooKeeper(0);
            Waits.waitFor(TASK + " fresh again once the broker is registered", () -> age(cluster),
                    a -> a.map(ms -> ms < FRESH_MS).orElse(false), Duration.ofSeconds(60));
        }
    }

    private static Optional<Long> age(TestCluster cluster) {
        return cluster.broker(0).metrics().backgroundTasks().health().stream().filter(t -> t.name().equals(TASK))
                .findFirst().map(TaskHealth::lastSuccessAgeMs);
    }
}
