package io.twinlog.tests.mirror;

import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** A mirror follows its source: new matching topics, partition increases and config changes. */
@Timeout(300)
class MirrorMetadataSyncTest {

    @Test
    void discoversTopicsFollowsPartitionsAndSyncsConfigs() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start()) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            Admin src = clusters.sourceAdmin();
            Admin dst = clusters.destinationAdmin();
            clusters.createMirror("auto", Map.of("mirror.topic.include", "auto-.*",
                    "mirror.topic.exclude", ".*-private", "mirror.metadata.refresh.interval.ms", "500"));
            src.createTopics(List.of(new NewTopic("auto-orders", 2, (short) 1).configs(Map.of("retention.ms", "3600000")),
                    new NewTopic("auto-private", 1, (short) 1), new NewTopic("other", 1, (short) 1))).all().get();
            produce(source, "auto-orders", 1, 10);

            Waits.waitUntil("auto-orders discovered and mirrored", () -> destination
                    .logEndOffset(new TopicPartition("auto-orders", 1)) == 10, Duration.ofSeconds(60));
            assertEquals(src.describeTopics(List.of("auto-orders")).allTopicNames().get().get("auto-orders").topicId(),
                    dst.describeTopics(List.of("auto-orders")).allTopicNames().get().get("auto-orders").topicId());
            assertFalse(dst.listTopics().names().get().contains("auto-private"), "excluded");
            assertFalse(dst.listTopics().names().get().contains("other"), "not included");

            src.createPartitions(Map.of("auto-orders", NewPartitions.increaseTo(4))).all().get();
            produce(source, "auto-orders", 3, 5);
            Waits.waitUntil("the new partition followed and mirrored", () -> destination
                    .logEndOffset(new TopicPartition("auto-orders", 3)) == 5, Duration.ofSeconds(60));

            ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, "auto-orders");
            src.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"),
                    AlterConfigOp.OpType.SET)))).all().get();
            Waits.waitUntil("the config change synced", () -> "7200000".equals(dst.describeConfigs(List.of(res)).all()
                    .get().get(res).get("retention.ms").value()), Duration.ofSeconds(60));
        }
    }

    private static void produce(TestCluster cluster, String topic, int partition, int count) throws Exception {
        cluster.produce(topic, partition, count, "v");
    }
}
