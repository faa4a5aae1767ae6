package io.twinlog.tests.kafka;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.FeatureNode;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Apache Kafka 4.4 (share.version finalized by default) as the source of a share group's start offsets: set on Kafka
 * with AlterShareGroupOffsets, copied by a Twinlog mirror to the destination, and followed when reset to an earlier
 * offset. (Start offsets a {@code KafkaShareConsumer} moves on Kafka are not used here: Kafka persists a share
 * partition's new start offset with its next state write, so after one consume-and-acknowledge round Kafka's
 * DescribeShareGroupOffsets still answers the old one.)
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class KafkaSourceShareGroupSyncTest {
    private static final String TOPIC = "ledger";
    private static final String GROUP = "tasks";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @Test
    void aShareConsumersProgressOnKafkaReachesTheDestination() throws Exception {
        try (KafkaClusterTestKit kafka = ApacheKafka.startSingleBroker(Map.of(
                "share.coordinator.state.topic.replication.factor", "1",
                "share.coordinator.state.topic.min.isr", "1"));
             Admin kafkaAdmin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()));
             TestCluster twinlog = TestCluster.builder().brokers(1)
                     .brokerProperty("share.coordinator.state.topic.replication.factor", "1")
                     .brokerProperty("share.coordinator.state.topic.min.isr", "1")
                     .brokerProperty("share.coordinator.state.topic.num.partitions", "3").build().start()) {
            FinalizedVersionRange shareVersion = kafkaAdmin.describeFeatures().featureMetadata().get()
                    .finalizedFeatures().get("share.version");
            assertTrue(shareVersion != null && shareVersion.maxVersionLevel() >= 1, "Kafka 4.4 finalizes "
                    + "share.version on a new cluster: " + shareVersion);
            kafkaAdmin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            produce(kafka.bootstrapServers(), 100);
            FeatureNode.finalize(twinlog, Map.of("transaction.version", 2, "share.version", 1), TIMEOUT);

            try (MirrorAdmin mirrors = MirrorAdmin.create(twinlog.bootstrapServers(), TIMEOUT);
                 Admin twinlogAdmin = twinlog.admin()) {
                mirrors.createClusterMirror("k", Map.of("bootstrap.servers", kafka.bootstrapServers(),
                        "mirror.groups.sync.interval.ms", "300"));
                assertEquals(Map.of(), mirrors.startMirrorTopics("k", List.of(TOPIC), List.of(), List.of()));
                Waits.waitUntil("100 records mirrored", () -> twinlog.broker(0).logStore().log(TP)
                        .map(l -> l.logEndOffset() == 100).orElse(false), TIMEOUT);

                // an operator sets the group's start offset on Kafka (the group is created, empty)
                kafkaAdmin.alterShareGroupOffsets(GROUP, Map.of(TP, 60L)).all().get();
                Waits.waitFor("the start offset at 60 on Twinlog", () -> startOffsets(twinlogAdmin),
                        Map.of(TP, 60L)::equals, TIMEOUT);
                MirrorAdmin.GroupSyncDescription synced = Waits.waitFor("the sync of " + GROUP + " in describe",
                        () -> mirrors.describeClusterMirrors(List.of("k")).get("k").groups().get(GROUP),
                        g -> g != null, TIMEOUT);
                assertEquals("SHARE", synced.groupType());

                // reset to an earlier offset on Kafka: the destination follows
                kafkaAdmin.alterShareGroupOffsets(GROUP, Map.of(TP, 30L)).all().get();
                Waits.waitFor("the start offset reset to 30 on Twinlog", () -> startOffsets(twinlogAdmin),
                        Map.of(TP, 30L)::equals, TIMEOUT);
            }
        }
    }

    private static Map<TopicPartition, Long> startOffsets(Admin admin) throws Exception {
        Map<TopicPartition, Long> out = new HashMap<>();
        Map<TopicPartition, SharePartitionOffsetInfo> offsets = admin.listShareGroupOffsets(
                Map.of(GROUP, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(GROUP).get();
        offsets.forEach((tp, info) -> {
            if (info != null) {
                out.put(tp, info.startOffset());
            }
        });
        return out;
    }

    private static void produce(String bootstrap, int count) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", bootstrap);
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(props)) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(TOPIC, 0, null, ("r" + i).getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
    }
}
