package io.twinlog.mirror.runtime;

import io.twinlog.controller.zk.EmbeddedZooKeeper;
import io.twinlog.controller.zk.Json;
import io.twinlog.controller.zk.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@link AppliedTruncations} on a real ZooKeeper: what the broker's node {@code /mirror_truncations/<broker>} says
 * after confirmations, removals, a restart's load, and a ZooKeeper that was away when a confirmation came.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class AppliedTruncationsTest {
    private static final int BROKER = 2;
    private static final TopicPartition KEPT = new TopicPartition("orders", 0);
    private static final TopicPartition DELETED = new TopicPartition("deleted-while-down", 1);

    @TempDir
    File dir;
    private EmbeddedZooKeeper zooKeeper;
    private CuratorFramework zk;

    @BeforeEach
    void start() throws Exception {
        zooKeeper = EmbeddedZooKeeper.start(dir, 0);
        zk = zooKeeper.connectedClient();
    }

    @AfterEach
    void stop() {
        zk.close();
        zooKeeper.close();
    }

    @Test
    void confirmationsAndRemovalsAreWrittenToTheBrokersNode() throws Exception {
        try (AppliedTruncations truncations = new AppliedTruncations(BROKER, zk)) {
            truncations.confirm(KEPT, 7);
            truncations.confirm(DELETED, 3);
            waitForNode(Map.of("orders", Map.of("0", 7), "deleted-while-down", Map.of("1", 3)));
            truncations.forget(DELETED);
            waitForNode(Map.of("orders", Map.of("0", 7)));
        }
    }

    @Test
    void aRestartDropsThePartitionsTheBrokerNoLongerHosts() throws Exception {
        try (AppliedTruncations before = new AppliedTruncations(BROKER, zk)) {
            before.confirm(KEPT, 7);
            before.confirm(DELETED, 3);
            waitForNode(Map.of("orders", Map.of("0", 7), "deleted-while-down", Map.of("1", 3)));
        }
        // the topic was deleted while the broker was down: the first image after its start no longer gives it
        try (AppliedTruncations after = new AppliedTruncations(BROKER, zk)) {
            after.loadFrom(Map.of(KEPT, 7L, DELETED, 3L), Set.of(KEPT));
            waitForNode(Map.of("orders", Map.of("0", 7)));
        }
    }

    @Test
    void aRestartThatHostsEverythingLeavesTheNodeAsItWas() throws Exception {
        try (AppliedTruncations before = new AppliedTruncations(BROKER, zk)) {
            before.confirm(KEPT, 7);
            waitForNode(Map.of("orders", Map.of("0", 7)));
        }
        int version = zk.checkExists().forPath(ZkPaths.mirrorTruncations(BROKER)).getVersion();
        try (AppliedTruncations after = new AppliedTruncations(BROKER, zk)) {
            after.loadFrom(Map.of(KEPT, 7L), Set.of(KEPT));
            after.confirm(KEPT, 7); // the applier confirms what is already published: nothing to write
            TopicPartition other = new TopicPartition("orders", 1);
            after.confirm(other, 9); // a later write carries the loaded entry along
            waitForNode(Map.of("orders", Map.of("0", 7, "1", 9)));
            assertEquals(version + 1, zk.checkExists().forPath(ZkPaths.mirrorTruncations(BROKER)).getVersion(),
                    "one write, for the new confirmation");
        }
    }

    @Test
    void aConfirmationMadeWhileZooKeeperIsAwayLandsWhenItIsBack() throws Exception {
        int port = zooKeeper.port();
        try (AppliedTruncations truncations = new AppliedTruncations(BROKER, zk)) {
            zooKeeper.close();
            truncations.confirm(KEPT, 11);
            zooKeeper = EmbeddedZooKeeper.start(dir, port);
            waitForNode(Map.of("orders", Map.of("0", 11)));
        }
    }

    private void waitForNode(Map<String, Map<String, Integer>> expected) throws InterruptedException {
        String path = ZkPaths.mirrorTruncations(BROKER);
        Object[] last = {null};
        waitUntil(() -> {
            try {
                if (zk.checkExists().forPath(path) == null) {
                    return false;
                }
                last[0] = Json.decode(zk.getData().forPath(path), path).get("applied");
                return expected.equals(last[0]);
            } catch (Exception e) {
                last[0] = e;
                return false;
            }
        }, Duration.ofSeconds(60), () -> path + " says " + last[0] + ", not " + expected);
    }

    private static void waitUntil(BooleanSupplier condition, Duration timeout, Supplier<String> what)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail(what.get());
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
    }
}
