package io.twinlog.tests.share;

import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A share partition whose leader goes away after a large acknowledged round: the new leader loads the persisted
 * state (start offset and acknowledged batches) from the share coordinator, so no record acknowledged before is
 * delivered again, only the records written after. Each round the leader of the partition is also the share
 * coordinator of its state (the harder case: the state moves with it), and is stopped cleanly in one round, killed
 * in the next; it is started again before the following round.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class SharePartitionLeaderChangeTest {
    private static final Logger log = LoggerFactory.getLogger(SharePartitionLeaderChangeTest.class);
    private static final int ACKNOWLEDGED = 1_000;
    private static final int AFTER = 100;
    private static final int ROUNDS = 4;

    private TestCluster cluster;

    @BeforeEach
    void start() throws Exception {
        // share.version is 1 by default; 3 state partitions, so that each broker coordinates some states
        cluster = TestCluster.builder().brokers(3)
                .brokerProperty("share.coordinator.state.topic.num.partitions", "3")
                .brokerProperty("group.share.min.heartbeat.interval.ms", "500")
                .brokerProperty("group.share.heartbeat.interval.ms", "500")
                .build().start();
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void acknowledgedRecordsAreNotDeliveredAgainByTheNextLeader() throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            round(round, round % 2 == 1);
        }
    }

    private void round(int round, boolean kill) throws Exception {
        String topic = "moved-" + round;
        String group;
        Uuid topicId;
        int leader;
        try (Admin admin = cluster.admin()) {
            // led by a broker that coordinates share-group states (after a restart a broker may lead none)
            shareCoordinator("moving-" + round, Uuid.randomUuid());
            int stateLeader = admin.describeTopics(List.of(Topic.SHARE_GROUP_STATE_TOPIC_NAME)).allTopicNames().get()
                    .get(Topic.SHARE_GROUP_STATE_TOPIC_NAME).partitions().get(0).leader().id();
            List<Integer> replicas = new ArrayList<>(List.of(stateLeader));
            cluster.runningBrokerIds().stream().filter(id -> id != stateLeader).forEach(replicas::add);
            admin.createTopics(List.of(new NewTopic(topic, Map.of(0, replicas)))).all().get();
            topicId = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId();
            leader = Waits.waitFor("a leader of " + topic + "-0", () -> admin.describeTopics(List.of(topic))
                    .allTopicNames().get().get(topic).partitions().get(0).leader().id(), id -> id >= 0);
            // a group whose state of the partition the leader coordinates too: both move together
            int candidate = 0;
            while (shareCoordinator("moving-" + round + "-" + candidate, topicId) != leader) {
                candidate++;
                assertTrue(candidate < 100, "no group of 100 has its state coordinated by broker " + leader);
            }
            group = "moving-" + round + "-" + candidate;
            log.info("Round {}: {}-0 led by {}, which coordinates the state of group {}", round, topic, leader,
                    group);
            admin.alterShareGroupOffsets(group, Map.of(new TopicPartition(topic, 0), 0L)).all()
                    .get(30, TimeUnit.SECONDS);
        }
        produce(topic, 0, ACKNOWLEDGED);
        try (KafkaShareConsumer<byte[], byte[]> consumer = ShareConsumerTest.consumer(cluster, group, "c-" + round)) {
            consumer.subscribe(Set.of(topic));
            TreeSet<Long> acknowledged = new TreeSet<>();
            consumeAndAcknowledge(consumer, topicId, topic, acknowledged, ACKNOWLEDGED, new ArrayList<>());
            assertEquals(ACKNOWLEDGED, acknowledged.size());

            log.info("Round {}: {} records acknowledged; {} broker {}", round, ACKNOWLEDGED,
                    kill ? "killing" : "stopping", leader);
            if (kill) {
                cluster.killBroker(leader);
            } else {
                cluster.stopBroker(leader);
            }
            produce(topic, ACKNOWLEDGED, AFTER);
            List<Long> deliveredAfter = new ArrayList<>();
            TreeSet<Long> next = new TreeSet<>();
            consumeAndAcknowledge(consumer, topicId, topic, next, AFTER, deliveredAfter);
            List<Long> again = deliveredAfter.stream().filter(acknowledged::contains).toList();
            assertEquals(List.of(), again.size() > 20 ? again.subList(0, 20) : again,
                    "round " + round + ": " + again.size() + " acknowledged records delivered again after broker "
                            + leader + (kill ? " was killed" : " stopped"));
            assertEquals(ACKNOWLEDGED, next.first());
            assertEquals(ACKNOWLEDGED + AFTER - 1, next.last());
        }
        cluster.startBroker(leader);
        Waits.waitUntil("broker " + leader + " back in the cluster", () -> {
            try (Admin admin = cluster.admin()) {
                return admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).size() == 3;
            }
        });
    }

    /**
     * Polls until {@code count} distinct records were acknowledged with a successful commit, recording every
     * delivery in {@code delivered}.
     */
    private static void consumeAndAcknowledge(KafkaShareConsumer<byte[], byte[]> consumer, Uuid topicId,
                                              String topic, TreeSet<Long> acknowledged, int count,
                                              List<Long> delivered) {
        TopicIdPartition partition = new TopicIdPartition(topicId, new TopicPartition(topic, 0));
        Waits.waitFor(count + " records acknowledged", () -> {
            List<Long> polled = new ArrayList<>();
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                polled.add(r.offset());
                consumer.acknowledge(r, AcknowledgeType.ACCEPT);
            }
            delivered.addAll(polled);
            Map<TopicIdPartition, Optional<KafkaException>> committed = consumer.commitSync(Duration.ofSeconds(10));
            if (committed.getOrDefault(partition, Optional.empty()).isEmpty()) {
                acknowledged.addAll(polled);
            } else {
                log.info("Acknowledgement of {} records failed: {}", polled.size(), committed.get(partition).get()
                        .toString());
            }
            return acknowledged.size();
        }, n -> n >= count, Duration.ofSeconds(90));
    }

    /** The share coordinator of {@code group}'s state of partition 0 of the topic. */
    private int shareCoordinator(String group, Uuid topicId) {
        String key = group + ":" + topicId + ":0";
        int asked = cluster.runningBrokerIds().get(0);
        return Waits.waitFor("the share coordinator of " + key, () -> {
            try (RawKafkaConnection connection = RawKafkaConnection.to(cluster.broker(asked).bootstrapServers())) {
                FindCoordinatorResponse response = connection.send(new FindCoordinatorRequest.Builder(
                        new FindCoordinatorRequestData().setKeyType(FindCoordinatorRequest.CoordinatorType.SHARE.id())
                                .setCoordinatorKeys(List.of(key))).build((short) 6));
                return response.data().coordinators().get(0);
            }
        }, c -> c.errorCode() == Errors.NONE.code()).nodeId();
    }

    private void produce(String topic, int first, int count) {
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of())) {
            for (int i = first; i < first + count; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, Integer.toString(i)
                        .getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
    }
}
