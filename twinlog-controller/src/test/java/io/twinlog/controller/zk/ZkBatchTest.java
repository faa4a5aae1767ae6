package io.twinlog.controller.zk;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * {@link ZkBatch#createIfAbsent} on a real ZooKeeper: it creates what is missing in a few round trips (counted by
 * ZooKeeper's own transaction ids), leaves what exists untouched, and falls back to one path at a time when its
 * transaction is refused (a parent missing too). {@link ZkBatch#multiReadAll} reads many nodes in order.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZkBatchTest {
    @TempDir
    File dir;
    private EmbeddedZooKeeper zooKeeper;
    private CuratorFramework zk;

    @BeforeEach
    void start() throws Exception {
        zooKeeper = EmbeddedZooKeeper.start(dir, 0);
        zk = zooKeeper.connectedClient();
        zk.create().forPath("/states");
    }

    @AfterEach
    void stop() {
        zk.close();
        zooKeeper.close();
    }

    @Test
    void manyMissingNodesAreCreatedInOneTransactionAndExistingOnesKeepTheirData() throws Exception {
        byte[] kept = "kept".getBytes(StandardCharsets.UTF_8);
        zk.create().forPath("/states/t-000", kept);
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < 1_200; i++) {
            paths.add(String.format("/states/t-%03d", i % 1_000)); // with duplicates
        }
        long before = lastZxid();

        ZkBatch.createIfAbsent(zk, paths);

        assertEquals(1_000, zk.getChildren().forPath("/states").size());
        assertArrayEquals(kept, zk.getData().forPath("/states/t-000"), "an existing node is left as it was");
        // one write transaction per chunk of 500 paths (999 missing ones: two chunks), not one per node
        assertEquals(2, writesSince(before), "write transactions");
    }

    @Test
    void aMissingParentMakesItCreateEachPathWithItsParents() throws Exception {
        ZkBatch.createIfAbsent(zk, List.of("/states/a", "/other/b/c", "/states/d"));

        for (String path : List.of("/states/a", "/other/b/c", "/states/d")) {
            assertNotNull(zk.checkExists().forPath(path), path);
        }
    }

    @Test
    void nothingIsWrittenWhenEveryPathExists() throws Exception {
        zk.create().forPath("/states/a");
        zk.create().forPath("/states/b");
        long before = lastZxid();

        ZkBatch.createIfAbsent(zk, List.of("/states/a", "/states/b"));

        assertEquals(0, writesSince(before), "write transactions");
    }

    @Test
    void readsOfManyNodesComeBackInTheirOrderWithAMissingNodeAnErrorInItsPlace() throws Exception {
        List<Op> reads = new ArrayList<>();
        for (int i = 0; i < 1_300; i++) {
            String path = String.format("/states/r-%04d", i);
            if (i % 7 != 3) {
                zk.create().forPath(path, Integer.toString(i).getBytes(StandardCharsets.UTF_8));
            }
            reads.add(Op.getData(path));
        }

        List<OpResult> results = ZkBatch.multiReadAll(zk, reads);

        assertEquals(1_300, results.size(), "one result per read, over three multi-reads");
        for (int i = 0; i < 1_300; i++) {
            if (i % 7 == 3) {
                assertEquals(KeeperException.Code.NONODE.intValue(),
                        assertInstanceOf(OpResult.ErrorResult.class, results.get(i)).getErr(), "read " + i);
            } else {
                assertEquals(Integer.toString(i), new String(assertInstanceOf(OpResult.GetDataResult.class,
                        results.get(i)).getData(), StandardCharsets.UTF_8), "read " + i);
            }
        }
        assertEquals(List.of(), ZkBatch.multiReadAll(zk, List.of()));
    }

    /** The transaction id of a probe node's creation (the probe is then deleted: one more transaction). */
    private long lastZxid() throws Exception {
        zk.create().forPath("/probe");
        long zxid = zk.checkExists().forPath("/probe").getCzxid();
        zk.delete().forPath("/probe");
        return zxid;
    }

    /** Write transactions since the probe of {@code before}: not its deletion, nor the new probe's creation. */
    private long writesSince(long before) throws Exception {
        return lastZxid() - before - 2;
    }
}
