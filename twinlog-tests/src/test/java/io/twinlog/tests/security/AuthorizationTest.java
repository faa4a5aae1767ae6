package io.twinlog.tests.security;

import io.twinlog.tests.KafkaTools;
import io.twinlog.tests.ToolResult;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ACLs with Kafka's StandardAuthorizer and Kafka's {@code kafka-acls} tool (issue 13, point 3): ACLs created, listed
 * and removed with the tool, kept in ZooKeeper and applied by the broker; prefixed patterns; deny before allow; a
 * consumer group end to end; bad credentials. Users log in with SASL/PLAIN; {@code User:admin} is the super user
 * (and the broker's own login). Every API's own rule is in {@link ApiAuthorizationTableTest}.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class AuthorizationTest {
    private static final String JAAS = PlainUsers.JAAS;

    @TempDir
    static File workDir;
    private static TestCluster cluster;
    private static final PlainUsers USERS = new PlainUsers(() -> cluster.bootstrapServers());
    private static File adminConfig;

    @BeforeAll
    static void start() throws Exception {
        cluster = PlainUsers.authorizedCluster(List.of("alice", "bob", "carol")).brokers(1).build().start();
        adminConfig = new File(workDir, "admin.properties");
        Files.writeString(adminConfig.toPath(), "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                + "sasl.jaas.config=" + JAAS + " username=\"admin\" password=\"admin-secret\";\n");
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1), new NewTopic("payments", 1, (short) 1),
                    new NewTopic("secret", 1, (short) 1))).all().get();
        }
        try (KafkaProducer<byte[], byte[]> superUser = cluster.producer(Map.of())) {
            superUser.send(new ProducerRecord<>("payments", 0, null, new byte[] {1})).get(); // something to read
        }
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void kafkaAclsManagesAclsAndEachApiChecksWhatKafkaChecks() throws Exception {
        acls("--add", "--allow-principal", "User:alice", "--operation", "Write", "--operation", "Read",
                "--topic", "orders").assertSuccess();
        acls("--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "pay",
                "--resource-pattern-type", "prefixed").assertSuccess();
        acls("--add", "--allow-principal", "User:bob", "--operation", "Describe", "--topic", "secret")
                .assertSuccess();
        // applied on the broker a ZooKeeper round trip later
        ToolResult listed = Waits.waitFor("kafka-acls --list shows alice's ACLs", () -> acls("--list", "--topic",
                "orders"), r -> r.exitCode() == 0 && r.stdout().contains("User:alice")
                && r.stdout().contains("WRITE"));
        assertTrue(listed.stdout().contains("READ"), listed.toString());

        // Produce: WRITE on the topic
        Waits.waitUntil("alice may write orders", () -> canProduce("alice", "orders"));
        assertThrows(TopicAuthorizationException.class, () -> produce("bob", "orders"));
        // Fetch and ListOffsets: READ / DESCRIBE on the topic (READ implies DESCRIBE)
        assertEquals(1, endOffset("alice", "orders"));
        assertThrows(TopicAuthorizationException.class, () -> endOffset("bob", "orders"));
        assertThrows(TopicAuthorizationException.class, () -> fetchOne("bob", "orders"));
        assertTrue(fetchOne("alice", "orders"));
        // Metadata: topics the principal may not DESCRIBE are left out
        assertEquals(List.of("orders", "payments"), topicsSeenBy("alice"), "orders, and payments by prefix");
        assertEquals(List.of("secret"), topicsSeenBy("bob"), "DESCRIBE only");
        // InitProducerId: an idempotent producer needs WRITE on some topic (or IDEMPOTENT_WRITE on the cluster);
        // bob may describe secret, so the producer gets past Metadata to InitProducerId
        // (the refusal reaches send() as the future's failure, or, when InitProducerId failed first, thrown by it)
        Exception idempotent = assertThrows(Exception.class, () -> {
            try (KafkaProducer<byte[], byte[]> p = USERS.producer("bob", true)) {
                p.send(new ProducerRecord<>("secret", new byte[] {1})).get(20, TimeUnit.SECONDS);
            }
        });
        assertTrue(idempotent.getCause() instanceof ClusterAuthorizationException, idempotent.toString());
        // DescribeAcls: DESCRIBE on the cluster
        try (Admin bob = Admin.create(USERS.client("bob"))) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> bob.describeAcls(AclBindingFilter.ANY).values().get());
            assertTrue(e.getCause() instanceof ClusterAuthorizationException, e.toString());
        }

        // deny before allow: a DENY on payments wins over alice's prefixed ALLOW
        assertTrue(fetchOne("alice", "payments"), "allowed by the prefixed ACL first");
        acls("--add", "--deny-principal", "User:alice", "--operation", "Read", "--topic", "payments")
                .assertSuccess();
        Waits.waitUntil("the DENY applied", () -> readDenied("alice", "payments"));

        // removed with the tool: bob stays out, alice loses orders
        acls("--remove", "--force", "--allow-principal", "User:alice", "--operation", "Write", "--operation",
                "Read", "--topic", "orders").assertSuccess();
        Waits.waitUntil("alice's orders ACLs removed", () -> !topicsSeenBy("alice").contains("orders"));
        assertFalse(canProduce("alice", "orders"));
    }

    /** A consumer group needs READ on the group (FindCoordinator: DESCRIBE), and READ on the topics it commits. */
    @Test
    void aConsumerGroupNeedsReadOnTheGroup() throws Exception {
        try (Admin admin = cluster.admin();
             KafkaProducer<byte[], byte[]> superUser = cluster.producer(Map.of())) {
            admin.createTopics(List.of(new NewTopic("ledger", 1, (short) 1))).all().get();
            for (int i = 0; i < 3; i++) {
                superUser.send(new ProducerRecord<>("ledger", 0, null, new byte[] {(byte) i})).get();
            }
        }
        acls("--add", "--allow-principal", "User:carol", "--operation", "Read", "--topic", "ledger").assertSuccess();
        Map<String, Object> cfg = USERS.client("carol");
        cfg.put("key.deserializer", ByteArrayDeserializer.class);
        cfg.put("value.deserializer", ByteArrayDeserializer.class);
        cfg.put("group.id", "ledger-readers");
        cfg.put("auto.offset.reset", "earliest");
        cfg.put("enable.auto.commit", false);
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cfg)) {
            c.subscribe(List.of("ledger"));
            GroupAuthorizationException denied = Waits.waitFor("carol refused the group", () -> {
                try {
                    c.poll(Duration.ofMillis(500));
                    return null;
                } catch (GroupAuthorizationException e) {
                    return e;
                }
            }, e -> e != null, Duration.ofSeconds(30));
            assertTrue(denied.getMessage().contains("ledger-readers"), denied.getMessage());
        }
        acls("--add", "--allow-principal", "User:carol", "--operation", "Read", "--group", "ledger-readers")
                .assertSuccess();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cfg)) {
            c.subscribe(List.of("ledger"));
            int[] read = {0};
            Waits.waitUntil("carol reads ledger in her group", () -> {
                try {
                    read[0] += c.poll(Duration.ofMillis(500)).count();
                } catch (GroupAuthorizationException e) {
                    return false; // the ACL is a ZooKeeper round trip away
                }
                return read[0] >= 3;
            }, Duration.ofSeconds(60));
            c.commitSync();
        }
        try (Admin admin = cluster.admin()) {
            assertEquals(3, admin.listConsumerGroupOffsets("ledger-readers").partitionsToOffsetAndMetadata().get()
                    .get(new TopicPartition("ledger", 0)).offset());
        }
    }

    /** A regex subscription (KIP-848) is resolved only to the topics the member may describe, as in Kafka. */
    @Test
    void aRegexSubscriptionGetsOnlyTheTopicsTheMemberMayDescribe() throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("feed-in", 1, (short) 1), new NewTopic("feed-out", 1, (short) 1)))
                    .all().get();
        }
        acls("--add", "--allow-principal", "User:carol", "--operation", "Read", "--topic", "feed-in").assertSuccess();
        acls("--add", "--allow-principal", "User:carol", "--operation", "Read", "--group", "feed-readers")
                .assertSuccess();
        try (KafkaConsumer<byte[], byte[]> c = USERS.consumer("carol", Map.of("group.id", "feed-readers",
                "group.protocol", "consumer"))) {
            c.subscribe(Pattern.compile("feed-.*"));
            Waits.waitUntil("carol assigned feed-in", () -> {
                try {
                    c.poll(Duration.ofMillis(200));
                } catch (GroupAuthorizationException | TopicAuthorizationException e) {
                    return false; // the ACLs are a ZooKeeper round trip away
                }
                return c.assignment().contains(new TopicPartition("feed-in", 0));
            }, Duration.ofSeconds(60));
            for (int i = 0; i < 5; i++) {
                c.poll(Duration.ofMillis(200));
            }
            assertEquals(Set.of(new TopicPartition("feed-in", 0)), c.assignment(), "feed-out is not describable");
        }
    }

    @Test
    void withoutCredentialsOrWithABadPasswordNothingIsServed() {
        Map<String, Object> wrong = USERS.client("alice");
        wrong.put(SaslConfigs.SASL_JAAS_CONFIG, JAAS + " username=\"alice\" password=\"not-hers\";");
        wrong.put(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        wrong.put(CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG, 8_000);
        try (Admin admin = Admin.create(wrong)) {
            assertThrows(ExecutionException.class, () -> admin.listTopics().names().get());
        }
    }

    private static ToolResult acls(String... args) throws Exception {
        String[] all = new String[args.length + 4];
        all[0] = "--bootstrap-server";
        all[1] = cluster.bootstrapServers();
        all[2] = "--command-config";
        all[3] = adminConfig.getPath();
        System.arraycopy(args, 0, all, 4, args.length);
        return KafkaTools.run(workDir, Duration.ofSeconds(90), "org.apache.kafka.tools.AclCommand", null, all);
    }

    /** Sends one record; rethrows the send's cause (a TopicAuthorizationException when denied). */
    private static void produce(String user, String topic) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = USERS.producer(user, false)) {
            p.send(new ProducerRecord<>(topic, 0, null, new byte[] {1})).get(20, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    private static boolean canProduce(String user, String topic) {
        try {
            produce(user, topic);
            return true;
        } catch (TopicAuthorizationException e) {
            return false;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static long endOffset(String user, String topic) {
        try (KafkaConsumer<byte[], byte[]> c = USERS.consumer(user, Map.of())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            return c.endOffsets(List.of(tp)).get(tp);
        }
    }

    /** Reads from the start until one record arrives (true), or throws what the consumer throws. */
    private static boolean fetchOne(String user, String topic) {
        try (KafkaConsumer<byte[], byte[]> c = USERS.consumer(user, Map.of())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seek(tp, 0);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline) {
                if (!c.poll(Duration.ofMillis(200)).isEmpty()) {
                    return true;
                }
            }
            return false;
        }
    }

    private static boolean readDenied(String user, String topic) {
        try {
            fetchOne(user, topic);
            return false;
        } catch (TopicAuthorizationException e) {
            return true;
        }
    }

    private static List<String> topicsSeenBy(String user) throws Exception {
        try (Admin admin = Admin.create(USERS.client(user))) {
            return admin.listTopics().names().get().stream().sorted().toList();
        }
    }
}
