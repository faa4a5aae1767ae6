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
 * Offset retention as in Kafka: the committed offsets of a group without members expire after the retention period,
 * not before, and stay expired after a restart (the coordinator wrote tombstones, and reloads them). The period is
 * 6 s through the internal {@code internal.offsets.retention.ms} (decision 121), which replaces
 * {@code offsets.retention.minutes}, whose one-minute floor made this test wait a minute; that the minutes key
 * reaches Kafka's coordinator is GroupCoordinatorInternalConfigsTest's.
 */
@Timeout(300)
class OffsetRetentionTest {
    private static final long RETENTION_MS = 6_000;

    @Test
    void offsetsOfAnEmptyGroupExpireAfterTheRetentionPeriod() throws Exception {
        String group = "short-lived";
        TopicPartition tp = new TopicPartition("events", 0);
        try (TestCluster cluster = TestCluster.builder().brokers(1)
                .brokerProperty("internal.offsets.retention.ms", Long.toString(RETENTION_MS))
                .brokerProperty("offsets.retention.check.interval.ms", "250").build().start()) {
            try (Admin admin = cluster.admin()) {
                admin.createTopics(List.of(new NewTopic("events", 1, (short) 1))).all().get();
                admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(0))).all().get();
                long committedAt = System.nanoTime();
                assertEquals(Map.of(tp, new OffsetAndMetadata(0)), offsets(admin, group));
                Waits.waitUntil("the offsets expired", () -> offsets(admin, group).isEmpty(), Duration.ofSeconds(30));
                long afterMs = (System.nanoTime() - committedAt) / 1_000_000;
                // the broker stamped the commit before the test's clock read above: a little slack for that
                assertTrue(afterMs >= RETENTION_MS - 1_500, "expired after " + afterMs + " ms, before the "
                        + RETENTION_MS + " ms retention period");
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
