package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An active-active pair of two three-broker clusters through prefixed mirror topics (issue 30, points 5 and 6):
 * A writes {@code orders}, B writes {@code payments}; B mirrors A's topics as {@code a.*}, A mirrors B's as
 * {@code b.*}, each with every topic included. Each topic has one writer, and neither mirror takes the other's mirror
 * topics back (a loop, skipped by discovery and shown in describe, refused when named). Then {@code orders} fails
 * over to B (its writers and its consumer group move to {@code a.orders} there) and back to A (A's {@code orders}
 * mirrors B's {@code a.orders}, cut to the last mirrored point, then fails over again, and B mirrors it once more as
 * {@code a.orders}); the consumer groups go on on both clusters without skipping a record. Every replica of a
 * mirror topic holds its source's log batch for batch, with the source's topic ID; an application's topic ACLs on
 * A appear on B under the prefix (literal and prefixed), its group ACL as it is.
 */
@Timeout(400)
class PrefixedMirrorActiveActiveTest {
    private static final int PARTITIONS = 2;

    @Test
    void anActiveActivePairFailsOneSideOverAndBackWithConsumerGroupsGoingOnOnBoth() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(withAuthorizer(), withAuthorizer())) {
            TestCluster a = clusters.source();
            TestCluster b = clusters.destination();
            MirrorAdmin onA = clusters.mirrorsOnSource();
            MirrorAdmin onB = clusters.mirrors();
            clusters.sourceAdmin().createTopics(List.of(new NewTopic("orders", PARTITIONS, (short) 3))).all().get();
            clusters.destinationAdmin().createTopics(List.of(new NewTopic("payments", PARTITIONS, (short) 3)))
                    .all().get();
            produce(a, "orders", "a1-", 100);
            produce(b, "payments", "b1-", 50);
            assertEquals(2 * 100, consume(a, "billing", "orders", 2 * 100).size());
            assertEquals(2 * 50, consume(b, "ledger", "payments", 2 * 50).size());
            produce(a, "orders", "a2-", 30); // not consumed on A

            // ACLs of an application on A, for topics named alike on both clusters (no ACL on the topics here, so
            // everyone else keeps its access): synced onto B under the prefix
            AclBinding readsReports = acl(ResourceType.TOPIC, "reports", PatternType.LITERAL, AclOperation.READ);
            AclBinding describesRep = acl(ResourceType.TOPIC, "rep", PatternType.PREFIXED, AclOperation.DESCRIBE);
            AclBinding readsGroup = acl(ResourceType.GROUP, "app-group", PatternType.LITERAL, AclOperation.READ);
            clusters.sourceAdmin().createAcls(List.of(readsReports, describesRep, readsGroup)).all().get();
            Map<String, String> fromA = new HashMap<>(mirrorConfigs(a, "a"));
            fromA.put("mirror.acls.include", "Topic;*;*;*;User:app,Group;*;*;*;User:app");
            onB.createClusterMirror("from-a", fromA);
            onA.createClusterMirror("from-b", mirrorConfigs(b, "b"));

            // each side's topic mirrored onto the other under its prefix: topic ID, offsets, epochs on every replica
            for (int p = 0; p < PARTITIONS; p++) {
                awaitMirrored(a, tp("orders", p), b, tp("a.orders", p));
                awaitMirrored(b, tp("payments", p), a, tp("b.payments", p));
            }
            assertEquals(topicId(clusters.sourceAdmin(), "orders"), topicId(clusters.destinationAdmin(), "a.orders"));
            assertEquals(topicId(clusters.destinationAdmin(), "payments"), topicId(clusters.sourceAdmin(),
                    "b.payments"));
            assertEquals("orders", onB.describeClusterMirrors(List.of("from-a")).get("from-a").topics()
                    .get("a.orders").sourceTopic(), "describe names the source topic");
            // consumer group offsets synced onto the prefixed names
            awaitCommitted(clusters.destinationAdmin(), "billing", "a.orders", 100);
            awaitCommitted(clusters.sourceAdmin(), "ledger", "b.payments", 50);

            Set<AclBinding> expected = Set.of(acl(ResourceType.TOPIC, "a.reports", PatternType.LITERAL,
                    AclOperation.READ), acl(ResourceType.TOPIC, "a.rep", PatternType.PREFIXED, AclOperation.DESCRIBE),
                    readsGroup);
            Waits.waitFor("app's ACLs synced onto B under the prefix", () -> Set.copyOf(clusters.destinationAdmin()
                    .describeAcls(AclBindingFilter.ANY).values().get()), expected::equals, MirroredClusters.TIMEOUT);

            // neither takes the other's mirror topic back: skipped when a pattern selects it, refused when named
            awaitSkipped(onB, "from-a", "b.payments", "loop");
            awaitSkipped(onA, "from-b", "a.orders", "loop");
            MirrorException loop = onB.startMirrorTopics("from-a", List.of("b.payments"), List.of(), List.of())
                    .get("b.payments");
            assertEquals(MirrorErrors.MIRROR_LOOP, loop.mirrorError().orElseThrow(), loop.getMessage());
            assertTrue(b.logEndOffset(tp("a.b.payments", 0)) < 0, "no a.b.payments on B");
            MirrorException renamed = assertThrows(MirrorException.class, () -> onB.alterClusterMirror("from-a",
                    Map.of("mirror.topic.prefix", "east")));
            assertEquals(Errors.INVALID_CONFIG.code(), renamed.errorCode(), "a.orders keeps its name while it mirrors");

            // orders fails over to B: its writers and its group move to a.orders there
            MirrorSteps.failOver(onB, "from-a", "a.orders");
            a.produce("orders", 0, 5, "lost-"); // written on A after B's last fetch: cut at the failback
            produce(b, "a.orders", "b-", 20);
            produce(b, "payments", "b2-", 10);
            List<String> billingOnB = consume(b, "billing", "a.orders", 2 * (30 + 20));
            assertEquals(2 * 30, billingOnB.stream().filter(v -> v.startsWith("a2-")).count(),
                    "the group resumes on B where it stopped on A: nothing skipped, nothing read twice");
            assertEquals(2 * 10, consume(b, "ledger", "payments", 2 * 10).size(), "B's own group goes on");
            // A's discovery does not fail back by itself into orders: that is the operator's decision
            awaitSkipped(onA, "from-b", "a.orders", "failback");

            // back to A: A's orders mirrors B's a.orders (cut to the last mirrored point), then fails over again
            assertEquals(Map.of(), onA.startMirrorTopics("from-b", List.of("a.orders"), List.of(), List.of()));
            assertEquals("a.orders", onA.describeClusterMirrors(List.of("from-b")).get("from-b").topics()
                    .get("orders").sourceTopic());
            for (int p = 0; p < PARTITIONS; p++) {
                List<ReplicaLogs.Batch> log = awaitMirrored(b, tp("a.orders", p), a,
                        tp("orders", p));
                assertTrue(log.stream().flatMap(batch -> batch.values().stream())
                        .noneMatch(v -> v != null && v.startsWith("lost-")), "A's tail B never had is cut");
            }
            // B's group read to a.orders' end: 130 mirrored, the failover's barrier, 20 of B's
            awaitCommitted(clusters.sourceAdmin(), "billing", "orders", 130 + 1 + 20);
            awaitCommitted(clusters.sourceAdmin(), "ledger", "b.payments", 60);
            MirrorSteps.failOver(onA, "from-b", "orders");
            assertEquals(Map.of(), onB.startMirrorTopics("from-a", List.of("orders"), List.of(), List.of()),
                    "B mirrors A's orders again into a.orders (the same topic ID)");
            produce(a, "orders", "a3-", 10);
            List<String> billingOnA = consume(a, "billing", "orders", 2 * 10);
            assertTrue(billingOnA.stream().allMatch(v -> v.startsWith("a3-")),
                    "the group resumes on A after what it read on B: " + billingOnA);
            for (int p = 0; p < PARTITIONS; p++) {
                awaitMirrored(a, tp("orders", p), b, tp("a.orders", p));
            }
            MirroredClusters.awaitState(onB, "from-a", "a.orders", "MIRRORING");
            MirroredClusters.awaitState(onA, "from-b", "b.payments", "MIRRORING");
        }
    }

    /**
     * Waits until {@code destination}'s {@code destinationTp} has caught up with {@code source}'s {@code sourceTp},
     * then until every replica of both holds the same log (batches: offsets, epochs, CRCs); returns it.
     */
    private static List<ReplicaLogs.Batch> awaitMirrored(TestCluster source, TopicPartition sourceTp,
                                                         TestCluster destination, TopicPartition destinationTp) {
        Waits.waitUntil(destinationTp + " caught up with " + sourceTp, () -> destination.logEndOffset(destinationTp)
                >= 0 && destination.logEndOffset(destinationTp) == source.logEndOffset(sourceTp),
                MirroredClusters.TIMEOUT);
        return MirrorInvariants.awaitMirrored(source, sourceTp, destination, destinationTp);
    }

    /** Three brokers with Kafka's authorizer, everyone allowed where no ACL names the resource. */
    private static TestCluster.Builder withAuthorizer() {
        return TestCluster.builder().brokers(3)
                .brokerProperty("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
                .brokerProperty("allow.everyone.if.no.acl.found", "true");
    }

    private static AclBinding acl(ResourceType type, String name, PatternType pattern, AclOperation operation) {
        return new AclBinding(new ResourcePattern(type, name, pattern), new AccessControlEntry("User:app", "*",
                operation, AclPermissionType.ALLOW));
    }

    private static Map<String, String> mirrorConfigs(TestCluster source, String prefix) {
        return Map.of("bootstrap.servers", source.bootstrapServers(), "mirror.topic.prefix", prefix,
                "mirror.topic.include", ".*", "mirror.metadata.refresh.interval.ms", "1000",
                "mirror.groups.sync.interval.ms", "1000");
    }

    private static TopicPartition tp(String topic, int partition) {
        return new TopicPartition(topic, partition);
    }

    private static void produce(TestCluster cluster, String topic, String prefix, int perPartition)
            throws Exception {
        for (int p = 0; p < PARTITIONS; p++) {
            cluster.produce(topic, p, perPartition, prefix + p + "-");
        }
    }

    private static Uuid topicId(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId();
    }

    /** Reads {@code count} records of {@code topic} in group {@code group} from its committed offsets, and commits. */
    private static List<String> consume(TestCluster cluster, String group, String topic, int count) {
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG,
                group))) {
            consumer.subscribe(List.of(topic));
            Waits.waitUntil(group + " reads " + count + " records of " + topic + " (read " + out.size() + ")", () -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    out.add(new String(r.value(), StandardCharsets.UTF_8));
                }
                return out.size() >= count;
            });
            consumer.commitSync();
            // nothing more there: a record read twice or from elsewhere would show here
            consumer.poll(Duration.ofMillis(500)).forEach(r -> out.add(new String(r.value(),
                    StandardCharsets.UTF_8)));
        }
        assertEquals(count, out.size(), "exactly " + count + " records for " + group + ": " + out);
        return out;
    }

    private static void awaitCommitted(Admin admin, String group, String topic, long perPartition) {
        Waits.waitFor(group + "'s offsets of " + topic + " at " + perPartition, () -> admin
                        .listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().entrySet().stream()
                        .filter(e -> e.getKey().topic().equals(topic))
                        .collect(Collectors.toMap(e -> e.getKey().partition(), e -> e.getValue().offset())),
                offsets -> offsets.size() == PARTITIONS && offsets.values().stream().allMatch(o -> o == perPartition),
                MirroredClusters.TIMEOUT);
    }

    private static void awaitSkipped(MirrorAdmin admin, String mirror, String topic, String because) {
        Waits.waitFor(mirror + " shows " + topic + " skipped (" + because + ")", () -> admin
                        .describeClusterMirrors(List.of(mirror)).get(mirror).skippedTopics(),
                skipped -> skipped.getOrDefault(topic, "").contains(because), MirroredClusters.TIMEOUT);
    }

}
