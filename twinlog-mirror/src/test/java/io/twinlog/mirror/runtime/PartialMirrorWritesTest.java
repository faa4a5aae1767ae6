package io.twinlog.mirror.runtime;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.controller.zk.EmbeddedZooKeeper;
import io.twinlog.controller.zk.Json;
import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.kafka.common.TopicPartition;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 25, point 6, for the mirror's own multi-transaction writes: when one of several ZooKeeper transactions fails,
 * the writes committed before it are reported committed, and only the rest failed. The failure is a real one: a node
 * made read-only by its ACL, so ZooKeeper refuses the transaction that touches it (NoAuth), as it would refuse one
 * when the session is lost. Before, both writers threw, and their callers took every write for failed: a stop of
 * 600 topics answered an error for the 500 already stopped.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PartialMirrorWritesTest {
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
    void stateRecordsCommittedBeforeAFailedTransactionAreReportedWritten() throws Exception {
        int count = MirrorStateWriter.OPS_PER_TRANSACTION + 20;
        List<MirrorStateWriter.StateWrite> writes = new ArrayList<>();
        MirrorPartitionRecord record = MirrorPartitionRecord.initial(3);
        List<CuratorOp> creates = new ArrayList<>();
        creates.add(zk.transactionOp().create().forPath(ZkPaths.MIRROR_STATES));
        creates.add(zk.transactionOp().create().forPath(ZkPaths.MIRROR_STATES + "/orders"));
        for (int p = 0; p < count; p++) {
            TopicPartition tp = new TopicPartition("orders", p);
            creates.add(zk.transactionOp().create().forPath(ZkPaths.mirrorState("orders", p),
                    Json.encode(MirrorPartitionRecord.initial(0).toJson())));
            writes.add(new MirrorStateWriter.StateWrite(tp, record, 0));
        }
        zk.transaction().forOperations(creates);
        writes.set(3, new MirrorStateWriter.StateWrite(new TopicPartition("orders", 3), record, 7)); // changed
        readOnly(ZkPaths.mirrorState("orders", count - 1)); // in the second transaction

        MirrorStateWriter.Outcome outcome = new MirrorStateWriter(zk).writeAll(writes);

        assertInstanceOf(KeeperException.NoAuthException.class, outcome.failure().orElseThrow());
        for (int p = 0; p < count; p++) {
            int expected = p == 3 ? MirrorStateWriter.CHANGED
                    : p < MirrorStateWriter.OPS_PER_TRANSACTION ? 1 : MirrorStateWriter.NOT_WRITTEN;
            assertEquals(expected, outcome.versions().get(p), "outcome of partition " + p);
            assertEquals(expected == 1 ? 1 : 0, zk.checkExists().forPath(ZkPaths.mirrorState("orders", p))
                    .getVersion(), "what ZooKeeper holds for partition " + p);
        }
    }

    @Test
    void desiredStatesCommittedBeforeAFailedTransactionAreReportedWritten() throws Exception {
        MirrorStore store = new MirrorStore(zk);
        List<String> topics = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            topics.add(String.format("t%03d", i));
            store.setTopic("m1", topics.get(i), DesiredMirrorState.MIRRORING);
        }
        readOnly(MirrorStore.topicsPath("m1") + "/t550");

        MirrorStore.TopicsWritten result = store.setTopics("m1", topics, DesiredMirrorState.STOPPED);

        assertInstanceOf(KeeperException.NoAuthException.class, result.failure().orElseThrow());
        assertEquals(topics.subList(0, 500), result.written());
        assertEquals(topics.subList(500, 600), result.notWritten());
        assertTrue(store.topics("m1").entrySet().stream().allMatch(e -> e.getValue()
                == (result.written().contains(e.getKey()) ? DesiredMirrorState.STOPPED : DesiredMirrorState.MIRRORING)),
                "ZooKeeper holds what the result says");

        MirrorStore.TopicsWritten healthy = store.setTopics("m1", topics.subList(0, 550), DesiredMirrorState.PAUSED);
        assertTrue(healthy.failure().isEmpty() && healthy.notWritten().isEmpty(), healthy.toString());
    }

    private void readOnly(String path) throws Exception {
        zk.setACL().withACL(List.of(new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE))).forPath(path);
    }
}
