package io.twinlog.tests;

import io.twinlog.controller.zk.Json;
import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * A topic deletion cut short by a crash is completed by the next controller (issue 25, point 9; Kafka resumes
 * {@code /admin/delete_topics} at controller failover). The ZooKeeper state a deleter leaves when it dies between
 * its writes (the mark written, part of the topic's tree deleted, the rest and the configs not) is made by hand,
 * then the controller broker is killed: the broker that takes over completes the deletion, and a mark whose topic
 * has been created again since (another topic ID) is completed without touching that topic.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class TopicDeletionResumeTest {

    @Test
    void theNextControllerCompletesAnInterruptedDeletion() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(2).build().start();
             Admin admin = cluster.admin();
             CuratorFramework zk = CuratorFrameworkFactory.newClient(cluster.zookeeperConnect(),
                     new RetryOneTime(100))) {
            zk.start();
            zk.blockUntilConnected(30, TimeUnit.SECONDS);
            admin.createTopics(List.of(new NewTopic("doomed", 2, (short) 2).configs(Map.of("retention.ms", "60000")),
                    new NewTopic("reborn", 1, (short) 2))).all().get();
            Uuid doomedId = admin.describeTopics(List.of("doomed")).allTopicNames().get().get("doomed").topicId();

            // a deleter that died after its mark and the first nodes of its recursive delete
            mark(zk, "doomed", doomedId);
            zk.delete().forPath(ZkPaths.partitionState("doomed", 1));
            // and one whose topic was created again (a new topic ID) before anyone completed it
            mark(zk, "reborn", Uuid.randomUuid());

            int controller = Waits.waitFor("a controller", () -> cluster.runningBrokerIds().stream()
                    .filter(id -> cluster.broker(id).controller().isActive()).findFirst().orElse(-1), id -> id >= 0);
            cluster.killBroker(controller);
            int survivor = 1 - controller;

            Waits.waitUntil("the next controller completed the deletion of doomed", () ->
                    completed(zk, "doomed") && zk.checkExists().forPath(ZkPaths.topic("doomed")) == null
                            && zk.checkExists().forPath(ZkPaths.topicConfig("doomed")) == null
                            && cluster.broker(survivor).metadata().image().topic("doomed").isEmpty(),
                    Duration.ofSeconds(60));
            Waits.waitUntil("the stale mark of reborn is completed", () -> completed(zk, "reborn"));
            assertNotNull(zk.checkExists().forPath(ZkPaths.topic("reborn")), "the topic created again is kept");
            assertEquals(1, cluster.broker(survivor).metadata().image().topic("reborn").orElseThrow()
                    .partitions().size());
        }
    }

    /** The deletion's mark is kept, completed, for a while (decision 72). */
    private static boolean completed(CuratorFramework zk, String topic) throws Exception {
        return zk.checkExists().forPath(ZkPaths.topicDeletion(topic)) != null && Boolean.TRUE.equals(Json.decode(
                zk.getData().forPath(ZkPaths.topicDeletion(topic)), topic).get("completed"));
    }

    private static void mark(CuratorFramework zk, String topic, Uuid topicId) throws Exception {
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.topicDeletion(topic),
                Json.encode(Map.of("version", 1, "topicId", topicId.toString())));
    }
}
