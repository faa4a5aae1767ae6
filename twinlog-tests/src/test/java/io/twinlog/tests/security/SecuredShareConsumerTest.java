package io.twinlog.tests.security;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Share groups on a secured cluster (issue 28, point 1): SASL/PLAIN users and Kafka's StandardAuthorizer on 3 brokers
 * whose own principal is the super user (the persister's state calls need CLUSTER_ACTION). Two {@code
 * KafkaShareConsumer}s of a user holding READ on the group and READ and DESCRIBE on the topic consume every record
 * once with explicit acknowledgement; a user without READ on the topic or on the group is refused with Kafka's
 * exceptions and acquires nothing.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class SecuredShareConsumerTest {
    private static final String TOPIC = "secured-queue";
    private static final String GROUP = "secured-workers";
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 600;

    private static TestCluster cluster;
    private static final PlainUsers USERS = new PlainUsers(() -> cluster.bootstrapServers());

    @BeforeAll
    static void start() throws Exception {
        cluster = PlainUsers.authorizedCluster(List.of("worker", "no-topic", "no-group", "producer")).brokers(3)
                .brokerProperty("share.coordinator.state.topic.replication.factor", "3")
                .brokerProperty("share.coordinator.state.topic.min.isr", "1")
                .brokerProperty("share.coordinator.state.topic.num.partitions", "3").build().start();
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 3))).all().get();
            List<AclBinding> acls = new ArrayList<>(List.of(
                    allow("producer", ResourceType.TOPIC, TOPIC, AclOperation.WRITE),
                    allow("worker", ResourceType.TOPIC, TOPIC, AclOperation.READ),
                    allow("worker", ResourceType.TOPIC, TOPIC, AclOperation.DESCRIBE),
                    allow("worker", ResourceType.GROUP, GROUP, AclOperation.READ),
                    allow("no-topic", ResourceType.TOPIC, TOPIC, AclOperation.DESCRIBE),
                    allow("no-topic", ResourceType.GROUP, GROUP + "-no-topic", AclOperation.READ),
                    allow("no-group", ResourceType.TOPIC, TOPIC, AclOperation.READ),
                    allow("no-group", ResourceType.TOPIC, TOPIC, AclOperation.DESCRIBE)));
            admin.createAcls(acls).all().get();
            Waits.waitUntil("every ACL applied", () -> admin.describeAcls(AclBindingFilter.ANY).values().get().size()
                    == acls.size());
            // from the first record: an operator's reset of the empty group (the default is the latest offset)
            Map<TopicPartition, Long> earliest = new HashMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                earliest.put(new TopicPartition(TOPIC, p), 0L);
            }
            Waits.waitUntil("the group starts at offset 0", () -> {
                admin.alterShareGroupOffsets(GROUP, earliest).all().get(20, TimeUnit.SECONDS);
                return true;
            });
        }
        try (KafkaProducer<byte[], byte[]> producer = USERS.producer("producer", true)) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(TOPIC, i % PARTITIONS, null, ByteBuffer.allocate(4).putInt(i)
                        .array()));
            }
            producer.flush();
        }
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void twoAuthorizedConsumersGetEveryRecordOnce() throws Exception {
        Map<Integer, Integer> deliveries = new HashMap<>();
        try (KafkaShareConsumer<byte[], byte[]> first = shareConsumer("worker", GROUP);
             KafkaShareConsumer<byte[], byte[]> second = shareConsumer("worker", GROUP)) {
            first.subscribe(List.of(TOPIC));
            second.subscribe(List.of(TOPIC));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (deliveries.size() < RECORDS && System.nanoTime() < deadline) {
                for (KafkaShareConsumer<byte[], byte[]> consumer : List.of(first, second)) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                    for (ConsumerRecord<byte[], byte[]> r : records) {
                        deliveries.merge(ByteBuffer.wrap(r.value()).getInt(), 1, Integer::sum);
                        consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                    if (!records.isEmpty()) {
                        consumer.commitSync(Duration.ofSeconds(20));
                    }
                }
            }
        }
        assertEquals(RECORDS, deliveries.size(), "every record delivered");
        Set<Integer> twice = new HashSet<>();
        deliveries.forEach((value, count) -> {
            if (count > 1) {
                twice.add(value);
            }
        });
        assertTrue(twice.isEmpty(), "acknowledged records delivered again: " + twice);
    }

    @Test
    void aUserWithoutReadOnTheTopicOrTheGroupIsRefused() {
        try (KafkaShareConsumer<byte[], byte[]> noTopic = shareConsumer("no-topic", GROUP + "-no-topic")) {
            noTopic.subscribe(List.of(TOPIC));
            assertThrows(TopicAuthorizationException.class, () -> pollUntilError(noTopic));
        }
        try (KafkaShareConsumer<byte[], byte[]> noGroup = shareConsumer("no-group", GROUP)) {
            noGroup.subscribe(List.of(TOPIC));
            assertThrows(GroupAuthorizationException.class, () -> pollUntilError(noGroup));
        }
    }

    /** Polls until the consumer throws (what a refused one does); fails if it consumed anything meanwhile. */
    private static void pollUntilError(KafkaShareConsumer<byte[], byte[]> consumer) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
            assertTrue(records.isEmpty(), "a refused consumer got " + records.count() + " records");
        }
        throw new AssertionError("not refused within 60 s");
    }

    private static KafkaShareConsumer<byte[], byte[]> shareConsumer(String user, String group) {
        Map<String, Object> cfg = USERS.client(user);
        cfg.put("group.id", group);
        cfg.put("share.acknowledgement.mode", "explicit");
        return new KafkaShareConsumer<>(cfg, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private static AclBinding allow(String user, ResourceType type, String name, AclOperation operation) {
        return new AclBinding(new ResourcePattern(type, name, PatternType.LITERAL),
                new AccessControlEntry("User:" + user, "*", operation, AclPermissionType.ALLOW));
    }
}
