package io.twinlog.tests.groups;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Offset retention as in Kafka: the committed offsets of a group without members expire after
 * {@code offsets.retention.minutes} (the smallest value, one minute, so this test takes a minute), and stay expired
 * after a restart (the coordinator wrote tombstones, and reloads them).
 */
@Timeout(300)
class OffsetRetentionTest {
    @Test
    void offsetsOfAnEmptyGroupExpireAfterTheRetentionPeriod() throws Exception {
        String group = "short-lived";
        TopicPartition tp = new TopicPartition("events", 0);
        try (TestCluster cluster = TestCluster.builder().brokers(1)
                .brokerProperty("offsets.retention.minutes", "1")
                .brokerProperty("offsets.retention.check.interval.ms", "1000").build().start()) {
            try (Admin admin = cluster.admin()) {
                admin.createTopics(List.of(new NewTopic("events", 1, (short) 1))).all().get();
                admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(0))).all().get();
                long committedAt = System.nanoTime();
                assertEquals(Map.of(tp, new OffsetAndMetadata(0)), offsets(admin, group));
                Waits.waitUntil("the offsets expired", () -> offsets(admin, group).isEmpty(), Duration.ofSeconds(120));
                long afterMs = (System.nanoTime() - committedAt) / 1_000_000;
                assertTrue(afterMs >= 55_000, "expired after " + afterMs + " ms, before the retention period");
            }
            cluster.stopBroker(0);
            cluster.startBroker(0);
            try (Admin admin = cluster.admin()) {
                assertTrue(Waits.waitFor("the group's offsets after a restart", () -> offsets(admin, group),
                        o -> true).isEmpty(), "expired offsets stay expired after reloading the log");
            }
        }
    }

    private static Map<TopicPartition, OffsetAndMetadata> offsets(Admin admin, String group) throws Exception {
        return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    }
}
