package io.twinlog.controller.zk;

import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.store.ControllerEpoch;
import io.twinlog.controller.store.StateWrite;
import io.twinlog.controller.store.StateWriteResult;
import io.twinlog.controller.store.StateWriteResult.Outcome;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Partition-state writes split into several ZooKeeper transactions, on a real ZooKeeper: each transaction's outcome
 * comes back, so a committed one is never reported as failed. Transactions of two states make six partitions three.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ControllerZkClientTest {
    private static final String TOPIC = "orders";
    private static final int PARTITIONS = 6;

    @TempDir
    Path dataDir;
    private EmbeddedZooKeeper server;
    private CuratorFramework zk;
    private ControllerZkClient client;
    private ControllerEpoch epoch;

    @BeforeEach
    void startZooKeeper() throws Exception {
        server = EmbeddedZooKeeper.start(dataDir.toFile(), 0);
        zk = CuratorFrameworkFactory.newClient(server.connectString(), new ExponentialBackoffRetry(100, 3));
        zk.start();
        assertTrue(zk.blockUntilConnected(30, TimeUnit.SECONDS));
        MetadataStore store = new MetadataStore(zk);
        store.ensureLayout();
        Map<Integer, List<Integer>> assignment = new LinkedHashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            assignment.put(p, List.of(0, 1));
        }
        store.createTopic(TOPIC, Uuid.randomUuid(), assignment, Map.of());
        client = new ControllerZkClient(zk, 2);
        epoch = client.tryClaim(0).orElseThrow();
    }

    @AfterEach
    void stopZooKeeper() {
        if (zk != null) {
            zk.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aLaterTransactionRefusedOnAVersionLeavesTheEarlierCommittedAndSaysSo() throws Exception {
        assertTrue(client.writeStates(epoch, writes(StateWrite.CREATE, List.of(0, 1))).isComplete());
        // partition 3 changes behind the controller's back: the second transaction (partitions 2 and 3) is stale
        zk.setData().forPath(ZkPaths.partitionState(TOPIC, 3), Json.encode(new PartitionState(1, 1, List.of(1), 1)
                .toJson()));

        StateWriteResult result = client.writeStates(epoch, writes(0, List.of(0)));

        assertEquals(List.of(Outcome.COMMITTED, Outcome.STALE, Outcome.COMMITTED),
                result.batches().stream().map(StateWriteResult.Batch::outcome).toList(), result.summary());
        assertTrue(result.batches().get(1).reason().contains(TOPIC + "-3"),
                "the reason names the partition that changed: " + result.batches().get(1).reason());
        assertEquals(Set.of(0, 1, 4, 5), result.committed().stream().map(w -> w.partition().partition())
                .collect(Collectors.toSet()));
        for (int p : List.of(0, 1, 4, 5)) {
            assertEquals(List.of(0), state(p).isr(), "partition " + p + " committed");
            assertEquals(1, version(p));
        }
        assertEquals(List.of(0, 1), state(2).isr(), "partition 2 shares the refused transaction: not written");
        assertEquals(0, version(2));
        assertEquals(List.of(1), state(3).isr());
    }

    @Test
    void aDeposedControllerCommitsNothingAndIsToldItWasFenced() throws Exception {
        assertTrue(client.writeStates(epoch, writes(StateWrite.CREATE, List.of(0, 1))).isComplete());
        client.resign(0);
        client.tryClaim(1).orElseThrow(); // broker 1 claims the next epoch

        StateWriteResult result = client.writeStates(epoch, writes(0, List.of(0)));

        assertEquals(List.of(Outcome.FENCED, Outcome.NOT_ATTEMPTED, Outcome.NOT_ATTEMPTED),
                result.batches().stream().map(StateWriteResult.Batch::outcome).toList(), result.summary());
        assertTrue(result.committed().isEmpty());
        for (int p = 0; p < PARTITIONS; p++) {
            assertEquals(0, version(p));
        }
    }

    @Test
    void aTransactionRefusedBecauseItHadAlreadyCommittedIsReportedCommitted() throws Exception {
        // as when Curator sends a transaction again after the connection dropped with its answer in flight
        List<StateWrite> creates = writes(StateWrite.CREATE, List.of(0, 1));
        assertTrue(client.writeStates(epoch, creates).isComplete());
        List<StateWrite> updates = writes(0, List.of(0));
        assertTrue(client.writeStates(epoch, updates).isComplete());

        StateWriteResult again = client.writeStates(epoch, updates);

        assertTrue(again.isComplete(), again.summary());
        StateWriteResult different = client.writeStates(epoch, writes(0, List.of(1)));
        assertFalse(different.isComplete(), "another state at the old version is a lost race: "
                + different.summary());
        assertEquals(List.of(0), state(0).isr());
    }

    @Test
    void aTopicNodeWrittenAloneGetsItsPartitionStates() throws Exception {
        // as Kafka's ZooKeeper-mode tools write a topic, or a restore of the assignments only: no partitions node
        zk.delete().deletingChildrenIfNeeded().forPath(ZkPaths.partitions(TOPIC));

        StateWriteResult result = client.writeStates(epoch, writes(StateWrite.CREATE, List.of(0, 1)));

        assertTrue(result.isComplete(), result.summary());
        for (int p = 0; p < PARTITIONS; p++) {
            assertEquals(List.of(0, 1), state(p).isr());
        }
    }

    @Test
    void aStateOfATopicDeletedSinceItWasDecidedIsStaleAndResurrectsNothing() throws Exception {
        zk.delete().deletingChildrenIfNeeded().forPath(ZkPaths.topic(TOPIC));

        StateWriteResult result = client.writeStates(epoch, writes(StateWrite.CREATE, List.of(0, 1)));

        assertEquals(Outcome.STALE, result.batches().get(0).outcome(), result.summary());
        assertTrue(result.committed().isEmpty());
        assertEquals(null, zk.checkExists().forPath(ZkPaths.topic(TOPIC)), "the topic's node is not created again");
    }

    /** A write of every partition to leader 0 with this ISR, each expecting {@code expectedVersion}. */
    private static List<StateWrite> writes(int expectedVersion, List<Integer> isr) {
        List<StateWrite> out = new ArrayList<>();
        int partitionEpoch = expectedVersion == StateWrite.CREATE ? 0 : expectedVersion + 1;
        for (int p = 0; p < PARTITIONS; p++) {
            out.add(new StateWrite(new TopicPartition(TOPIC, p), new PartitionState(0, 0, isr, partitionEpoch),
                    expectedVersion));
        }
        return out;
    }

    private PartitionState state(int partition) throws Exception {
        String path = ZkPaths.partitionState(TOPIC, partition);
        return PartitionState.fromJson(zk.getData().forPath(path), path);
    }

    private int version(int partition) throws Exception {
        Stat stat = zk.checkExists().forPath(ZkPaths.partitionState(TOPIC, partition));
        return stat.getVersion();
    }
}
