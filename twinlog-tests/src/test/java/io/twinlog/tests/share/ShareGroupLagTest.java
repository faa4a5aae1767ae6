package io.twinlog.tests.share;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The lag column of {@code kafka-share-groups.sh --describe} (DescribeShareGroupOffsets v1, KIP-1226) on a 3-broker
 * cluster: the group coordinator knows the latest offset of every partition, also of those other brokers lead (it
 * asks them with ListOffsets), and a partition whose leader is down has no lag in the answer (the admin leaves the
 * partition out) instead of holding the answer back or showing a stale one.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ShareGroupLagTest {
    private static final String GROUP = "lagging";
    private static final String TOPIC = "backlog";
    private static final int PARTITIONS = 3;

    @Test
    void everyPartitionsLagIsKnownWhicheverBrokerLeadsIt() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3)
                .brokerProperty("offsets.topic.replication.factor", "3")
                .brokerProperty("share.coordinator.state.topic.replication.factor", "3")
                .brokerProperty("share.coordinator.state.topic.min.isr", "1")
                .brokerProperty("share.coordinator.state.topic.num.partitions", "3").build().start()) {
            Map<TopicPartition, Long> start = new HashMap<>();
            try (Admin admin = cluster.admin()) {
                // one replica each, spread over the three brokers: two of them are led elsewhere than the coordinator
                admin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(0),
                        1, List.of(1), 2, List.of(2))))).all().get();
            }
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of())) {
                for (int p = 0; p < PARTITIONS; p++) {
                    for (int i = 0; i < 10 * (p + 1); i++) {
                        producer.send(new ProducerRecord<>(TOPIC, p, null, new byte[] {(byte) i}));
                    }
                    start.put(new TopicPartition(TOPIC, p), (long) p);
                }
                producer.flush();
            }
            try (Admin admin = cluster.admin()) {
                Waits.waitFor("the share group's start offsets are set", () -> {
                    admin.alterShareGroupOffsets(GROUP, start).all().get(30, TimeUnit.SECONDS);
                    return true;
                }, ok -> ok);
                // partition p holds 10 * (p + 1) records and starts at p
                Map<TopicPartition, Optional<Long>> expected = start.keySet().stream().collect(Collectors.toMap(
                        tp -> tp, tp -> Optional.of(10L * (tp.partition() + 1) - tp.partition())));
                Waits.waitFor("every partition's lag", () -> lags(admin), expected::equals);

                // a broker that is not the group's coordinator goes down: the partition only it holds has no leader
                int coordinator = admin.describeShareGroups(List.of(GROUP)).describedGroups().get(GROUP)
                        .get(30, TimeUnit.SECONDS).coordinator().id();
                int down = (coordinator + 1) % PARTITIONS;
                cluster.stopBroker(down);
                TopicPartition orphan = new TopicPartition(TOPIC, down);
                Map<TopicPartition, Optional<Long>> withoutIt = Waits.waitFor("an answer while broker " + down
                        + " is down", () -> lags(admin), lags -> lags.size() >= PARTITIONS - 1
                        && lags.getOrDefault(orphan, Optional.empty()).isEmpty());
                assertTrue(withoutIt.entrySet().stream().filter(e -> !e.getKey().equals(orphan))
                        .allMatch(e -> e.getValue().equals(expected.get(e.getKey()))), withoutIt.toString());
            }
        }
    }

    private static Map<TopicPartition, Optional<Long>> lags(Admin admin) throws Exception {
        Map<TopicPartition, SharePartitionOffsetInfo> offsets = admin.listShareGroupOffsets(Map.of(GROUP,
                new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(GROUP).get(30, TimeUnit.SECONDS);
        Map<TopicPartition, Optional<Long>> lags = new HashMap<>();
        offsets.forEach((tp, info) -> lags.put(tp, info == null ? Optional.empty() : info.lag()));
        return lags;
    }
}
