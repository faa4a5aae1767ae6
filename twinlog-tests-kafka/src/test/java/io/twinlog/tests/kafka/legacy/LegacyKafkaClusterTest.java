package io.twinlog.tests.kafka.legacy;

import io.twinlog.testkit.TestDirectories;
import io.twinlog.testkit.Waits;
import io.twinlog.testkit.ZooKeeperProcess;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LegacyKafkaCluster} runs real Apache Kafka 3.9.2 and 2.8.2 brokers (ZooKeeper mode, each in its own JVM) that
 * a kafka-clients 4.4 Admin, idempotent producer and consumer work against, with topic IDs, and whose terminate and
 * restart is a controlled shutdown: the leadership of the stopped broker moves, in a higher leader epoch. What the
 * mirroring tests of older sources (issue 28, point 7) build on.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class LegacyKafkaClusterTest {
    private static final String TOPIC = "orders";
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 100;

    private static File dir;
    private static ZooKeeperProcess zooKeeper;

    @BeforeAll
    static void startZooKeeper() throws IOException {
        dir = TestDirectories.create("legacy-kafka");
        zooKeeper = new ZooKeeperProcess(new File(dir, "zookeeper"));
        zooKeeper.start();
    }

    @AfterAll
    static void stopZooKeeper() throws InterruptedException {
        if (zooKeeper != null) {
            zooKeeper.close();
        }
        TestDirectories.delete(dir);
    }

    @ParameterizedTest(name = "Kafka {0}")
    @ValueSource(strings = {"3.9", "2.8"})
    void twoBrokersServeKafka44ClientsAndATerminatedLeaderHandsOverInAHigherEpoch(String version) throws Exception {
        try (LegacyKafkaCluster kafka = new LegacyKafkaCluster(version, zooKeeper.connectString(), 2).start();
             Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 2))).all().get();
            awaitInSync(admin, Set.of(0, 1));

            produce(kafka.bootstrapServers());
            List<String> values = consumeAll(kafka.bootstrapServers());
            assertEquals(IntStream.range(0, RECORDS).mapToObj(i -> "v" + i).collect(Collectors.toSet()),
                    Set.copyOf(values), "every record read back once");
            assertEquals(RECORDS, values.size());

            TopicDescription description = describe(admin);
            assertNotEquals(Uuid.ZERO_UUID, description.topicId(), "Kafka " + version + " assigns topic IDs");

            TopicPartition tp = new TopicPartition(TOPIC, 0);
            int leader = description.partitions().get(0).leader().id();
            int epochBefore = leaderEpoch(admin, tp);
            kafka.terminate(leader);
            kafka.start(leader);
            kafka.waitUntilReady();
            awaitInSync(admin, Set.of(0, 1));
            int epochAfter = leaderEpoch(admin, tp);
            assertTrue(epochAfter > epochBefore, "broker " + leader + " led " + tp + " in epoch " + epochBefore
                    + "; after its controlled shutdown and restart the epoch is " + epochAfter);
            assertEquals(RECORDS, IntStream.range(0, PARTITIONS).mapToLong(p -> endOffset(admin, p)).sum(),
                    "no record lost in the restart");
        }
    }

    /** Until every partition has a leader and {@code replicas} as its ISR, in the metadata the brokers serve. */
    private static void awaitInSync(Admin admin, Set<Integer> replicas) {
        Waits.waitFor("every partition of " + TOPIC + " led, with ISR " + replicas, () -> describe(admin),
                d -> d.partitions().size() == PARTITIONS && d.partitions().stream().allMatch(p -> p.leader() != null
                        && !p.leader().isEmpty() && isr(p).equals(replicas)), Duration.ofSeconds(60));
    }

    private static Set<Integer> isr(TopicPartitionInfo partition) {
        return partition.isr().stream().map(Node::id).collect(Collectors.toSet());
    }

    private static TopicDescription describe(Admin admin) throws Exception {
        return admin.describeTopics(List.of(TOPIC)).allTopicNames().get(10, TimeUnit.SECONDS).get(TOPIC);
    }

    /** The partition's current leader epoch, which a ListOffsets for the latest offset answers with. */
    private static int leaderEpoch(Admin admin, TopicPartition tp) throws Exception {
        ListOffsetsResultInfo latest = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp)
                .get(10, TimeUnit.SECONDS);
        return latest.leaderEpoch().orElseThrow(() -> new AssertionError("no leader epoch for " + tp));
    }

    private static long endOffset(Admin admin, int partition) {
        TopicPartition tp = new TopicPartition(TOPIC, partition);
        try {
            return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(10, TimeUnit.SECONDS)
                    .offset();
        } catch (Exception e) {
            throw new AssertionError("no end offset for " + tp, e);
        }
    }

    private static void produce(String bootstrap) throws Exception {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new StringSerializer())) {
            List<Future<RecordMetadata>> sends = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++) {
                sends.add(producer.send(new ProducerRecord<>(TOPIC, "k" + i, "v" + i)));
            }
            for (Future<RecordMetadata> send : sends) {
                send.get(30, TimeUnit.SECONDS); // acknowledged by every in-sync replica, or it throws
            }
        }
    }

    /** What a group of the classic protocol reads from the topic, from the start, until it has read every record. */
    private static List<String> consumeAll(String bootstrap) {
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, "smoke",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false"), new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(TOPIC));
            List<String> values = new ArrayList<>();
            Waits.waitFor(RECORDS + " records read back", () -> {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
                return values.size();
            }, n -> n >= RECORDS, Duration.ofSeconds(60));
            return values;
        }
    }
}
