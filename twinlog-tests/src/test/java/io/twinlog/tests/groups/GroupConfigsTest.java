package io.twinlog.tests.groups;

import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.tests.KafkaTools;
import io.twinlog.tests.ToolResult;
import io.twinlog.tests.ZooKeeperNodes;
import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConfigResourcesOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatResponse;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Per-group configs (KIP-848 {@code consumer.*}, KIP-932 {@code share.*}) as an operator sets them: Kafka's own
 * {@code kafka-configs --entity-type groups} against a 3-broker cluster. They are stored in ZooKeeper
 * ({@code /config/groups/<group>}), described by every broker with Kafka's sources and synonyms, refused with Kafka's
 * messages where Kafka refuses them (and with Twinlog's for the keys it does not support, decision 105), and in
 * force in the hosted group coordinator of whichever broker coordinates the group, before and after a restart: a
 * ConsumerGroupHeartbeat answers with the group's {@code consumer.heartbeat.interval.ms}, a ShareGroupHeartbeat with its
 * {@code share.heartbeat.interval.ms}.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class GroupConfigsTest {
    private static final String TOPIC = "group-configs";
    @TempDir
    static File workDir;
    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(3).build().start();
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 3))).all().get();
        }
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void kafkaConfigsSetsDescribesAndDeletesGroupConfigsOnEveryBroker() throws Exception {
        configs("--entity-type", "groups", "--entity-name", "share-app", "--alter", "--add-config",
                "share.auto.offset.reset=earliest,share.record.lock.duration.ms=15000").assertSuccess();
        ToolResult described = configs("--entity-type", "groups", "--entity-name", "share-app", "--describe");
        assertTrue(described.stdout().contains("Dynamic configs for group share-app are:")
                && described.stdout().contains("share.auto.offset.reset=earliest sensitive=false "
                + "synonyms={DYNAMIC_GROUP_CONFIG:share.auto.offset.reset=earliest, "
                + "DEFAULT_CONFIG:share.auto.offset.reset=latest}")
                && described.stdout().contains("share.record.lock.duration.ms=15000 sensitive=false synonyms="
                + "{DYNAMIC_GROUP_CONFIG:share.record.lock.duration.ms=15000, "
                + "DEFAULT_CONFIG:group.share.record.lock.duration.ms=30000}"), described.all());
        assertTrue(node(ZkPaths.GROUP_CONFIGS + "/share-app").contains("\"share.auto.offset.reset\":\"earliest\""));
        for (int broker = 0; broker < 3; broker++) {
            int id = broker;
            DescribeConfigsResponseData.DescribeConfigsResourceResult entry = Waits.waitFor(
                    "broker " + id + " shows share.record.lock.duration.ms=15000",
                    () -> describe(id, "share-app", "share.record.lock.duration.ms"),
                    e -> e.isPresent() && "15000".equals(e.get().value())).orElseThrow();
            assertEquals(DescribeConfigsResponse.ConfigSource.GROUP_CONFIG.id(), entry.configSource());
            // a key the group does not set: the broker's default, with the broker key as its synonym
            DescribeConfigsResponseData.DescribeConfigsResourceResult unset = describe(id, "share-app",
                    "share.heartbeat.interval.ms").orElseThrow();
            assertEquals("5000", unset.value());
            assertEquals("group.share.heartbeat.interval.ms", unset.synonyms().get(0).name());
        }
        // every group with configs, through ListConfigResources, as kafka-configs lists them without a name
        ToolResult all = configs("--entity-type", "groups", "--describe");
        assertTrue(all.stdout().contains("Dynamic configs for group share-app are:"), all.all());

        configs("--entity-type", "groups", "--entity-name", "share-app", "--alter", "--delete-config",
                "share.auto.offset.reset,share.record.lock.duration.ms").assertSuccess();
        assertNull(node(ZkPaths.GROUP_CONFIGS + "/share-app"), "a group left without configs has no node");
        assertEquals("latest", describe(0, "share-app", "share.auto.offset.reset").orElseThrow().value());
    }

    @Test
    void refusedWithKafkasErrorsAndNothingStored() throws Exception {
        assertRefused("no.such.key=1", "Unknown group config name: no.such.key");
        assertRefused("share.heartbeat.interval.ms=1",
                "share.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.");
        assertRefused("consumer.session.timeout.ms=100000",
                "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.");
        assertRefused("share.auto.offset.reset=bogus", "Invalid value bogus for configuration "
                + "share.auto.offset.reset");
        // Kafka 4.4 at share.version 2 accepts these; Twinlog has no dead-letter queue and no Streams groups
        assertRefused("errors.deadletterqueue.topic.name=dlq.refused", "Group config "
                + "errors.deadletterqueue.topic.name is not supported: Twinlog has no dead-letter queue");
        assertRefused("streams.num.standby.replicas=1", "Group config streams.num.standby.replicas is not "
                + "supported: Twinlog has no Kafka Streams groups");
        assertNull(node(ZkPaths.GROUP_CONFIGS + "/refused"), "nothing stored for a refused change");
    }

    @Test
    void heartbeatsAnswerWithTheGroupsIntervalOnEveryCoordinatorAndAfterRestarts() throws Exception {
        String group = "hb-app";
        configs("--entity-type", "groups", "--entity-name", group, "--alter", "--add-config",
                "consumer.heartbeat.interval.ms=6000").assertSuccess();
        int coordinator = coordinatorOf(group, Optional.empty());
        assertEquals(6000, joinHeartbeatIntervalMs(coordinator, group));

        // the coordinator moves to a broker that read the configs while running
        cluster.stopBroker(coordinator);
        try {
            int next = coordinatorOf(group, Optional.of(coordinator));
            assertEquals(6000, joinHeartbeatIntervalMs(next, group));
            configs("--entity-type", "groups", "--entity-name", group, "--alter", "--add-config",
                    "consumer.heartbeat.interval.ms=7000").assertSuccess();
            assertEquals(7000, joinHeartbeatIntervalMs(next, group));
        } finally {
            cluster.startBroker(coordinator);
        }
        // the restarted broker reads what changed while it was down
        DescribeConfigsResponseData.DescribeConfigsResourceResult restarted = describe(coordinator, group,
                "consumer.heartbeat.interval.ms").orElseThrow();
        assertEquals("7000", restarted.value());
        assertEquals(DescribeConfigsResponse.ConfigSource.GROUP_CONFIG.id(), restarted.configSource());
    }

    @Test
    void shareHeartbeatsAnswerWithTheGroupsShareInterval() throws Exception {
        String group = "share-hb";
        configs("--entity-type", "groups", "--entity-name", group, "--alter", "--add-config",
                "share.heartbeat.interval.ms=8000").assertSuccess();
        if (ZooKeeperNodes.read(cluster.zookeeperConnect(), ZkPaths.FEATURE) == null) {
            // share groups are served at share.version 1 (decision 102)
            ZooKeeperNodes.create(cluster.zookeeperConnect(), ZkPaths.FEATURE,
                    "{\"version\":1,\"features\":{\"share.version\":1}}");
        }
        int coordinator = coordinatorOf(group, Optional.empty());
        ShareGroupHeartbeatResponseData joined = Waits.waitFor("a share member joined on broker " + coordinator,
                () -> {
                    try (RawKafkaConnection connection = connect(coordinator)) {
                        ShareGroupHeartbeatResponse response = connection.send(new ShareGroupHeartbeatRequest.Builder(
                                new ShareGroupHeartbeatRequestData().setGroupId(group)
                                        .setMemberId(Uuid.randomUuid().toString()).setMemberEpoch(0)
                                        .setSubscribedTopicNames(List.of(TOPIC))).build());
                        return response.data();
                    }
                }, d -> d.errorCode() == Errors.NONE.code());
        assertEquals(8000, joined.heartbeatIntervalMs());
    }

    @Test
    void deletingAGroupKeepsItsConfigsAsKafkaDoes() throws Exception {
        String group = "deleted-app";
        try (Admin admin = cluster.admin()) {
            admin.alterConsumerGroupOffsets(group, Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(0)))
                    .all().get();
            configs("--entity-type", "groups", "--entity-name", group, "--alter", "--add-config",
                    "consumer.session.timeout.ms=50000").assertSuccess();
            admin.deleteConsumerGroups(List.of(group)).all().get();
            // Kafka 4.4 deletes the group's offsets and metadata, not its configs: they apply if it comes back
            Set<String> listed = Set.copyOf(admin.listConfigResources(Set.of(ConfigResource.Type.GROUP),
                    new ListConfigResourcesOptions()).all().get().stream().map(ConfigResource::name).toList());
            assertTrue(listed.contains(group), listed.toString());
        }
        assertEquals("50000", describe(1, group, "consumer.session.timeout.ms").orElseThrow().value());
    }

    @Test
    void storedEntriesABrokerCannotUseAreLeftOutAndTheOthersApply() throws Exception {
        // written by another tool: a key Twinlog refuses next to one it takes, under a group id that needs escaping
        configs("--entity-type", "groups", "--entity-name", "other", "--alter", "--add-config",
                "share.auto.offset.reset=earliest").assertSuccess(); // creates /config/groups
        ZooKeeperNodes.create(cluster.zookeeperConnect(), ZkPaths.GROUP_CONFIGS + "/odd%2Fgroup",
                "{\"version\":1,\"config\":{\"share.auto.offset.reset\":\"earliest\","
                        + "\"errors.deadletterqueue.topic.name\":\"dlq.odd\"}}");
        for (int broker = 0; broker < 3; broker++) {
            int id = broker;
            Waits.waitUntil("broker " + id + " applies the usable entry", () -> describe(id, "odd/group",
                    "share.auto.offset.reset").map(e -> "earliest".equals(e.value())).orElse(false));
            DescribeConfigsResponseData.DescribeConfigsResourceResult dlq = describe(id, "odd/group",
                    "errors.deadletterqueue.topic.name").orElseThrow();
            assertEquals("", dlq.value(), "the refused entry is left out");
            assertTrue(dlq.readOnly());
        }
    }

    private static void assertRefused(String config, String message) throws Exception {
        ToolResult refused = configs("--entity-type", "groups", "--entity-name", "refused", "--alter",
                "--add-config", config);
        assertNotEquals(0, refused.exitCode(), refused.all());
        assertTrue(refused.all().contains(message), "expected '" + message + "' in\n" + refused.all());
    }

    /** The coordinator of {@code group}, once it is another broker than {@code not} and has loaded its partition. */
    private static int coordinatorOf(String group, Optional<Integer> not) {
        int asked = cluster.runningBrokerIds().get(0);
        return Waits.waitFor("the coordinator of " + group + (not.isPresent() ? " other than " + not.get() : ""),
                () -> {
                    try (RawKafkaConnection connection = connect(asked)) {
                        FindCoordinatorResponse response = connection.send(new FindCoordinatorRequest.Builder(
                                new FindCoordinatorRequestData().setKeyType((byte) 0)
                                        .setCoordinatorKeys(List.of(group))).build());
                        FindCoordinatorResponseData.Coordinator c = response.data().coordinators().get(0);
                        return c.errorCode() == Errors.NONE.code() ? c.nodeId() : -1;
                    }
                }, id -> id >= 0 && !not.equals(Optional.of(id)));
    }

    /** A new member's first ConsumerGroupHeartbeat, sent until the coordinator answers it without error. */
    private static int joinHeartbeatIntervalMs(int coordinator, String group) {
        ConsumerGroupHeartbeatResponseData answer = Waits.waitFor("a heartbeat answered by broker " + coordinator,
                () -> {
                    try (RawKafkaConnection connection = connect(coordinator)) {
                        ConsumerGroupHeartbeatResponse response = connection.send(
                                new ConsumerGroupHeartbeatRequest.Builder(new ConsumerGroupHeartbeatRequestData()
                                        .setGroupId(group).setMemberId(Uuid.randomUuid().toString())
                                        .setMemberEpoch(0).setRebalanceTimeoutMs(30_000)
                                        .setSubscribedTopicNames(List.of(TOPIC)).setTopicPartitions(List.of()))
                                        .build());
                        return response.data();
                    }
                }, d -> d.errorCode() == Errors.NONE.code());
        return answer.heartbeatIntervalMs();
    }

    /** One key of a group's configs as {@code broker} describes them (with synonyms). */
    private static Optional<DescribeConfigsResponseData.DescribeConfigsResourceResult> describe(int broker,
                                                                                                String group,
                                                                                                String key)
            throws Exception {
        try (RawKafkaConnection connection = connect(broker)) {
            DescribeConfigsResponse response = connection.send(new DescribeConfigsRequest.Builder(
                    new DescribeConfigsRequestData().setIncludeSynonyms(true).setResources(List.of(
                            new DescribeConfigsRequestData.DescribeConfigsResource()
                                    .setResourceType(ConfigResource.Type.GROUP.id()).setResourceName(group)
                                    .setConfigurationKeys(List.of(key))))).build());
            DescribeConfigsResponseData.DescribeConfigsResult result = response.data().results().get(0);
            assertEquals(Errors.NONE.code(), result.errorCode(), result.errorMessage());
            return result.configs().stream().findFirst();
        }
    }

    private static RawKafkaConnection connect(int broker) throws Exception {
        return new RawKafkaConnection("127.0.0.1", cluster.broker(broker).boundPort("PLAINTEXT"));
    }

    /** The node's data as text, null when it does not exist. */
    private static String node(String path) throws Exception {
        return ZooKeeperNodes.read(cluster.zookeeperConnect(), path);
    }

    private static ToolResult configs(String... args) throws Exception {
        return KafkaTools.configs(workDir, cluster.bootstrapServers(), args);
    }
}
