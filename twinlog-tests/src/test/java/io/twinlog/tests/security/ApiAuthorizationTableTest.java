package io.twinlog.tests.security;

import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.common.message.DeleteShareGroupStateRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.InitializeShareGroupStateRequestData;
import org.apache.kafka.common.message.ReadShareGroupStateRequestData;
import org.apache.kafka.common.message.ReadShareGroupStateSummaryRequestData;
import org.apache.kafka.common.message.ShareGroupHeartbeatRequestData;
import org.apache.kafka.common.message.WriteShareGroupStateRequestData;
import org.apache.kafka.common.requests.DeleteShareGroupStateRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.InitializeShareGroupStateRequest;
import org.apache.kafka.common.requests.ReadShareGroupStateRequest;
import org.apache.kafka.common.requests.ReadShareGroupStateSummaryRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.WriteShareGroupStateRequest;
import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.ListConfigResourcesOptions;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.BrokerIdNotRegisteredException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AlterPartitionRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.Resource;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13, point 3: every Kafka API Twinlog serves is authorized as Kafka 4.4 authorizes it. The table below lists,
 * per API, the operation and resource checked. Each row has its own two principals: the allowed one holds the row's
 * prerequisites and the checked ACL, the denied one only the prerequisites; the row's action (a real client call, or
 * a hand-built request where no client sends that API) must succeed for the first and fail for the second with
 * Kafka's error for that resource. Rows are independent (a topic and a group each), so one failing row names itself.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ApiAuthorizationTableTest {
    private static final int BROKER = 0;

    /** One literal ACL: ALLOW {@code operation} on the resource. */
    record Grant(AclOperation operation, ResourceType type, String name) {
        static Grant topic(AclOperation operation, String name) {
            return new Grant(operation, ResourceType.TOPIC, name);
        }

        static Grant group(AclOperation operation, String name) {
            return new Grant(operation, ResourceType.GROUP, name);
        }

        static Grant cluster(AclOperation operation) {
            return new Grant(operation, ResourceType.CLUSTER, Resource.CLUSTER_NAME);
        }

        @Override
        public String toString() {
            return operation + " " + type + (type == ResourceType.CLUSTER ? "" : " " + name);
        }
    }

    /** What a row does, as the given user. */
    interface Action {
        void run(String user) throws Exception;
    }

    /** Thrown by an action whose denial is that something is left out, not an error. */
    static final class NotVisible extends RuntimeException {
        NotVisible(String what) {
            super(what);
        }
    }

    record Row(String api, List<Grant> prerequisites, Grant checked, Class<? extends Throwable> denial,
               Action action) {
    }

    private static TestCluster cluster;
    private static final PlainUsers USERS = new PlainUsers(() -> cluster.bootstrapServers());

    @BeforeAll
    static void start() throws Exception {
        List<String> users = new ArrayList<>();
        for (int i = 0; i < 80; i++) {
            users.add("a" + i);
            users.add("d" + i);
        }
        cluster = PlainUsers.authorizedCluster(users).brokers(1)
                .brokerProperty("share.coordinator.state.topic.replication.factor", "1")
                .brokerProperty("share.coordinator.state.topic.min.isr", "1")
                .brokerProperty("share.coordinator.state.topic.num.partitions", "3").build().start();
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static List<Row> table() {
        List<Row> rows = new ArrayList<>();
        // Metadata and the data path
        rows.add(new Row("Metadata", List.of(), Grant.topic(AclOperation.DESCRIBE, "t0"),
                TopicAuthorizationException.class, user -> {
                    try (KafkaConsumer<byte[], byte[]> c = USERS.consumer(user, Map.of())) {
                        c.partitionsFor("t0");
                    }
                }));
        rows.add(new Row("Metadata (all topics)", List.of(), Grant.topic(AclOperation.DESCRIBE, "t1"),
                NotVisible.class, user -> {
                    try (Admin admin = admin(user)) {
                        if (!admin.listTopics().names().get().contains("t1")) {
                            throw new NotVisible("t1 not listed");
                        }
                    }
                }));
        rows.add(new Row("Produce", List.of(Grant.topic(AclOperation.DESCRIBE, "t2")),
                Grant.topic(AclOperation.WRITE, "t2"), TopicAuthorizationException.class,
                user -> produce(user, "t2", false)));
        rows.add(new Row("InitProducerId (idempotent producer)", List.of(Grant.topic(AclOperation.DESCRIBE, "t3")),
                Grant.topic(AclOperation.WRITE, "t3"), ClusterAuthorizationException.class,
                user -> produce(user, "t3", true)));
        rows.add(new Row("Fetch", List.of(Grant.topic(AclOperation.DESCRIBE, "t4")),
                Grant.topic(AclOperation.READ, "t4"), TopicAuthorizationException.class, user -> {
                    try (KafkaConsumer<byte[], byte[]> c = USERS.consumer(user, Map.of())) {
                        TopicPartition tp = new TopicPartition("t4", 0);
                        c.assign(List.of(tp));
                        c.seek(tp, 0);
                        for (int i = 0; i < 5; i++) {
                            c.poll(Duration.ofMillis(200));
                        }
                    }
                }));
        rows.add(new Row("ListOffsets", List.of(), Grant.topic(AclOperation.DESCRIBE, "t5"),
                TopicAuthorizationException.class, user -> {
                    try (KafkaConsumer<byte[], byte[]> c = USERS.consumer(user, Map.of())) {
                        c.endOffsets(List.of(new TopicPartition("t5", 0)));
                    }
                }));
        rows.add(new Row("OffsetsForLeaderEpoch (consumer)", List.of(), Grant.topic(AclOperation.DESCRIBE, "t6"),
                TopicAuthorizationException.class, user -> {
                    OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection topics =
                            new OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection();
                    OffsetForLeaderEpochRequestData.OffsetForLeaderTopic topic =
                            new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic("t6");
                    topic.partitions().add(new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition()
                            .setPartition(0).setLeaderEpoch(0).setCurrentLeaderEpoch(-1));
                    topics.add(topic);
                    raw(user, OffsetsForLeaderEpochRequest.Builder.forConsumer(topics).build());
                }));
        rows.add(new Row("DescribeProducers", List.of(Grant.topic(AclOperation.DESCRIBE, "t8")),
                Grant.topic(AclOperation.READ, "t8"), TopicAuthorizationException.class,
                user -> withAdmin(user, a -> a.describeProducers(List.of(new TopicPartition("t8", 0))).all())));
        rows.add(new Row("DescribeTopicPartitions", List.of(), Grant.topic(AclOperation.DESCRIBE, "t7"),
                TopicAuthorizationException.class,
                user -> withAdmin(user, a -> a.describeTopics(List.of("t7")).allTopicNames())));
        // topic administration
        rows.add(new Row("CreateTopics (topic)", List.of(), Grant.topic(AclOperation.CREATE, "new8"),
                TopicAuthorizationException.class,
                user -> withAdmin(user, a -> a.createTopics(List.of(new NewTopic("new8", 1, (short) 1))).all())));
        rows.add(new Row("CreateTopics (cluster)", List.of(), Grant.cluster(AclOperation.CREATE),
                TopicAuthorizationException.class,
                user -> withAdmin(user, a -> a.createTopics(List.of(new NewTopic("new9-" + user, 1, (short) 1)))
                        .all())));
        rows.add(new Row("DeleteTopics", List.of(Grant.topic(AclOperation.DESCRIBE, "t10")),
                Grant.topic(AclOperation.DELETE, "t10"), TopicAuthorizationException.class,
                user -> withAdmin(user, a -> a.deleteTopics(List.of("t10")).all())));
        rows.add(new Row("CreatePartitions", List.of(Grant.topic(AclOperation.DESCRIBE, "t11")),
                Grant.topic(AclOperation.ALTER, "t11"), TopicAuthorizationException.class,
                user -> withAdmin(user, a -> a.createPartitions(Map.of("t11", NewPartitions.increaseTo(2))).all())));
        rows.add(new Row("DeleteRecords", List.of(Grant.topic(AclOperation.DESCRIBE, "t12")),
                Grant.topic(AclOperation.DELETE, "t12"), TopicAuthorizationException.class,
                user -> withAdmin(user, a -> a.deleteRecords(Map.of(new TopicPartition("t12", 0),
                        RecordsToDelete.beforeOffset(0))).all())));
        rows.add(new Row("DescribeConfigs (topic)", List.of(), Grant.topic(AclOperation.DESCRIBE_CONFIGS, "t13"),
                TopicAuthorizationException.class, user -> withAdmin(user, a -> a.describeConfigs(List.of(
                        new ConfigResource(ConfigResource.Type.TOPIC, "t13"))).all())));
        rows.add(new Row("DescribeConfigs (broker)", List.of(), Grant.cluster(AclOperation.DESCRIBE_CONFIGS),
                ClusterAuthorizationException.class, user -> withAdmin(user, a -> a.describeConfigs(List.of(
                        new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(BROKER)))).all())));
        rows.add(new Row("IncrementalAlterConfigs", List.of(), Grant.topic(AclOperation.ALTER_CONFIGS, "t15"),
                TopicAuthorizationException.class, user -> withAdmin(user, a -> a.incrementalAlterConfigs(Map.of(
                        new ConfigResource(ConfigResource.Type.TOPIC, "t15"), List.of(new AlterConfigOp(
                                new ConfigEntry("retention.ms", "3600000"), AlterConfigOp.OpType.SET)))).all())));
        rows.add(new Row("AlterConfigs", List.of(), Grant.topic(AclOperation.ALTER_CONFIGS, "t16"),
                TopicAuthorizationException.class, user -> {
                    raw(user, new AlterConfigsRequest.Builder(Map.of(new ConfigResource(ConfigResource.Type.TOPIC,
                            "t16"), new AlterConfigsRequest.Config(List.of(new AlterConfigsRequest.ConfigEntry(
                            "retention.ms", "3600000")))), false).build());
                }));
        // group configs (KIP-848/932): DESCRIBE_CONFIGS / ALTER_CONFIGS on the group, as Kafka's ConfigHelper and
        // ConfigAdminManager check them; listing the resources needs DESCRIBE_CONFIGS on the cluster
        rows.add(new Row("DescribeConfigs (group)", List.of(), Grant.group(AclOperation.DESCRIBE_CONFIGS, "gc1"),
                GroupAuthorizationException.class, user -> withAdmin(user, a -> a.describeConfigs(List.of(
                        new ConfigResource(ConfigResource.Type.GROUP, "gc1"))).all())));
        rows.add(new Row("IncrementalAlterConfigs (group)", List.of(), Grant.group(AclOperation.ALTER_CONFIGS,
                "gc2"), GroupAuthorizationException.class, user -> withAdmin(user, a -> a.incrementalAlterConfigs(
                        Map.of(new ConfigResource(ConfigResource.Type.GROUP, "gc2"), List.of(new AlterConfigOp(
                                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                        .all())));
        rows.add(new Row("AlterConfigs (group)", List.of(), Grant.group(AclOperation.ALTER_CONFIGS, "gc3"),
                GroupAuthorizationException.class, user -> raw(user, new AlterConfigsRequest.Builder(Map.of(
                        new ConfigResource(ConfigResource.Type.GROUP, "gc3"), new AlterConfigsRequest.Config(List.of(
                                new AlterConfigsRequest.ConfigEntry("share.auto.offset.reset", "earliest")))), false)
                        .build())));
        rows.add(new Row("ListConfigResources", List.of(), Grant.cluster(AclOperation.DESCRIBE_CONFIGS),
                ClusterAuthorizationException.class, user -> withAdmin(user, a -> a.listConfigResources(
                        Set.of(ConfigResource.Type.GROUP), new ListConfigResourcesOptions()).all())));
        // cluster administration
        rows.add(new Row("DescribeLogDirs", List.of(), Grant.cluster(AclOperation.DESCRIBE),
                ClusterAuthorizationException.class,
                user -> withAdmin(user, a -> a.describeLogDirs(List.of(BROKER)).allDescriptions())));
        rows.add(new Row("ElectLeaders", List.of(), Grant.cluster(AclOperation.ALTER),
                ClusterAuthorizationException.class, user -> withAdmin(user, a -> a.electLeaders(
                        ElectionType.PREFERRED, Set.of(new TopicPartition("t18", 0))).partitions())));
        rows.add(new Row("AlterPartitionReassignments", List.of(), Grant.cluster(AclOperation.ALTER),
                ClusterAuthorizationException.class, user -> withAdmin(user, a -> a.alterPartitionReassignments(
                        Map.of(new TopicPartition("t19", 0), Optional.of(new NewPartitionReassignment(
                                List.of(BROKER))))).all())));
        rows.add(new Row("ListPartitionReassignments", List.of(), Grant.cluster(AclOperation.DESCRIBE),
                ClusterAuthorizationException.class,
                user -> withAdmin(user, a -> a.listPartitionReassignments().reassignments())));
        rows.add(new Row("DescribeCluster (authorized operations)", List.of(), Grant.cluster(AclOperation.DESCRIBE),
                NotVisible.class, user -> {
                    try (Admin admin = admin(user)) {
                        Set<AclOperation> ops = admin.describeCluster(new DescribeClusterOptions()
                                .includeAuthorizedOperations(true)).authorizedOperations().get();
                        if (ops == null || !ops.contains(AclOperation.DESCRIBE)) {
                            throw new NotVisible("cluster operations " + ops);
                        }
                    }
                }));
        rows.add(new Row("AlterPartition (inter-broker)", List.of(), Grant.cluster(AclOperation.CLUSTER_ACTION),
                ClusterAuthorizationException.class, user -> {
                    AlterPartitionRequestData data = new AlterPartitionRequestData().setBrokerId(BROKER)
                            .setBrokerEpoch(-1);
                    raw(user, new AlterPartitionRequest.Builder(data).build());
                }));
        // Kafka's rule: ALTER on the cluster (kafka-transactions.sh abort) or CLUSTER_ACTION (a coordinator)
        rows.add(new Row("WriteTxnMarkers (inter-broker)", List.of(), Grant.cluster(AclOperation.CLUSTER_ACTION),
                ClusterAuthorizationException.class, ApiAuthorizationTableTest::writeTxnMarkers));
        // KIP-890: a partition leader verifying a producer's write with its coordinator
        rows.add(new Row("AddPartitionsToTxn v4-5 (inter-broker)", List.of(), Grant.cluster(AclOperation.CLUSTER_ACTION),
                ClusterAuthorizationException.class, ApiAuthorizationTableTest::verifyPartitions));
        rows.add(new Row("WriteTxnMarkers (kafka-transactions.sh abort)", List.of(), Grant.cluster(AclOperation.ALTER),
                ClusterAuthorizationException.class, ApiAuthorizationTableTest::writeTxnMarkers));
        // transactional ids: WRITE to initialize one (FindCoordinator needs DESCRIBE, which WRITE implies),
        // DESCRIBE to see it
        rows.add(new Row("FindCoordinator + InitProducerId (transactional)", List.of(),
                new Grant(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, "x-init"),
                TransactionalIdAuthorizationException.class, user -> {
                    Map<String, Object> cfg = USERS.client(user);
                    cfg.put("transactional.id", "x-init");
                    cfg.put("max.block.ms", 30_000);
                    try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(cfg, new ByteArraySerializer(),
                            new ByteArraySerializer())) {
                        p.initTransactions();
                    }
                }));
        // inside a transaction: WRITE on each topic added (AddPartitionsToTxn), READ on the group whose offsets
        // are sent (AddOffsetsToTxn, TxnOffsetCommit)
        rows.add(new Row("AddPartitionsToTxn (topic)", List.of(new Grant(AclOperation.WRITE,
                ResourceType.TRANSACTIONAL_ID, "x-add")), Grant.topic(AclOperation.WRITE, "t41"),
                TopicAuthorizationException.class, user -> inTransaction(user, "x-add", p ->
                        p.send(new ProducerRecord<>("t41", 0, null, new byte[] {1})).get(30, TimeUnit.SECONDS))));
        rows.add(new Row("AddOffsetsToTxn / TxnOffsetCommit (group)", List.of(new Grant(AclOperation.WRITE,
                ResourceType.TRANSACTIONAL_ID, "x-offsets"), Grant.topic(AclOperation.READ, "t42")),
                Grant.group(AclOperation.READ, "g42"), GroupAuthorizationException.class,
                user -> inTransaction(user, "x-offsets", p -> p.sendOffsetsToTransaction(Map.of(
                        new TopicPartition("t42", 0), new OffsetAndMetadata(0)), new ConsumerGroupMetadata("g42")))));
        // an id nobody initialized: past the authorization, Kafka's answer for an unknown id
        rows.add(new Row("DescribeTransactions", List.of(),
                new Grant(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, "x-describe"),
                TransactionalIdAuthorizationException.class, user -> {
                    try (Admin admin = admin(user)) {
                        admin.describeTransactions(List.of("x-describe")).all().get(30, TimeUnit.SECONDS);
                    } catch (ExecutionException e) {
                        if (!(e.getCause() instanceof TransactionalIdNotFoundException)) {
                            throw e;
                        }
                    }
                }));
        // x-listed is initialized by the super user before the rows run
        rows.add(new Row("ListTransactions", List.of(),
                new Grant(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, "x-listed"), NotVisible.class,
                user -> {
                    try (Admin admin = admin(user)) {
                        if (admin.listTransactions().all().get(30, TimeUnit.SECONDS).stream()
                                .noneMatch(t -> t.transactionalId().equals("x-listed"))) {
                            throw new NotVisible("x-listed not listed");
                        }
                    }
                }));
        rows.add(new Row("DescribeAcls", List.of(), Grant.cluster(AclOperation.DESCRIBE),
                ClusterAuthorizationException.class,
                user -> withAdmin(user, a -> a.describeAcls(AclBindingFilter.ANY).values())));
        rows.add(new Row("CreateAcls", List.of(), Grant.cluster(AclOperation.ALTER),
                ClusterAuthorizationException.class, user -> withAdmin(user, a -> a.createAcls(List.of(
                        new AclBinding(new ResourcePattern(ResourceType.TOPIC, "by-" + user, PatternType.LITERAL),
                                new AccessControlEntry("User:nobody", "*", AclOperation.READ,
                                        AclPermissionType.ALLOW)))).all())));
        rows.add(new Row("DeleteAcls", List.of(), Grant.cluster(AclOperation.ALTER),
                ClusterAuthorizationException.class, user -> withAdmin(user, a -> a.deleteAcls(List.of(
                        new AclBinding(new ResourcePattern(ResourceType.TOPIC, "none", PatternType.LITERAL),
                                new AccessControlEntry("User:nobody", "*", AclOperation.READ,
                                        AclPermissionType.ALLOW)).toFilter())).all())));
        rows.add(new Row("DescribeUserScramCredentials", List.of(), Grant.cluster(AclOperation.DESCRIBE),
                ClusterAuthorizationException.class,
                user -> withAdmin(user, a -> a.describeUserScramCredentials().all())));
        rows.add(new Row("AlterUserScramCredentials", List.of(), Grant.cluster(AclOperation.ALTER),
                ClusterAuthorizationException.class, user -> withAdmin(user, a -> a.alterUserScramCredentials(
                        List.of(new UserScramCredentialUpsertion("someone-" + user, new ScramCredentialInfo(
                                ScramMechanism.SCRAM_SHA_256, 4096), "pw"))).all())));
        // no broker 999: past the authorization, Kafka's answer for an id it does not know
        rows.add(new Row("UnregisterBroker", List.of(), Grant.cluster(AclOperation.ALTER),
                ClusterAuthorizationException.class, user -> {
                    try (Admin admin = admin(user)) {
                        admin.unregisterBroker(999).all().get(30, TimeUnit.SECONDS);
                    } catch (ExecutionException e) {
                        if (!(e.getCause() instanceof BrokerIdNotRegisteredException)) {
                            throw e;
                        }
                    }
                }));
        rows.add(new Row("DescribeClientQuotas", List.of(), Grant.cluster(AclOperation.DESCRIBE_CONFIGS),
                ClusterAuthorizationException.class,
                user -> withAdmin(user, a -> a.describeClientQuotas(ClientQuotaFilter.all()).entities())));
        rows.add(new Row("AlterClientQuotas", List.of(), Grant.cluster(AclOperation.ALTER_CONFIGS),
                ClusterAuthorizationException.class, user -> withAdmin(user, a -> a.alterClientQuotas(List.of(
                        new ClientQuotaAlteration(new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID,
                                "quota-of-" + user)), List.of(new ClientQuotaAlteration.Op("producer_byte_rate",
                                1048576.0))))).all())));
        // consumer groups (g<i> exist with a committed offset on t<i>, made by the super user)
        rows.add(new Row("FindCoordinator + OffsetFetch", List.of(), Grant.group(AclOperation.DESCRIBE, "g30"),
                GroupAuthorizationException.class, user -> withAdmin(user,
                        a -> a.listConsumerGroupOffsets("g30").partitionsToOffsetAndMetadata())));
        rows.add(new Row("OffsetCommit (group)", List.of(Grant.topic(AclOperation.READ, "t31")),
                Grant.group(AclOperation.READ, "g31"), GroupAuthorizationException.class,
                user -> withAdmin(user, a -> a.alterConsumerGroupOffsets("g31", Map.of(
                        new TopicPartition("t31", 0), new OffsetAndMetadata(0))).all())));
        rows.add(new Row("OffsetCommit (topic)", List.of(Grant.group(AclOperation.READ, "g32")),
                Grant.topic(AclOperation.READ, "t32"), TopicAuthorizationException.class,
                user -> withAdmin(user, a -> a.alterConsumerGroupOffsets("g32", Map.of(
                        new TopicPartition("t32", 0), new OffsetAndMetadata(0))).all())));
        rows.add(new Row("ConsumerGroupDescribe / DescribeGroups", List.of(),
                Grant.group(AclOperation.DESCRIBE, "g33"), GroupAuthorizationException.class,
                user -> withAdmin(user, a -> a.describeConsumerGroups(List.of("g33")).all())));
        rows.add(new Row("ListGroups", List.of(), Grant.group(AclOperation.DESCRIBE, "g34"), NotVisible.class,
                user -> {
                    try (Admin admin = admin(user)) {
                        if (admin.listGroups().all().get().stream().noneMatch(g -> g.groupId().equals("g34"))) {
                            throw new NotVisible("g34 not listed");
                        }
                    }
                }));
        rows.add(new Row("DeleteGroups", List.of(Grant.group(AclOperation.DESCRIBE, "g35")),
                Grant.group(AclOperation.DELETE, "g35"), GroupAuthorizationException.class,
                user -> withAdmin(user, a -> a.deleteConsumerGroups(List.of("g35")).all())));
        rows.add(new Row("OffsetDelete (group)", List.of(Grant.topic(AclOperation.READ, "t36")),
                Grant.group(AclOperation.DELETE, "g36"), GroupAuthorizationException.class,
                user -> withAdmin(user, a -> a.deleteConsumerGroupOffsets("g36",
                        Set.of(new TopicPartition("t36", 0))).all())));
        rows.add(new Row("OffsetDelete (topic)", List.of(Grant.group(AclOperation.DELETE, "g37")),
                Grant.topic(AclOperation.READ, "t37"), TopicAuthorizationException.class,
                user -> withAdmin(user, a -> a.deleteConsumerGroupOffsets("g37",
                        Set.of(new TopicPartition("t37", 0))).all())));
        rows.add(new Row("JoinGroup / SyncGroup (classic)", List.of(Grant.topic(AclOperation.READ, "t38")),
                Grant.group(AclOperation.READ, "j38"), GroupAuthorizationException.class,
                user -> joinGroup(user, "t38", "j38", "classic")));
        rows.add(new Row("ConsumerGroupHeartbeat (group)", List.of(Grant.topic(AclOperation.READ, "t39")),
                Grant.group(AclOperation.READ, "j39"), GroupAuthorizationException.class,
                user -> joinGroup(user, "t39", "j39", "consumer")));
        // by hand: a consumer would also ask Metadata for the topic, which needs the same ACL
        rows.add(new Row("ConsumerGroupHeartbeat (topic)", List.of(Grant.group(AclOperation.READ, "j40")),
                Grant.topic(AclOperation.DESCRIBE, "t40"), TopicAuthorizationException.class,
                user -> raw(user, new ConsumerGroupHeartbeatRequest.Builder(new ConsumerGroupHeartbeatRequestData()
                        .setGroupId("j40").setMemberId(Uuid.randomUuid().toString()).setMemberEpoch(0)
                        .setRebalanceTimeoutMs(30_000).setSubscribedTopicNames(List.of("t40"))
                        .setTopicPartitions(List.of())).build())));
        shareGroupRows(rows);
        return rows;
    }

    /**
     * Share groups (KIP-932), Kafka 4.4's checks: READ on the group to join or change offsets, DESCRIBE to see it,
     * DELETE to delete offsets, DESCRIBE (heartbeat) or READ (offsets) on each topic named, CLUSTER_ACTION for the
     * share-state RPCs and FindCoordinator of a share-partition key, which only brokers send. Share groups sg2-sg8
     * exist with a start offset on s2-s8 (made by the super user).
     */
    private static void shareGroupRows(List<Row> rows) {
        rows.add(new Row("ShareGroupHeartbeat (group)", List.of(Grant.topic(AclOperation.DESCRIBE, "s0")),
                Grant.group(AclOperation.READ, "sg0"), GroupAuthorizationException.class,
                user -> raw(user, shareHeartbeat("sg0", "s0"))));
        rows.add(new Row("ShareGroupHeartbeat (topic)", List.of(Grant.group(AclOperation.READ, "sg1")),
                Grant.topic(AclOperation.DESCRIBE, "s1"), TopicAuthorizationException.class,
                user -> raw(user, shareHeartbeat("sg1", "s1"))));
        rows.add(new Row("ShareGroupDescribe", List.of(), Grant.group(AclOperation.DESCRIBE, "sg2"),
                GroupAuthorizationException.class,
                user -> withAdmin(user, a -> a.describeShareGroups(List.of("sg2")).all())));
        rows.add(new Row("DescribeShareGroupOffsets", List.of(), Grant.group(AclOperation.DESCRIBE, "sg3"),
                GroupAuthorizationException.class, user -> withAdmin(user, a -> a.listShareGroupOffsets(
                        Map.of("sg3", new ListShareGroupOffsetsSpec())).all())));
        rows.add(new Row("AlterShareGroupOffsets (group)", List.of(Grant.topic(AclOperation.READ, "s4")),
                Grant.group(AclOperation.READ, "sg4"), GroupAuthorizationException.class,
                user -> withAdmin(user, a -> a.alterShareGroupOffsets("sg4",
                        Map.of(new TopicPartition("s4", 0), 0L)).all())));
        rows.add(new Row("AlterShareGroupOffsets (topic)", List.of(Grant.group(AclOperation.READ, "sg5")),
                Grant.topic(AclOperation.READ, "s5"), TopicAuthorizationException.class,
                user -> withAdmin(user, a -> a.alterShareGroupOffsets("sg5",
                        Map.of(new TopicPartition("s5", 0), 0L)).all())));
        rows.add(new Row("DeleteShareGroupOffsets (group)", List.of(Grant.topic(AclOperation.READ, "s6")),
                Grant.group(AclOperation.DELETE, "sg6"), GroupAuthorizationException.class,
                user -> withAdmin(user, a -> a.deleteShareGroupOffsets("sg6", Set.of("s6")).all())));
        rows.add(new Row("DeleteShareGroupOffsets (topic)", List.of(Grant.group(AclOperation.DELETE, "sg7")),
                Grant.topic(AclOperation.READ, "s7"), TopicAuthorizationException.class,
                user -> withAdmin(user, a -> a.deleteShareGroupOffsets("sg7", Set.of("s7")).all())));
        Uuid anyTopic = Uuid.randomUuid();
        rows.add(new Row("FindCoordinator (share-partition key)", List.of(), Grant.cluster(AclOperation.CLUSTER_ACTION),
                ClusterAuthorizationException.class, user -> raw(user, new FindCoordinatorRequest.Builder(
                        new FindCoordinatorRequestData().setKeyType(FindCoordinatorRequest.CoordinatorType.SHARE.id())
                                .setCoordinatorKeys(List.of("sg9:" + anyTopic + ":0"))).build((short) 6))));
        rows.add(new Row("InitializeShareGroupState (inter-broker)", List.of(),
                Grant.cluster(AclOperation.CLUSTER_ACTION), ClusterAuthorizationException.class,
                user -> raw(user, new InitializeShareGroupStateRequest.Builder(new InitializeShareGroupStateRequestData()
                        .setGroupId("sg9").setTopics(List.of(new InitializeShareGroupStateRequestData.InitializeStateData()
                                .setTopicId(anyTopic).setPartitions(List.of(new InitializeShareGroupStateRequestData
                                        .PartitionData().setPartition(0).setStartOffset(0)))))).build())));
        rows.add(new Row("ReadShareGroupState (inter-broker)", List.of(), Grant.cluster(AclOperation.CLUSTER_ACTION),
                ClusterAuthorizationException.class,
                user -> raw(user, new ReadShareGroupStateRequest.Builder(new ReadShareGroupStateRequestData()
                        .setGroupId("sg9").setTopics(List.of(new ReadShareGroupStateRequestData.ReadStateData()
                                .setTopicId(anyTopic).setPartitions(List.of(new ReadShareGroupStateRequestData
                                        .PartitionData().setPartition(0)))))).build())));
        rows.add(new Row("WriteShareGroupState (inter-broker)", List.of(), Grant.cluster(AclOperation.CLUSTER_ACTION),
                ClusterAuthorizationException.class,
                user -> raw(user, new WriteShareGroupStateRequest.Builder(new WriteShareGroupStateRequestData()
                        .setGroupId("sg9").setTopics(List.of(new WriteShareGroupStateRequestData.WriteStateData()
                                .setTopicId(anyTopic).setPartitions(List.of(new WriteShareGroupStateRequestData
                                        .PartitionData().setPartition(0).setStartOffset(0)))))).build())));
        rows.add(new Row("DeleteShareGroupState (inter-broker)", List.of(), Grant.cluster(AclOperation.CLUSTER_ACTION),
                ClusterAuthorizationException.class,
                user -> raw(user, new DeleteShareGroupStateRequest.Builder(new DeleteShareGroupStateRequestData()
                        .setGroupId("sg9").setTopics(List.of(new DeleteShareGroupStateRequestData.DeleteStateData()
                                .setTopicId(anyTopic).setPartitions(List.of(new DeleteShareGroupStateRequestData
                                        .PartitionData().setPartition(0)))))).build())));
        rows.add(new Row("ReadShareGroupStateSummary (inter-broker)", List.of(),
                Grant.cluster(AclOperation.CLUSTER_ACTION), ClusterAuthorizationException.class,
                user -> raw(user, new ReadShareGroupStateSummaryRequest.Builder(new ReadShareGroupStateSummaryRequestData()
                        .setGroupId("sg9").setTopics(List.of(new ReadShareGroupStateSummaryRequestData
                                .ReadStateSummaryData().setTopicId(anyTopic).setPartitions(List.of(
                                        new ReadShareGroupStateSummaryRequestData.PartitionData().setPartition(0))))))
                        .build())));
    }

    /** A new member's first heartbeat, subscribed to {@code topic}. */
    private static ShareGroupHeartbeatRequest shareHeartbeat(String group, String topic) {
        return new ShareGroupHeartbeatRequest.Builder(new ShareGroupHeartbeatRequestData().setGroupId(group)
                .setMemberId(Uuid.randomUuid().toString()).setMemberEpoch(0)
                .setSubscribedTopicNames(List.of(topic))).build();
    }

    @Test
    void everyApiChecksTheOperationAndResourceKafkaChecks() throws Exception {
        List<Row> rows = table();
        try (Admin admin = cluster.admin()) {
            List<NewTopic> topics = new ArrayList<>();
            for (int i = 0; i < rows.size(); i++) {
                topics.add(new NewTopic("t" + i, 1, (short) 1));
            }
            admin.createTopics(topics).all().get();
            List<NewTopic> shareTopics = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                shareTopics.add(new NewTopic("s" + i, 1, (short) 1));
            }
            admin.createTopics(shareTopics).all().get();
            for (int i = 2; i < 9; i++) {
                // an empty share group with a start offset, as an operator's reset leaves one
                admin.alterShareGroupOffsets("sg" + i, Map.of(new TopicPartition("s" + i, 0), 0L)).all().get();
            }
            for (int i = 30; i < 38; i++) {
                // a group with a committed offset, as an empty consumer group leaves it
                admin.alterConsumerGroupOffsets("g" + i, Map.of(new TopicPartition("t" + i, 0),
                        new OffsetAndMetadata(0))).all().get();
            }
            try (KafkaProducer<byte[], byte[]> listed = cluster.producer(Map.of("transactional.id", "x-listed"))) {
                listed.initTransactions();
            }
            List<AclBinding> acls = new ArrayList<>();
            for (int i = 0; i < rows.size(); i++) {
                for (Grant g : rows.get(i).prerequisites()) {
                    acls.add(allow("a" + i, g));
                    acls.add(allow("d" + i, g));
                }
                acls.add(allow("a" + i, rows.get(i).checked()));
            }
            admin.createAcls(acls).all().get();
            // DescribeAcls answers from the broker's authorizer: every ACL there is applied
            Waits.waitUntil("every ACL applied", () -> admin.describeAcls(AclBindingFilter.ANY).values().get().size()
                    == acls.size(), Duration.ofSeconds(30));
        }
        List<String> failures = new ArrayList<>();
        StringBuilder report = new StringBuilder(String.format("%-40s %-32s %-32s %s%n", "API", "checked",
                "prerequisites", "denied with"));
        for (int i = 0; i < rows.size(); i++) {
            Row row = rows.get(i);
            report.append(String.format("%-40s %-32s %-32s %s%n", row.api(), row.checked(),
                    row.prerequisites().stream().map(Grant::toString).collect(Collectors.joining(", ")),
                    row.denial().getSimpleName()));
            // denied first: a row whose action changes something (deletes, creates) does it once, when allowed
            Throwable denied = outcome(row, "d" + i);
            if (denied == null || !row.denial().isInstance(denied)) {
                failures.add(row.api() + ": without " + row.checked() + " expected " + row.denial().getSimpleName()
                        + ", got " + (denied == null ? "success" : denied));
            }
            Throwable allowed = outcome(row, "a" + i);
            if (allowed != null) {
                failures.add(row.api() + ": with " + row.checked() + " expected success, got " + allowed);
            }
        }
        System.out.println(report);
        assertTrue(failures.isEmpty(), String.join("\n", failures));
    }

    private static Throwable outcome(Row row, String user) {
        try {
            row.action().run(user);
            return null;
        } catch (Throwable t) {
            Throwable cause = t;
            while ((cause instanceof ExecutionException || (cause instanceof KafkaException
                    && !(cause instanceof ApiException))) && cause.getCause() != null) {
                cause = cause.getCause();
            }
            return cause;
        }
    }

    private static AclBinding allow(String user, Grant grant) {
        return new AclBinding(new ResourcePattern(grant.type(), grant.name(), PatternType.LITERAL),
                new AccessControlEntry("User:" + user, "*", grant.operation(), AclPermissionType.ALLOW));
    }

    private static Admin admin(String user) {
        return Admin.create(USERS.client(user));
    }

    /** Runs one admin call and waits for its future. */
    private static void withAdmin(String user, Function<Admin, KafkaFuture<?>> call)
            throws Exception {
        try (Admin admin = admin(user)) {
            call.apply(admin).get(30, TimeUnit.SECONDS);
        }
    }

    /** What a transactional producer does inside one transaction, then commits. */
    interface InTransaction {
        void run(KafkaProducer<byte[], byte[]> producer) throws Exception;
    }

    private static void inTransaction(String user, String transactionalId, InTransaction body) throws Exception {
        Map<String, Object> cfg = USERS.client(user);
        cfg.put("transactional.id", transactionalId);
        cfg.put("max.block.ms", 30_000);
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(cfg, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            p.initTransactions();
            p.beginTransaction();
            body.run(p);
            p.commitTransaction();
        }
    }

    private static void produce(String user, String topic, boolean idempotent) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = USERS.producer(user, idempotent)) {
            p.send(new ProducerRecord<>(topic, 0, null, new byte[] {1})).get(30, TimeUnit.SECONDS);
        }
    }

    /** Joins the group with the given protocol and polls until it is assigned the topic's partition. */
    private static void joinGroup(String user, String topic, String group, String protocol) {
        try (KafkaConsumer<byte[], byte[]> c = USERS.consumer(user, Map.of("group.id", group, "group.protocol",
                protocol))) {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (c.assignment().isEmpty()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no assignment within 30 s");
                }
                c.poll(Duration.ofMillis(200));
            }
        }
    }

    /**
     * Sends a hand-built request as the user (SASL/PLAIN) and throws Kafka's exception for an authorization error
     * in its answer; other errors mean the request got past authorization.
     */
    /** A marker to a partition that does not exist: answered UNKNOWN_TOPIC_OR_PARTITION once authorized. */
    private static void writeTxnMarkers(String user) throws IOException {
        WriteTxnMarkersRequestData data = new WriteTxnMarkersRequestData();
        data.markers().add(new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(1)
                .setProducerEpoch((short) 0).setTopics(List.of(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic()
                        .setName("none").setPartitionIndexes(List.of(0)))));
        raw(user, new WriteTxnMarkersRequest.Builder(data).build());
    }

    private static void verifyPartitions(String user) throws IOException {
        AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection topics =
                new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection();
        topics.add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName("none")
                .setPartitions(List.of(0)));
        AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection transactions =
                new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection();
        transactions.add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction().setTransactionalId("x-verify")
                .setProducerId(1).setProducerEpoch((short) 0).setVerifyOnly(true).setTopics(topics));
        raw(user, AddPartitionsToTxnRequest.Builder.forBroker(transactions).build());
    }

    private static void raw(String user, AbstractRequest request)
            throws IOException {
        try (RawKafkaConnection connection = RawKafkaConnection.to(cluster.bootstrapServers())) {
            connection.authenticatePlain(user, PlainUsers.password(user));
            AbstractResponse response = connection.send(request);
            for (Errors error : response.errorCounts().keySet()) {
                if (error == Errors.TOPIC_AUTHORIZATION_FAILED || error == Errors.GROUP_AUTHORIZATION_FAILED
                        || error == Errors.CLUSTER_AUTHORIZATION_FAILED) {
                    throw error.exception();
                }
            }
        }
    }
}
