package io.twinlog.tests.storage;

import io.twinlog.controller.zk.EmbeddedZooKeeper;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.TestDirectories;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.metadata.properties.PropertiesUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Cluster identity on disk (issue 25, point 1): a broker whose log dirs belong to another cluster or broker refuses to
 * start with one line and deletes nothing; a dir from before the identity was recorded gets one; the first image
 * after start deletes no log when it lists no topic at all.
 */
@Timeout(180)
class ClusterIdentityTest {
    private static final String TOPIC = "kept";
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 300;

    @Test
    void aBrokerPointedAtAnotherZooKeeperRefusesAndKeepsEveryLog() throws Exception {
        File otherZooKeeperDir = TestDirectories.create("other-zookeeper");
        try (TestCluster cluster = TestCluster.builder().brokers(1).build().start();
             EmbeddedZooKeeper otherZooKeeper = EmbeddedZooKeeper.start(otherZooKeeperDir, 0)) {
            List<String> written = createAndWrite(cluster);
            String clusterId = clusterId(cluster);
            cluster.stopBroker(0);
            File logDir = cluster.logDir(0);
            Map<String, String> before = files(logDir);

            // a wrong chroot, another (empty) ensemble, and zookeeper.connect left out (the embedded ZooKeeper)
            List<Map<String, String>> wrongZooKeepers = List.of(
                    Map.of("zookeeper.connect", cluster.zookeeperConnect() + "/elsewhere"),
                    Map.of("zookeeper.connect", otherZooKeeper.connectString()),
                    Map.of("zookeeper.connect", "", "zookeeper.embedded.port", "0"));
            for (Map<String, String> wrong : wrongZooKeepers) {
                ConfigException e = assertThrows(ConfigException.class, () -> cluster.startBroker(0, wrong));
                String m = e.getMessage();
                System.out.println("refused with " + wrong + ": " + m);
                assertEquals(1, m.lines().count(), m);
                assertTrue(m.startsWith("Log dir " + logDir.getAbsolutePath() + " belongs to cluster " + clusterId),
                        m);
                assertTrue(m.contains("holds no cluster id") && m.contains("zookeeper.connect"), m);
                assertEquals(before, files(logDir), "every log file kept, unchanged");
            }
            // the refusal left nothing behind in the ZooKeepers it was wrongly pointed at
            assertNull(exists(cluster.zookeeperConnect(), "/elsewhere"));
            assertNull(exists(otherZooKeeper.connectString(), "/cluster"));

            cluster.startBroker(0);
            assertEquals(written, consumeAll(cluster));
        }
        TestDirectories.delete(otherZooKeeperDir);
    }

