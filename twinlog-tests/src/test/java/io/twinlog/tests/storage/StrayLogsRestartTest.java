package io.twinlog.tests.storage;

import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.retry.RetryOneTime;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicExistsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A broker's start against metadata that changed while it was down (decision 74): it deletes only the logs the
 * metadata says are gone (a topic deleted, by the mark in {@code /admin/delete_topics}, even when the name was
 * created again since), keeps unserved the log of a topic that vanished from a partly emptied ZooKeeper, serving it
 * again once the topic's nodes are back, and sets aside ({@code -stray}) the log of a name another topic ID took
 * with no deletion recorded.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class StrayLogsRestartTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final int RECORDS = 20;
    private static final int DOWN = 2;

    @Test
    void aRestartDeletesOnlyWhatTheMetadataSaysIsGone() throws Exception {
        List<String> topics = List.of("kept", "vanished", "deleted", "recreated", "reused", "taken");
        Uuid takenBefore;
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             CuratorFramework zk = CuratorFrameworkFactory.newClient(cluster.zookeeperConnect(),
                     new RetryOneTime(100))) {
            zk.start();
            zk.blockUntilConnected(30, TimeUnit.SECONDS);
            try (Admin admin = cluster.admin()) {
                admin.createTopics(topics.stream().map(t -> new NewTopic(t, 1, (short) 3)).toList()).all().get();
            }
            for (String topic : topics) {
                produce(cluster, topic);
                Waits.waitUntil("broker " + DOWN + " holds every record of " + topic,
                        () -> logEnd(cluster, DOWN, new TopicPartition(topic, 0)) == RECORDS, TIMEOUT);
            }
            cluster.stopBroker(DOWN);

            Map<String, byte[]> vanishedNodes = new LinkedHashMap<>();
            nodes(zk, ZkPaths.topic("vanished"), vanishedNodes);
            nodes(zk, ZkPaths.topicConfig("vanished"), vanishedNodes);
            try (Admin admin = cluster.admin()) {
                admin.deleteTopics(List.of("deleted", "recreated", "reused")).all().get();
                Waits.waitUntil("the deletions done", () -> admin.listTopics().names().get().stream()
                        .noneMatch(List.of("deleted", "recreated", "reused")::contains), TIMEOUT);
                // a partly emptied ZooKeeper: one topic's nodes gone, no deletion
                zk.delete().deletingChildrenIfNeeded().forPath(ZkPaths.topic("vanished"));
                zk.delete().forPath(ZkPaths.topicConfig("vanished"));
                // no mark of the deleted "reused" any more (removed by hand), and the name taken again
                zk.delete().forPath(ZkPaths.topicDeletion("reused"));
                admin.createTopics(List.of(new NewTopic("recreated", Map.of(0, List.of(0, 1))),
                        new NewTopic("reused", Map.of(0, List.of(0, 1))))).all().get();
                // "taken" vanishes without a deletion and its name is taken by a topic with another ID, assigned to
                // broker DOWN too (written as the controller writes a topic, since an admin cannot assign a broker
                // that is down): at its start DOWN hosts the new topic
                byte[] takenNode = zk.getData().forPath(ZkPaths.topic("taken"));
                takenBefore = cluster.broker(0).metadata().image().topic("taken").orElseThrow().topicId();
                zk.delete().deletingChildrenIfNeeded().forPath(ZkPaths.topic("taken"));
                Waits.waitUntil("the controller sees taken gone",
                        () -> cluster.broker(0).metadata().image().topic("taken").isEmpty(), TIMEOUT);
                zk.create().forPath(ZkPaths.topic("taken"), new String(takenNode, StandardCharsets.UTF_8)
                        .replace(takenBefore.toString(), Uuid.randomUuid().toString())
                        .getBytes(StandardCharsets.UTF_8));
            }

            cluster.startBroker(DOWN);
            TopicPartition kept = new TopicPartition("kept", 0);
            Waits.waitUntil("broker " + DOWN + " hosts " + kept,
                    () -> cluster.broker(DOWN).replicaManager().partition(kept).isPresent(), TIMEOUT);
            TopicPartition vanished = new TopicPartition("vanished", 0);
            assertEquals(RECORDS, logEnd(cluster, DOWN, vanished), "the log of a topic gone without a deletion stays");
            assertTrue(cluster.broker(DOWN).replicaManager().partition(vanished).isEmpty(), "and is not served");
            for (String topic : List.of("deleted", "recreated", "reused")) {
                assertEquals(-1L, logEnd(cluster, DOWN, new TopicPartition(topic, 0)), topic + "-0 is not loaded");
            }
            assertSetAsideWithRecords(cluster.logDir(DOWN), "reused-0", "reused-0 renamed aside, with its files");
            assertEquals(List.of(), strayDirs(cluster.logDir(DOWN), "deleted-0"), "deleted-0's log is not set aside");
            assertEquals(List.of(), strayDirs(cluster.logDir(DOWN), "recreated-0"),
                    "recreated-0's log is not set aside");
            // a name taken by a new topic hosted here, with no deletion of the old one recorded: the old log is
            // renamed aside with its records, never deleted, and the new topic's replica starts empty
            TopicPartition taken = new TopicPartition("taken", 0);
            Waits.waitUntil("broker " + DOWN + " hosts the new " + taken,
                    () -> cluster.broker(DOWN).replicaManager().partition(taken).isPresent(), TIMEOUT);
            Uuid takenNow = cluster.broker(DOWN).metadata().image().topic("taken").orElseThrow().topicId();
            assertTrue(!takenNow.equals(takenBefore), "taken has a new topic ID");
            assertEquals(takenNow, cluster.broker(DOWN).replicaManager().partition(taken).orElseThrow().topicId());
            assertEquals(0L, logEnd(cluster, DOWN, taken), "the new topic's replica starts empty");
            assertSetAsideWithRecords(cluster.logDir(DOWN), "taken-0", "taken-0's old log renamed aside");

            // the vanished topic's nodes restored in one transaction, as a restore from a copy would: node by node,
            // the controller would see the assignment without its partition state and write one of its own first
            List<CuratorOp> restore = new ArrayList<>();
            for (Map.Entry<String, byte[]> node : vanishedNodes.entrySet()) {
                restore.add(zk.transactionOp().create().forPath(node.getKey(), node.getValue()));
            }
            zk.transaction().forOperations(restore);
            Waits.waitUntil("broker " + DOWN + " hosts " + vanished + " again",
                    () -> cluster.broker(DOWN).replicaManager().partition(vanished).isPresent(), TIMEOUT);
            assertEquals(RECORDS, logEnd(cluster, DOWN, vanished));
        }
    }

    /**
     * A running broker whose topic vanished from ZooKeeper with no deletion (its nodes removed by hand) and whose
     * name is then taken by a new topic (created again by an admin, or auto-created by a producer) renames the old
     * log aside with its records instead of deleting it, and serves the new topic from an empty log.
     */
    @Test
    void aNameTakenByANewTopicSetsTheOldLogAsideOnARunningBroker() throws Exception {
        TopicPartition tp = new TopicPartition("orders", 0);
        try (TestCluster cluster = TestCluster.builder().brokers(1).build().start();
             CuratorFramework zk = CuratorFrameworkFactory.newClient(cluster.zookeeperConnect(),
                     new RetryOneTime(100));
             Admin admin = cluster.admin()) {
            zk.start();
            zk.blockUntilConnected(30, TimeUnit.SECONDS);
            admin.createTopics(List.of(new NewTopic(tp.topic(), 1, (short) 1))).all().get();
            produce(cluster, tp.topic());
            zk.delete().deletingChildrenIfNeeded().forPath(ZkPaths.topic(tp.topic()));
            zk.delete().forPath(ZkPaths.topicConfig(tp.topic()));
            Waits.waitUntil("broker 0 stops serving " + tp,
                    () -> cluster.broker(0).replicaManager().partition(tp).isEmpty(), TIMEOUT);
            assertEquals(RECORDS, logEnd(cluster, 0, tp), "the log stays while its topic is gone");

            Waits.waitUntil("the name free in the controller's view", () -> {
                try {
                    admin.createTopics(List.of(new NewTopic(tp.topic(), 1, (short) 1))).all().get();
                    return true;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof TopicExistsException) {
                        return false;
                    }
                    throw e;
                }
            }, TIMEOUT);
            Waits.waitUntil("broker 0 hosts the new " + tp, () -> cluster.broker(0).replicaManager().partition(tp)
                    .map(p -> p.topicId().equals(cluster.broker(0).metadata().image().topic(tp.topic())
                            .orElseThrow().topicId())).orElse(false), TIMEOUT);
            assertEquals(0L, logEnd(cluster, 0, tp), "the new topic starts empty");
            assertSetAsideWithRecords(cluster.logDir(0), "orders-0", "the old log renamed aside");
            produce(cluster, tp.topic());
            assertEquals(RECORDS, logEnd(cluster, 0, tp), "the new topic takes writes");
        }
    }

    /** The dirs {@code <partition>.<topic id>-stray} in {@code logDir}: logs set aside, neither served nor deleted. */
    private static List<File> strayDirs(File logDir, String partition) {
        File[] dirs = logDir.listFiles((dir, name) -> name.startsWith(partition + ".") && name.endsWith("-stray"));
        return dirs == null ? List.of() : List.of(dirs);
    }

    /** One log of {@code partition} set aside in {@code logDir}, its records kept. */
    private static void assertSetAsideWithRecords(File logDir, String partition, String what) {
        List<File> aside = strayDirs(logDir, partition);
        assertEquals(1, aside.size(), what);
        assertTrue(new File(aside.get(0), "00000000000000000000.log").length() > 0, what + ", with its records");
    }

    private static long logEnd(TestCluster cluster, int id, TopicPartition tp) {
        return cluster.broker(id).logStore().log(tp).map(l -> l.logEndOffset()).orElse(-1L);
    }

    /** {@code path} and every node under it, parents first. */
    private static void nodes(CuratorFramework zk, String path, Map<String, byte[]> out) throws Exception {
        byte[] data = zk.getData().forPath(path);
        out.put(path, Optional.ofNullable(data).orElse(new byte[0]));
        for (String child : zk.getChildren().forPath(path)) {
            nodes(zk, path + "/" + child, out);
        }
    }

    private static void produce(TestCluster cluster, String topic) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, ("v" + i).getBytes(StandardCharsets.UTF_8)))
                        .get();
            }
        }
    }
}
