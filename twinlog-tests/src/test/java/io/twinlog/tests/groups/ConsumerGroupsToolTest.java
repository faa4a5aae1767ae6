package io.twinlog.tests.groups;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.TestDirectories;
import io.twinlog.testkit.Waits;
import io.twinlog.tests.KafkaTools;
import io.twinlog.tests.ToolResult;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Apache Kafka's {@code kafka-consumer-groups} (kafka-tools 4.4.0, in its own JVM) against Twinlog: --list,
 * --describe (offsets, log end offsets, lag), --reset-offsets, --delete-offsets, --delete, and its errors for an
 * unknown group and for changing a group that still has members.
 */
@Timeout(300)
class ConsumerGroupsToolTest {
    private static final String TOPIC = "invoices";
    private static final String GROUP = "accounting";
    private static TestCluster cluster;
    private static File workDir;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(1).build().start();
        workDir = TestDirectories.create("group-tools");
    }

    @AfterAll
    static void stop() {
        cluster.close();
        TestDirectories.delete(workDir);
    }

    @Test
    void listDescribeResetAndDelete() throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 3, (short) 1))).all().get();
            produceAndConsume(30);

            assertTrue(groups("--list").stdoutLines().contains(GROUP));

            ToolResult describe = groups("--describe", "--group", GROUP);
            describe.assertSuccess();
            List<String> rows = describe.stdoutLines().stream().filter(l -> l.startsWith(GROUP)).toList();
            assertEquals(3, rows.size(), describe.toString());
            for (String row : rows) {
                // GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID
                List<String> cols = Arrays.asList(row.trim().split("\\s+"));
                assertEquals(TOPIC, cols.get(1));
                assertEquals("10", cols.get(3), row);
                assertEquals("10", cols.get(4), row);
                assertEquals("0", cols.get(5), row);
            }

            groups("--reset-offsets", "--group", GROUP, "--topic", TOPIC, "--to-earliest", "--execute").assertSuccess();
            assertEquals(List.of(0L, 0L, 0L), committed(admin));
            groups("--reset-offsets", "--group", GROUP, "--topic", TOPIC + ":1", "--to-offset", "7", "--execute")
                    .assertSuccess();
            assertEquals(List.of(0L, 7L, 0L), committed(admin));

            ToolResult unknown = groups("--describe", "--group", "no-such-group");
            // what a Kafka 4.4 broker answers too (DescribeGroups v6: GROUP_ID_NOT_FOUND)
            assertTrue(unknown.stdout().contains("GroupIdNotFoundException: Group no-such-group not found."),
                    unknown.toString());

            try (KafkaConsumer<byte[], byte[]> active = ConsumerGroupTest.member(cluster, GROUP, "classic")) {
                active.subscribe(List.of(TOPIC));
                Waits.waitUntil("the member joined", () -> {
                    active.poll(Duration.ofMillis(50));
                    return !active.assignment().isEmpty();
                });
                ToolResult busy = groups("--delete", "--group", GROUP);
                assertTrue(busy.all().contains("The group is not empty"), busy.toString());
                ToolResult resetWhileActive = groups("--reset-offsets", "--group", GROUP, "--topic", TOPIC,
                        "--to-earliest", "--execute");
                assertTrue(resetWhileActive.all().contains("inactive"), resetWhileActive.toString());
                assertEquals(List.of(0L, 7L, 0L), committed(admin), "offsets of an active group are left alone");
                ToolResult deleteOffsetsWhileSubscribed = groups("--delete-offsets", "--group", GROUP, "--topic", TOPIC);
                assertTrue(deleteOffsetsWhileSubscribed.stdout().contains("GroupSubscribedToTopicException"),
                        deleteOffsetsWhileSubscribed.toString());
                assertEquals(List.of(0L, 7L, 0L), committed(admin), "a subscribed topic's offsets are kept");
            }

            ToolResult offsetsDeleted = groups("--delete-offsets", "--group", GROUP, "--topic", TOPIC + ":1");
            offsetsDeleted.assertSuccess();
            assertEquals(List.of(0L, -1L, 0L), committed(admin), "only partition 1's offset deleted");

            ToolResult deleted = groups("--delete", "--group", GROUP);
            assertTrue(deleted.all().contains("Deletion of requested consumer groups ('" + GROUP + "') was successful."),
                    deleted.toString());
            assertFalse(groups("--list").stdoutLines().contains(GROUP));
        }
    }

    private static List<Long> committed(Admin admin) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(GROUP)
                .partitionsToOffsetAndMetadata().get();
        List<Long> out = new ArrayList<>();
        for (int p = 0; p < 3; p++) {
            OffsetAndMetadata o = offsets.get(new TopicPartition(TOPIC, p));
            out.add(o == null ? -1L : o.offset());
        }
        return out;
    }

    private static void produceAndConsume(int count) throws Exception {
        try (var p = cluster.producer(Map.of())) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(TOPIC, i % 3, null, new byte[]{(byte) i}));
            }
            p.flush();
        }
        try (KafkaConsumer<byte[], byte[]> c = ConsumerGroupTest.member(cluster, GROUP, "classic")) {
            c.subscribe(List.of(TOPIC));
            List<String> seen = new ArrayList<>();
            Waits.waitUntil("all records consumed", () -> {
                ConsumerGroupTest.pollInto(c, seen);
                return seen.size() >= count;
            });
            c.commitSync();
        }
    }

    private static ToolResult groups(String... args) throws Exception {
        String[] all = new String[args.length + 2];
        all[0] = "--bootstrap-server";
        all[1] = cluster.bootstrapServers();
        System.arraycopy(args, 0, all, 2, args.length);
        return KafkaTools.run(workDir, Duration.ofSeconds(60), "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                null, all);
    }
}
