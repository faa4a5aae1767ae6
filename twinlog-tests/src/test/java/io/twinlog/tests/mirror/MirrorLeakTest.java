package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.controller.zk.Json;
import io.twinlog.controller.zk.TopicDeletions;
import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Nothing leaks (issue 25, point 9): after N cycles of create a source topic, mirror it into a new mirror, wait
 * MIRRORING, fail it over, delete the topic on both sides and the mirror, the brokers' JVM has the same threads
 * (by name, numbers stripped; a fixed-size pool up to its size), the same open files (by path) and no more sockets
 * or pipes (an idle client connection of the warm-up may have closed since), and both clusters' ZooKeeper the same
 * nodes as before them. A first cycle runs before the counts, so what is made lazily once (a pool, a client
 * connection, the first {@code /mirror_states} parent) exists in both. {@code -Dtwinlog.leak.cycles} sets N (100 by
 * default; the whole run takes about a minute).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class MirrorLeakTest {
    private static final Logger log = LoggerFactory.getLogger(MirrorLeakTest.class);
    private static final int CYCLES = Integer.getInteger("twinlog.leak.cycles", 100);
    private static final Duration SETTLE = Duration.ofSeconds(30);
    private static final long STABLE_MS = 2_000;
    private static final int BROKERS = 3;
    /** The suffix of the dir Kafka renames a deleted log's dir to until it deletes its files. */
    private static final String DELETED_LOG = "-delete/";
    /**
     * Fixed-size pools that start a thread per task until they are full, so a run may leave them fuller than the
     * warm-up did without leaking anything: each may hold up to its size per broker. Every other thread counts
     * exactly. (FailoverBarriers.THREADS, BrokerServer's admin threads, the one thread of each of Kafka's purgatory
     * timers, MirrorApiHandlers.API_THREADS: a start now asks the source's mirror APIs whether the topic is a mirror
     * of this cluster, so the source's pool starts its second thread when two such calls meet.)
     */
    private static final Map<String, Integer> POOL_SIZES_PER_BROKER = Map.of("twinlog-mirror-barrier-#-#", 4,
            "twinlog-mirror-api-#-#", 2,
            "twinlog-admin-#-#", 2, "executor-Fetch", 1, "executor-Produce", 1, "executor-DeleteRecords", 1);

    @Test
    void cyclesOfMirrorFailOverAndDeleteLeaveNothingBehind() throws Exception {
        // deleted logs go at once rather than after Kafka's minute: their files are open until then
        try (TestCluster source = TestCluster.builder().brokers(1).brokerProperty("log.segment.delete.delay.ms", "0")
                .build().start();
             TestCluster destination = TestCluster.builder().brokers(BROKERS - 1)
                     .brokerProperty("default.replication.factor", "2")
                     .brokerProperty("log.segment.delete.delay.ms", "0").build().start();
             Admin sourceAdmin = source.admin();
             Admin destinationAdmin = destination.admin();
             MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(30));
             CuratorFramework sourceZk = zooKeeper(source);
             CuratorFramework destinationZk = zooKeeper(destination);
             KafkaProducer<byte[], byte[]> producer = source.producer(Map.of("linger.ms", 0))) {
            cycle(0, sourceAdmin, destinationAdmin, mirrors, producer, source);
            Snapshot before = settled(sourceZk, destinationZk);
            long started = System.nanoTime();
            for (int i = 1; i <= CYCLES; i++) {
                cycle(i, sourceAdmin, destinationAdmin, mirrors, producer, source);
            }
            log.info("{} cycles of create, mirror, fail over, delete took {} ms", CYCLES,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
            // threads end and nodes go at the managers' next ticks: what is still to go gets a little time
            String difference = Waits.waitFor("threads, open files and ZooKeeper nodes back to their count before "
                    + CYCLES + " cycles", () -> before.difference(snapshot(sourceZk, destinationZk)),
                    String::isEmpty, SETTLE);
            assertEquals("", difference);
            log.info("After {} cycles, as before: {}; now {}", CYCLES, before, snapshot(sourceZk, destinationZk));
        }
    }

    /**
     * A snapshot that stayed the same for {@value #STABLE_MS} ms: what ends at a manager's tick after the warm-up
     * cycle has ended.
     */
    private static Snapshot settled(CuratorFramework sourceZk, CuratorFramework destinationZk) {
        Snapshot[] stable = new Snapshot[1];
        long[] since = new long[1];
        return Waits.waitFor("the warm-up cycle's threads, files and nodes to settle", () -> snapshot(sourceZk,
                destinationZk), s -> {
                    long now = System.nanoTime();
                    if (stable[0] == null || !stable[0].sameAs(s)) {
                        stable[0] = s;
                        since[0] = now;
                        return false;
                    }
                    return now - since[0] >= TimeUnit.MILLISECONDS.toNanos(STABLE_MS);
                }, SETTLE);
    }

    private static void cycle(int i, Admin sourceAdmin, Admin destinationAdmin, MirrorAdmin mirrors,
                              KafkaProducer<byte[], byte[]> producer, TestCluster source) throws Exception {
        String topic = "leak-" + i;
        String mirror = "m-" + i;
        sourceAdmin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        producer.send(new ProducerRecord<>(topic, 0, null, new byte[]{(byte) i})).get();
        MirrorSteps.startMirroring(mirrors, mirror, source, topic);
        Waits.waitUntil(topic + " MIRRORING with its record", () -> {
            var partitions = mirrors.describeClusterMirrors(List.of(mirror)).get(mirror).topics().get(topic)
                    .partitions();
            return !partitions.isEmpty() && partitions.stream().allMatch(p -> p.state().equals("MIRRORING"));
        });
        MirrorSteps.failOver(mirrors, mirror, topic);
        destinationAdmin.deleteTopics(List.of(topic)).all().get();
        mirrors.deleteClusterMirror(mirror);
        sourceAdmin.deleteTopics(List.of(topic)).all().get();
    }

    private static CuratorFramework zooKeeper(TestCluster cluster) throws InterruptedException {
        CuratorFramework zk = CuratorFrameworkFactory.newClient(cluster.zookeeperConnect(), new RetryOneTime(100));
        zk.start();
        zk.blockUntilConnected(30, TimeUnit.SECONDS);
        return zk;
    }

    private static Snapshot snapshot(CuratorFramework sourceZk, CuratorFramework destinationZk) throws Exception {
        Map<String, Integer> threads = new TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive()) {
                threads.merge(t.getName().replaceAll("[0-9]+", "#"), 1, Integer::sum);
            }
        }
        Set<String> nodes = new TreeSet<>();
        collect(sourceZk, "/", "source:", nodes);
        collect(destinationZk, "/", "destination:", nodes);
        Set<String> files = new TreeSet<>();
        int others = 0;
        File[] fds = new File("/proc/self/fd").listFiles();
        for (File fd : fds == null ? new File[0] : fds) {
            try {
                Path target = Files.readSymbolicLink(fd.toPath());
                if (target.isAbsolute()) {
                    files.add(target.toString());
                } else {
                    others++; // socket:[..], pipe:[..], anon_inode:..
                }
            } catch (IOException closed) {
                // closed while listed (the listing's own descriptor among them)
            }
        }
        return new Snapshot(threads, nodes, files, others);
    }

    /**
     * Every node under {@code path} but ZooKeeper's own {@code /zookeeper} and the marks of completed topic deletions
     * (kept {@link TopicDeletions#COMPLETED_MARK_RETENTION_MS} for the brokers, then removed by the controller:
     * decision 72; a deletion left unfinished still counts).
     */
    private static void collect(CuratorFramework zk, String path, String prefix, Set<String> out) throws Exception {
        List<String> children;
        try {
            children = new ArrayList<>(zk.getChildren().forPath(path));
        } catch (KeeperException.NoNodeException gone) {
            return; // deleted while listed
        }
        for (String child : children) {
            String full = (path.equals("/") ? "" : path) + "/" + child;
            if (!full.equals("/zookeeper") && !completedDeletionMark(zk, path, full)) {
                out.add(prefix + full);
                collect(zk, full, prefix, out);
            }
        }
    }

    private static boolean completedDeletionMark(CuratorFramework zk, String parent, String path) throws Exception {
        if (!parent.equals(ZkPaths.DELETE_TOPICS)) {
            return false;
        }
        try {
            return Boolean.TRUE.equals(Json.decode(zk.getData().forPath(path), path).get("completed"));
        } catch (KeeperException.NoNodeException gone) {
            return true; // expired while listed
        }
    }

    /** What the JVM and the ZooKeepers hold at one moment. */
    private record Snapshot(Map<String, Integer> threads, Set<String> zooKeeperNodes, Set<String> openFiles,
                            int sockets) {
        boolean sameAs(Snapshot other) {
            return threads.equals(other.threads) && zooKeeperNodes.equals(other.zooKeeperNodes)
                    && openFiles.equals(other.openFiles) && sockets == other.sockets;
        }

        int threadCount() {
            return threads.values().stream().mapToInt(Integer::intValue).sum();
        }

        /** What {@code now} has more or less than this snapshot; empty when they are the same. */
        String difference(Snapshot now) {
            StringBuilder out = new StringBuilder();
            Set<String> names = new TreeSet<>(threads.keySet());
            names.addAll(now.threads.keySet());
            for (String name : names) {
                int was = threads.getOrDefault(name, 0);
                int is = now.threads.getOrDefault(name, 0);
                Integer poolSize = POOL_SIZES_PER_BROKER.get(name);
                // fewer is not a leak: a thread of a test class run before this one in the same JVM may end during
                // the cycles (seen: two Curator clients' notify threads, 171 -> 169)
                if (poolSize == null ? is > was : is > poolSize * BROKERS) {
                    out.append("threads '").append(name).append("': ").append(was).append(" -> ").append(is)
                            .append("; ");
                }
            }
            Set<String> added = new TreeSet<>(now.zooKeeperNodes);
            added.removeAll(zooKeeperNodes);
            Set<String> removed = new TreeSet<>(zooKeeperNodes);
            removed.removeAll(now.zooKeeperNodes);
            if (!added.isEmpty() || !removed.isEmpty()) {
                out.append("ZooKeeper nodes added ").append(added).append(", removed ").append(removed).append("; ");
            }
            Set<String> opened = new TreeSet<>(now.openFiles);
            opened.removeAll(openFiles);
            Set<String> closed = new TreeSet<>(openFiles);
            closed.removeAll(now.openFiles);
            // the warm-up's deleted log, whose files Kafka's scheduler deletes (and closes) a minute or so later
            closed.removeIf(f -> f.contains(DELETED_LOG));
            if (!opened.isEmpty() || !closed.isEmpty()) {
                out.append("open files added ").append(opened).append(", closed ").append(closed).append("; ");
            }
            // an idle connection (the warm-up's) may be closed since; more sockets than before is a leak
            if (now.sockets > sockets) {
                out.append("sockets, pipes and other descriptors ").append(sockets).append(" -> ")
                        .append(now.sockets);
            }
            return out.toString();
        }

        @Override
        public String toString() {
            return threadCount() + " threads, " + zooKeeperNodes.size() + " ZooKeeper nodes, " + openFiles.size()
                    + " open files, " + sockets + " sockets and pipes";
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Snapshot s && sameAs(s);
        }

        @Override
        public int hashCode() {
            return Objects.hash(threads, zooKeeperNodes, openFiles, sockets);
        }
    }
}
