package io.twinlog.tests;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

import java.io.File;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Admin client's topic lifecycle and config calls against one broker, with Kafka's errors for bad input. */
@Timeout(300)
class AdminTopicLifecycleTest {
    private static TestCluster cluster;
    private static Admin admin;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(1).brokerProperty("num.partitions", "2").build().start();
        admin = cluster.admin();
    }

    @AfterAll
    static void stop() {
        admin.close();
        cluster.close();
    }

    @Test
    void createDescribeListDelete() throws Exception {
        admin.createTopics(List.of(new NewTopic("lifecycle", 4, (short) 1))).all().get();
        assertTrue(admin.listTopics().names().get().contains("lifecycle"));
        TopicDescription d = admin.describeTopics(List.of("lifecycle")).allTopicNames().get().get("lifecycle");
        assertEquals(4, d.partitions().size());
        assertNotEquals(Uuid.ZERO_UUID, d.topicId());
        d.partitions().forEach(p -> {
            assertEquals(0, p.leader().id());
            assertEquals(List.of(0), p.replicas().stream().map(n -> n.id()).toList());
            assertEquals(List.of(0), p.isr().stream().map(n -> n.id()).toList());
        });
        File partitionDir = new File(cluster.logDir(0), "lifecycle-3");
        assertTrue(partitionDir.isDirectory(), "log directory created for partition 3");

        admin.deleteTopics(List.of("lifecycle")).all().get();
        assertFalse(admin.listTopics().names().get().contains("lifecycle"));
        Waits.waitUntil("log dir of the deleted topic to disappear", () -> !partitionDir.exists());
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> admin.describeTopics(List.of("lifecycle")).allTopicNames().get());
        assertInstanceOf(UnknownTopicOrPartitionException.class, e.getCause());
    }

    @Test
    void recreatedTopicGetsANewIdAndAnEmptyLog() throws Exception {
        admin.createTopics(List.of(new NewTopic("again", 1, (short) 1))).all().get();
        Uuid first = admin.describeTopics(List.of("again")).allTopicNames().get().get("again").topicId();
        ProduceConsumeTestSupport.produce(cluster, "again", 5);
        admin.deleteTopics(List.of("again")).all().get();
        admin.createTopics(List.of(new NewTopic("again", 1, (short) 1))).all().get();
        Uuid second = admin.describeTopics(List.of("again")).allTopicNames().get().get("again").topicId();
        assertNotEquals(first, second);
        assertEquals(0L, ProduceConsumeTestSupport.endOffset(cluster, "again", 0));
    }

    @Test
    void defaultsApplyWhenPartitionsAndReplicationAreUnset() throws Exception {
        admin.createTopics(List.of(new NewTopic("defaults", Optional.empty(), Optional.empty())))
                .all().get();
        assertEquals(2, admin.describeTopics(List.of("defaults")).allTopicNames().get().get("defaults")
                .partitions().size());
    }

    @Test
    void validateOnlyCreatesNothing() throws Exception {
        admin.createTopics(List.of(new NewTopic("dry-run", 3, (short) 1)),
                new CreateTopicsOptions().validateOnly(true)).all().get();
        assertFalse(admin.listTopics().names().get().contains("dry-run"));
    }

    @Test
    void createErrorsAreKafkasErrors() throws Exception {
        admin.createTopics(List.of(new NewTopic("exists", 1, (short) 1))).all().get();
        assertCause(TopicExistsException.class, () -> admin.createTopics(
                List.of(new NewTopic("exists", 1, (short) 1))).all().get());
        assertCause(InvalidTopicException.class, () -> admin.createTopics(
                List.of(new NewTopic("bad name!", 1, (short) 1))).all().get());
        assertCause(InvalidReplicationFactorException.class, () -> admin.createTopics(
                List.of(new NewTopic("rf-too-big", 1, (short) 3))).all().get());
        assertCause(InvalidPartitionsException.class, () -> admin.createTopics(
                List.of(new NewTopic("zero-partitions", 0, (short) 1))).all().get());
        Throwable bad = assertCause(InvalidConfigurationException.class, () -> admin.createTopics(
                List.of(new NewTopic("bad-config", 1, (short) 1).configs(Map.of("retention.ms", "soon")))).all().get());
        assertTrue(bad.getMessage().contains("retention.ms"), bad.getMessage());
        assertCause(InvalidConfigurationException.class, () -> admin.createTopics(
                List.of(new NewTopic("unknown-config", 1, (short) 1).configs(Map.of("no.such.config", "1")))).all().get());
        Set<String> names = admin.listTopics().names().get();
        assertFalse(names.contains("bad-config") || names.contains("unknown-config") || names.contains("rf-too-big"));
    }

    @Test
    void createPartitionsGrowsTheTopic() throws Exception {
        admin.createTopics(List.of(new NewTopic("grow", 1, (short) 1))).all().get();
        admin.createPartitions(Map.of("grow", NewPartitions.increaseTo(3))).all().get();
        assertEquals(3, admin.describeTopics(List.of("grow")).allTopicNames().get().get("grow").partitions().size());
        ProduceConsumeTestSupport.produceTo(cluster, "grow", 2, 3);
        assertEquals(3L, ProduceConsumeTestSupport.endOffset(cluster, "grow", 2));
        assertCause(InvalidPartitionsException.class, () ->
                admin.createPartitions(Map.of("grow", NewPartitions.increaseTo(2))).all().get());
        assertCause(UnknownTopicOrPartitionException.class, () ->
                admin.createPartitions(Map.of("no-such-topic", NewPartitions.increaseTo(2))).all().get());
    }

    @Test
    void describeAndAlterTopicConfigs() throws Exception {
        admin.createTopics(List.of(new NewTopic("configured", 1, (short) 1)
                .configs(Map.of("retention.ms", "3600000", "cleanup.policy", "compact")))).all().get();
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, "configured");
        Config config = admin.describeConfigs(List.of(res)).all().get().get(res);
        assertEquals("3600000", config.get("retention.ms").value());
        assertEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, config.get("retention.ms").source());
        assertEquals("compact", config.get("cleanup.policy").value());
        assertEquals(ConfigEntry.ConfigSource.DEFAULT_CONFIG, config.get("min.insync.replicas").source());
        assertEquals("1", config.get("min.insync.replicas").value());

        admin.incrementalAlterConfigs(Map.of(res, List.of(
                new AlterConfigOp(new ConfigEntry("retention.bytes", "1048576"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("retention.ms", null), AlterConfigOp.OpType.DELETE),
                new AlterConfigOp(new ConfigEntry("cleanup.policy", "delete"), AlterConfigOp.OpType.APPEND),
                new AlterConfigOp(new ConfigEntry("unclean.leader.election.enable", "true"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("max.message.bytes", "2000000"), AlterConfigOp.OpType.SET)))).all().get();
        Config after = admin.describeConfigs(List.of(res)).all().get().get(res);
        assertEquals("1048576", after.get("retention.bytes").value());
        assertEquals("604800000", after.get("retention.ms").value(), "back to the default");
        assertEquals(ConfigEntry.ConfigSource.DEFAULT_CONFIG, after.get("retention.ms").source());
        assertEquals("compact,delete", after.get("cleanup.policy").value());
        assertEquals("true", after.get("unclean.leader.election.enable").value());
        Waits.waitUntil("the log to use the new max.message.bytes", () ->
                cluster.broker(0).logStore().log(new TopicPartition("configured", 0))
                        .map(l -> l.config().maxMessageSize() == 2_000_000).orElse(false));

        Throwable invalid = assertCause(InvalidConfigurationException.class, () -> admin.incrementalAlterConfigs(
                Map.of(res, List.of(new AlterConfigOp(new ConfigEntry("min.insync.replicas", "0"),
                        AlterConfigOp.OpType.SET)))).all().get());
        assertTrue(invalid.getMessage().contains("min.insync.replicas"), invalid.getMessage());
        assertCause(InvalidConfigurationException.class, () -> admin.incrementalAlterConfigs(
                Map.of(res, List.of(new AlterConfigOp(new ConfigEntry("compression.type", "brotli"),
                        AlterConfigOp.OpType.SET)))).all().get());
        assertEquals("1", admin.describeConfigs(List.of(res)).all().get().get(res).get("min.insync.replicas").value(),
                "a rejected change leaves the configs as they were");
        assertCause(UnknownTopicOrPartitionException.class, () -> admin.describeConfigs(
                List.of(new ConfigResource(ConfigResource.Type.TOPIC, "missing"))).all().get());
    }

    @Test
    void describeClusterAndBrokerConfigs() throws Exception {
        DescribeClusterResult d = admin.describeCluster();
        Collection<Node> nodes = d.nodes().get();
        assertEquals(1, nodes.size());
        assertEquals(cluster.broker(0).metadata().image().clusterId(), d.clusterId().get());
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "0");
        Config c = admin.describeConfigs(List.of(broker)).all().get().get(broker);
        assertEquals("2", c.get("num.partitions").value());
    }

    static Throwable assertCause(Class<? extends Throwable> type, Executable call) {
        ExecutionException e = assertThrows(ExecutionException.class, call);
        assertInstanceOf(type, e.getCause(), "cause: " + e.getCause());
        return e.getCause();
    }
}