    @Test
    void aBrokerPointedAtAnotherClusterRefusesNamingBothIds() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).build().start();
             TestCluster other = TestCluster.builder().brokers(1).build().start()) {
            List<String> written = createAndWrite(cluster);
            String clusterId = clusterId(cluster);
            String otherId = clusterId(other);
            cluster.stopBroker(0);
            Map<String, String> before = files(cluster.logDir(0));
            ConfigException e = assertThrows(ConfigException.class, () -> cluster.startBroker(0,
                    Map.of("zookeeper.connect", other.zookeeperConnect(), "broker.id", "0")));
            String m = e.getMessage();
            assertEquals(1, m.lines().count(), m);
            assertTrue(m.contains("belongs to cluster " + clusterId) && m.contains("holds cluster " + otherId)
                    && m.contains(cluster.logDir(0).getAbsolutePath()), m);
            assertEquals(before, files(cluster.logDir(0)));
            cluster.startBroker(0);
            assertEquals(written, consumeAll(cluster));
        }
    }

    @Test
    void aDirFromBeforeTheIdentityGetsOneAndStarts() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).build().start()) {
            List<String> written = createAndWrite(cluster);
            String clusterId = clusterId(cluster);
            Path meta = cluster.logDir(0).toPath().resolve("meta.properties");
            assertEquals(clusterId, readMeta(meta).getProperty("cluster.id"));
            cluster.stopBroker(0);
            Files.delete(meta);   // as a Twinlog from before this change left it

            cluster.startBroker(0);
            Properties p = readMeta(meta);
            assertEquals(clusterId, p.getProperty("cluster.id"));
            assertEquals("0", p.getProperty("broker.id"));
            assertEquals("0", p.getProperty("version"));
            assertEquals(written, consumeAll(cluster));
        }
    }

    @Test
    void anotherBrokersDirIsRefused() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).build().start()) {
            List<String> written = createAndWrite(cluster);
            cluster.stopBroker(0);
            Map<String, String> before = files(cluster.logDir(0));
            ConfigException e = assertThrows(ConfigException.class,
                    () -> cluster.startBroker(0, Map.of("broker.id", "7")));
            String m = e.getMessage();
            assertEquals(1, m.lines().count(), m);
            assertTrue(m.contains("Log dir " + cluster.logDir(0).getAbsolutePath() + " belongs to broker 0")
                    && m.contains("broker.id is 7"), m);
            assertEquals(before, files(cluster.logDir(0)));
            cluster.startBroker(0);
            assertEquals(written, consumeAll(cluster));
        }
    }

    @Test
    void aFirstImageWithoutTopicsDeletesNoLog() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).build().start()) {
            createAndWrite(cluster);
            cluster.stopBroker(0);
            Map<String, String> before = segments(cluster.logDir(0));
            // the topics lost under the same cluster id (an ensemble restored without them)
            try (CuratorFramework zk = CuratorFrameworkFactory.newClient(cluster.zookeeperConnect(),
                    new RetryOneTime(100))) {
                zk.start();
                zk.delete().deletingChildrenIfNeeded().forPath("/brokers/topics");
            }
            cluster.startBroker(0);
            assertEquals(PARTITIONS, cluster.broker(0).logStore().allLogs().size(), "every log still loaded");
            assertEquals(before, segments(cluster.logDir(0)), "every segment kept");
        }
    }

    private static List<String> createAndWrite(TestCluster cluster) throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
        }
        List<String> written = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
            List<Future<?>> sends = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++) {
                String value = "record-" + i;
                written.add(value);
                sends.add(producer.send(new ProducerRecord<>(TOPIC, i % PARTITIONS, null,
                        value.getBytes(StandardCharsets.UTF_8))));
            }
            for (Future<?> f : sends) {
                f.get();
            }
        }
        written.sort(null);
        return written;
    }

    /** Every record of the topic, read from the start, sorted. */
    private static List<String> consumeAll(TestCluster cluster) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new TopicPartition(TOPIC, p));
        }
        List<String> read = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of())) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (read.size() < RECORDS && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    read.add(new String(r.value(), StandardCharsets.UTF_8));
                }
            }
        }
        read.sort(null);
        return read;
    }

    private static String clusterId(TestCluster cluster) throws Exception {
        try (Admin admin = cluster.admin()) {
            return admin.describeCluster().clusterId().get();
        }
    }

    /** Every file under a dir with its size and modification time: what "nothing touched" compares. */
    private static Map<String, String> files(File dir) throws IOException {
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> paths = Files.walk(dir.toPath())) {
            for (Path p : paths.filter(Files::isRegularFile).toList()) {
                out.put(dir.toPath().relativize(p).toString(), Files.size(p) + "@" + Files.getLastModifiedTime(p));
            }
        }
        return out;
    }

    /** The segment files with their sizes (a broker that starts rewrites its checkpoints and indexes). */
    private static Map<String, String> segments(File dir) throws IOException {
        Map<String, String> out = new TreeMap<>();
        files(dir).forEach((path, sizeAndTime) -> {
            if (path.endsWith(".log")) {
                out.put(path, sizeAndTime.substring(0, sizeAndTime.indexOf('@')));
            }
        });
        return out;
    }

    private static Properties readMeta(Path meta) throws IOException {
        return PropertiesUtils.readPropertiesFile(meta.toString());
    }

    private static Object exists(String connect, String path) throws Exception {
        try (CuratorFramework zk = CuratorFrameworkFactory.newClient(connect, new RetryOneTime(100))) {
            zk.start();
            return zk.checkExists().forPath(path);
        }
    }
}
