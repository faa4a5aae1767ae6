package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.controller.zk.Json;
import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.tests.KafkaTools;
import io.twinlog.tests.ToolResult;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.TestDirectories;
import io.twinlog.testkit.Waits;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static io.twinlog.tests.mirror.MirrorPartitions.described;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 25, point 9, for brokers: a broker gone for good leaves no ZooKeeper state behind once the operator
 * unregisters it with Kafka's own {@code kafka-cluster.sh unregister --id N} (UnregisterBroker). Before, its node of
 * applied mirror truncation points stayed for ever, and so did the mark of every topic deleted while it was away.
 * A failback gives each of A's brokers a real truncation node; broker 2 is then decommissioned as an operator does
 * it (stopped, its replicas reassigned, a topic deleted meanwhile), and unregistered. A running broker and an id
 * nothing names are refused with the tool's error, and the mirror carries on.
 */
@Timeout(300)
class BrokerUnregistrationTest {
    private static final String TOPIC = "ledger";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(60);

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void kafkaClusterToolForgetsABrokerGoneForGood() throws Exception {
        File workDir = TestDirectories.create("unregister");
        try (TestCluster a = TestCluster.builder().brokers(3).build().start();
             TestCluster b = TestCluster.builder().brokers(1).build().start();
             Admin aAdmin = a.admin();
             MirrorAdmin onB = MirrorAdmin.create(b.bootstrapServers(), Duration.ofSeconds(60));
             MirrorAdmin onA = MirrorAdmin.create(a.bootstrapServers(), Duration.ofSeconds(60));
             CuratorFramework zk = CuratorFrameworkFactory.newClient(a.zookeeperConnect(), new RetryOneTime(100))) {
            zk.start();
            zk.blockUntilConnected(30, TimeUnit.SECONDS);
            aAdmin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(0, 1, 2))),
                    new NewTopic("scratch", Map.of(0, List.of(0, 1, 2))))).all().get();
            produce(a, "a", 50);
            MirrorSteps.startMirroring(onB, "from-a", a, TOPIC);
            Waits.waitUntil("B holds A's 50 records", () -> end(b, 0) == 50);
            MirrorSteps.failOver(onB, "from-a", TOPIC);
            produce(b, "b", 20);
            MirrorSteps.startMirroring(onA, "from-b", b, TOPIC); // a failback: every replica applies its cut
            Waits.waitUntil("every broker of A published the truncation point it applied", () ->
                    List.of(0, 1, 2).stream().allMatch(id -> exists(zk, ZkPaths.mirrorTruncations(id))),
                    Duration.ofSeconds(60));

            a.stopBroker(2); // decommissioned
            aAdmin.alterPartitionReassignments(Map.of(TP, Optional.of(new NewPartitionReassignment(List.of(0, 1)))))
                    .all().get();
            Waits.waitUntil("ledger-0 reassigned to brokers 0 and 1", () -> a.broker(0).metadata().image()
                    .partition(TP).map(p -> p.replicas().equals(List.of(0, 1))).orElse(false));
            aAdmin.deleteTopics(List.of("scratch")).all().get();
            assertEquals(List.of(0, 1, 2), markBrokers(zk, "scratch"), "the mark waits for every broker that held it");

            ToolResult running = unregister(a, workDir, 1);
            assertNotEquals(0, running.exitCode(), running.toString());
            assertTrue(running.all().contains("Broker 1 is registered (running)"), running.toString());
            ToolResult unknown = unregister(a, workDir, 9);
            assertNotEquals(0, unknown.exitCode(), unknown.toString());
            assertTrue(unknown.all().contains("BrokerIdNotRegisteredException"), unknown.toString());
            assertNotNull(zk.checkExists().forPath(ZkPaths.mirrorTruncations(1)), "a refusal changes nothing");

            ToolResult gone = unregister(a, workDir, 2);
            gone.assertSuccess();
            assertTrue(gone.stdout().contains("Broker 2 is no longer registered."), gone.toString());
            assertNull(zk.checkExists().forPath(ZkPaths.mirrorTruncations(2)));
            assertTrue(exists(zk, ZkPaths.mirrorTruncations(0)) && exists(zk, ZkPaths.mirrorTruncations(1)),
                    "the other brokers' nodes stay");
            assertEquals(List.of(0, 1), markBrokers(zk, "scratch"));

            produce(b, "after", 10);
            Waits.waitUntil("A still mirrors B", () -> described(onA, "from-b", TP).state().equals("MIRRORING")
                    && end(a, 0) == 81 && end(a, 1) == 81, Duration.ofSeconds(60)); // 50 + barrier + 20 + 10
        } finally {
            TestDirectories.delete(workDir);
        }
    }

    private static ToolResult unregister(TestCluster cluster, File workDir, int id) throws Exception {
        return KafkaTools.run(workDir, TOOL_TIMEOUT, "org.apache.kafka.tools.ClusterTool", null, "unregister",
                "--bootstrap-server", cluster.bootstrapServers(), "--id", Integer.toString(id));
    }

    private static boolean exists(CuratorFramework zk, String path) {
        try {
            return zk.checkExists().forPath(path) != null;
        } catch (Exception e) {
            throw new IllegalStateException("could not read " + path, e);
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Integer> markBrokers(CuratorFramework zk, String topic) throws Exception {
        String path = ZkPaths.topicDeletion(topic);
        return (List<Integer>) Json.decode(zk.getData().forPath(path), path).get("brokers");
    }

    private static long end(TestCluster c, int broker) {
        return c.broker(broker).logStore().log(TP).map(l -> l.logEndOffset()).orElse(-1L);
    }

    private static void produce(TestCluster cluster, String prefix, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("linger.ms", 5))) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(TOPIC, 0, null, (prefix + "-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
    }
}
