package io.twinlog.tests.storage;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
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
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ZooKeeper emptied under running brokers (an ensemble rebuilt or wiped while the cluster runs; decision 54 covered
 * only a start against it): every topic leaves the metadata at once, without a deletion, and no broker deletes a log
 * for it (decision 72). Once ZooKeeper holds the cluster's metadata again (restored from a copy), the brokers serve
 * every record. A real deletion, marked in {@code /admin/delete_topics}, still deletes the logs.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ZooKeeperEmptiedTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final int RECORDS = 40;

    @Test
    void runningBrokersKeepEveryLogWhenZooKeeperIsEmptiedAndServeThemWhenItIsBack() throws Exception {
        TopicPartition tp = new TopicPartition("kept", 0);
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             CuratorFramework zk = CuratorFrameworkFactory.newClient(cluster.zookeeperConnect(),
                     new RetryOneTime(100))) {
            zk.start();
            zk.blockUntilConnected(30, TimeUnit.SECONDS);
            try (Admin admin = cluster.admin()) {
                admin.createTopics(List.of(new NewTopic(tp.topic(), 1, (short) 3), new NewTopic("deleted", 1,
                        (short) 3))).all().get();
            }
            produce(cluster, tp.topic());
            produce(cluster, "deleted");
            for (int id : List.of(0, 1, 2)) {
                Waits.waitUntil("broker " + id + " holds every record", () -> logEnd(cluster, id, tp) == RECORDS,
                        TIMEOUT);
            }

            Map<String, byte[]> copy = new LinkedHashMap<>();
            persistentNodes(zk, "/", copy);
            for (String child : zk.getChildren().forPath("/")) {
                if (!child.equals("zookeeper")) {
                    zk.delete().deletingChildrenIfNeeded().forPath("/" + child);
                }
            }
            for (int id : List.of(0, 1, 2)) {
                Waits.waitUntil("broker " + id + " sees no topic", () -> cluster.broker(id).metadata().image()
                        .topic(tp.topic()).isEmpty() && cluster.broker(id).replicaManager().partition(tp).isEmpty(),
                        TIMEOUT);
                assertEquals(RECORDS, logEnd(cluster, id, tp), "broker " + id + " keeps its log of " + tp);
            }

            // ZooKeeper restored from the copy (the brokers' own registrations are theirs to write again)
            for (Map.Entry<String, byte[]> node : copy.entrySet()) {
                // a node may be there already, or appear meanwhile: a broker's controller writes into the emptied
                // ZooKeeper (an initial state for a restored partition, say)
                try {
                    zk.create().forPath(node.getKey(), node.getValue());
                } catch (KeeperException.NodeExistsException there) {
                    zk.setData().forPath(node.getKey(), node.getValue());
                }
            }
            List<String> read = consumeAll(cluster, tp.topic());
            assertEquals(RECORDS, read.size(), "every record is served again: " + read);

            // a deletion by request still deletes: the mark in /admin/delete_topics says so
            try (Admin admin = cluster.admin()) {
                admin.deleteTopics(List.of("deleted")).all().get();
            }
            TopicPartition deleted = new TopicPartition("deleted", 0);
            for (int id : List.of(0, 1, 2)) {
                Waits.waitUntil("broker " + id + " deleted the log of " + deleted,
                        () -> cluster.broker(id).logStore().log(deleted).isEmpty(), TIMEOUT);
            }
            assertTrue(cluster.broker(0).logStore().log(tp).isPresent());
        }
    }

    private static long logEnd(TestCluster cluster, int id, TopicPartition tp) {
        return cluster.broker(id).logStore().log(tp).map(l -> l.logEndOffset()).orElse(-1L);
    }

    /** Every persistent node under {@code path} (ZooKeeper's own excepted), parents first. */
    private static void persistentNodes(CuratorFramework zk, String path, Map<String, byte[]> out) throws Exception {
        for (String child : zk.getChildren().forPath(path)) {
            String childPath = (path.equals("/") ? "" : path) + "/" + child;
            if (childPath.equals("/zookeeper")) {
                continue;
            }
            Stat stat = new Stat();
            byte[] data = zk.getData().storingStatIn(stat).forPath(childPath);
            if (stat.getEphemeralOwner() == 0) {
                out.put(childPath, data == null ? new byte[0] : data);
                persistentNodes(zk, childPath, out);
            }
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

    private static List<String> consumeAll(TestCluster cluster, String topic) {
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            Waits.waitUntil("every record of " + topic + " read", () -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    out.add(new String(r.value(), StandardCharsets.UTF_8));
                }
                return out.size() >= RECORDS;
            }, TIMEOUT);
        }
        return out;
    }
}
