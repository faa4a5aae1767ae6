package io.twinlog.storage;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.metadata.properties.PropertiesUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The log dirs' identity: what is written, and every refusal with its one-line message. */
@Timeout(10)
class LogDirIdentityTest {
    @TempDir
    File base;

    private File dir(String name) {
        return new File(base, name);
    }

    private static Properties read(File dir) throws IOException {
        return PropertiesUtils.readPropertiesFile(new File(dir, "meta.properties").getAbsolutePath());
    }

    private void write(File dir, String clusterId, int brokerId) throws IOException {
        LogDirIdentity.load(List.of(dir)).writeMissing(clusterId, brokerId);
    }

    @Test
    void aNewDirGetsVersionZeroWithTheBrokerAndClusterIds() throws IOException {
        File d = dir("new");
        LogDirIdentity identity = LogDirIdentity.load(List.of(d));
        assertEquals(Optional.empty(), identity.clusterId());
        assertEquals(Set.of(d.getAbsolutePath()), identity.missingDirs());
        identity.writeMissing("clusterA", 3);
        Properties p = read(d);
        assertEquals("0", p.getProperty("version"));
        assertEquals("3", p.getProperty("broker.id"));
        assertEquals("clusterA", p.getProperty("cluster.id"));
        LogDirIdentity again = LogDirIdentity.load(List.of(d));
        assertEquals(Optional.of("clusterA"), again.clusterId());
        assertEquals(Set.of(), again.missingDirs());
        again.checkBrokerId(3);
        again.checkClusterId(Optional.of("clusterA"), "ZooKeeper at z:2181");
    }

    @Test
    void aDirWithLogsFromBeforeTheIdentityKeepsThemAndGetsOne() throws IOException {
        File d = dir("old");
        File segment = new File(d, "orders-0/00000000000000000000.log");
        Files.createDirectories(segment.getParentFile().toPath());
        Files.writeString(segment.toPath(), "records");
        write(d, "clusterA", 0);
        assertEquals("clusterA", read(d).getProperty("cluster.id"));
        assertEquals("records", Files.readString(segment.toPath()));
    }

    @Test
    void anotherBrokersDirIsRefusedWithBothIdsAndTheDir() throws IOException {
        File d = dir("b1");
        write(d, "clusterA", 1);
        ConfigException e = assertThrows(ConfigException.class, () -> LogDirIdentity.load(List.of(d)).checkBrokerId(2));
        assertTrue(e.getMessage().contains(d.getAbsolutePath()), e.getMessage());
        assertTrue(e.getMessage().contains("belongs to broker 1"), e.getMessage());
        assertTrue(e.getMessage().contains("broker.id is 2"), e.getMessage());
        assertTrue(e.getMessage().lines().count() == 1, e.getMessage());
    }

    @Test
    void anotherClustersZooKeeperIsRefusedWithBothIdsAndTheDir() throws IOException {
        File d = dir("a");
        write(d, "clusterA", 0);
        ConfigException e = assertThrows(ConfigException.class, () -> LogDirIdentity.load(List.of(d))
                .checkClusterId(Optional.of("clusterB"), "ZooKeeper at z:2181/wrong"));
        String m = e.getMessage();
        assertTrue(m.contains("Log dir " + d.getAbsolutePath() + " belongs to cluster clusterA"), m);
        assertTrue(m.contains("ZooKeeper at z:2181/wrong holds cluster clusterB"), m);
        assertTrue(m.contains("zookeeper.connect"), m);
        assertEquals(1, m.lines().count(), m);
    }

    @Test
    void aZooKeeperWithoutClusterIdIsRefused() throws IOException {
        File d = dir("a");
        write(d, "clusterA", 0);
        ConfigException e = assertThrows(ConfigException.class, () -> LogDirIdentity.load(List.of(d))
                .checkClusterId(Optional.empty(), "ZooKeeper at z:2181"));
        assertTrue(e.getMessage().contains("belongs to cluster clusterA"), e.getMessage());
        assertTrue(e.getMessage().contains("holds no cluster id"), e.getMessage());
    }

    @Test
    void dirsWithoutIdentityAcceptAnyCluster() throws IOException {
        LogDirIdentity.load(List.of(dir("x"))).checkClusterId(Optional.empty(), "ZooKeeper at z:2181");
        LogDirIdentity.load(List.of(dir("x"))).checkClusterId(Optional.of("clusterB"), "ZooKeeper at z:2181");
    }

    @Test
    void dirsOfTwoClustersAreRefused() throws IOException {
        write(dir("a"), "clusterA", 0);
        write(dir("b"), "clusterB", 0);
        ConfigException e = assertThrows(ConfigException.class,
                () -> LogDirIdentity.load(List.of(dir("a"), dir("b"))).clusterId());
        assertTrue(e.getMessage().contains("clusterA") && e.getMessage().contains("clusterB"), e.getMessage());
    }

    @Test
    void aNewDirBesideARecordedOneGetsTheSameIdentity() throws IOException {
        write(dir("a"), "clusterA", 4);
        LogDirIdentity identity = LogDirIdentity.load(List.of(dir("a"), dir("added")));
        assertEquals(Optional.of("clusterA"), identity.clusterId());
        identity.writeMissing("clusterA", 4);
        assertEquals("clusterA", read(dir("added")).getProperty("cluster.id"));
        assertEquals("4", read(dir("added")).getProperty("broker.id"));
    }

    @Test
    void anUnreadableFileRefusesTheStart() throws IOException {
        File d = dir("bad");
        Files.createDirectories(d.toPath());
        Files.writeString(new File(d, "meta.properties").toPath(), "version=7\n");
        ConfigException e = assertThrows(ConfigException.class, () -> LogDirIdentity.load(List.of(d)));
        assertTrue(e.getMessage().contains(d.getAbsolutePath()), e.getMessage());
    }
}
