package io.twinlog.mirror.store;

import io.twinlog.controller.zk.EmbeddedZooKeeper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The store's unconditional writes, on a real ZooKeeper: a node and its parents created, then overwritten. */
@Timeout(60)
class NodeWritesTest {
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
    void stop() throws Exception {
        zk.close();
        zooKeeper.close();
    }

    @Test
    void aMissingNodeIsCreatedWithItsParents() throws Exception {
        NodeWrites.put(zk, "/a/b/c", bytes("first"));
        assertEquals("first", read("/a/b/c"));
        assertEquals(0, zk.checkExists().forPath("/a/b/c").getVersion());
    }

    @Test
    void anExistingNodeIsOverwrittenWhateverItsVersion() throws Exception {
        zk.create().creatingParentsIfNeeded().forPath("/a/b", bytes("old"));
        zk.setData().forPath("/a/b", bytes("older"));
        NodeWrites.put(zk, "/a/b", bytes("new"));
        Stat stat = zk.checkExists().forPath("/a/b");
        assertEquals("new", read("/a/b"));
        assertEquals(2, stat.getVersion());
        NodeWrites.put(zk, "/a/b", bytes("newer"));
        assertEquals("newer", read("/a/b"));
    }

    private String read(String path) throws Exception {
        return new String(zk.getData().forPath(path), StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
