package io.twinlog.tests.kafka.protocol;

import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AlterClientQuotasRequestData;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.DeleteAclsRequestData;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.DescribeTopicPartitionsRequestData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.UnregisterBrokerRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.CreateAclsRequest;
import org.apache.kafka.common.requests.DeleteAclsRequest;
import org.apache.kafka.common.requests.DescribeAclsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.twinlog.tests.kafka.protocol.SideBySideClusters.TOPIC;

/**
 * Representative requests of the data-plane and admin APIs, one per API, valid at every version: fields are set
 * only at the versions that carry them. They read or validate rather than change state where the API allows it
 * (validateOnly), so that every version meets the same cluster state.
 */
final class DataAndAdminRequests {
    private static final String RETENTION_MS = "retention.ms";

    private DataAndAdminRequests() {
    }

    static void register(Map<ApiKeys, RepresentativeRequest> requests) {
        requests.put(ApiKeys.API_VERSIONS, (target, version, connection) -> new ApiVersionsRequestData()
                .setClientSoftwareName("twinlog-version-matrix").setClientSoftwareVersion("1.0"));
        requests.put(ApiKeys.METADATA, (target, version, connection) -> metadata(version));
        requests.put(ApiKeys.PRODUCE, (target, version, connection) -> produce(target, version));
        requests.put(ApiKeys.FETCH, (target, version, connection) -> FetchRequest.Builder.forConsumer(version, 0, 0,
                        Map.of(new TopicPartition(TOPIC, 0), new FetchRequest.PartitionData(target.topicId(), 0, -1,
                                1 << 20, Optional.empty())))
                .build(version).data());
        requests.put(ApiKeys.LIST_OFFSETS, (target, version, connection) -> listOffsets(version));
        requests.put(ApiKeys.OFFSET_FOR_LEADER_EPOCH, (target, version, connection) -> offsetForLeaderEpoch());
        requests.put(ApiKeys.INIT_PRODUCER_ID, (target, version, connection) -> new InitProducerIdRequestData()
                .setTransactionalId(null).setTransactionTimeoutMs(60_000));
        requests.put(ApiKeys.CREATE_TOPICS, (target, version, connection) -> createTopics(version));
        requests.put(ApiKeys.DELETE_TOPICS, (target, version, connection) -> deleteMissingTopic(version));
        requests.put(ApiKeys.CREATE_PARTITIONS, (target, version, connection) -> new CreatePartitionsRequestData()
                .setTimeoutMs(10_000).setValidateOnly(true).setTopics(new CreatePartitionsRequestData
                        .CreatePartitionsTopicCollection(List.of(new CreatePartitionsRequestData.CreatePartitionsTopic()
                        .setName(TOPIC).setCount(1).setAssignments(null)).iterator())));
        requests.put(ApiKeys.DESCRIBE_CONFIGS, (target, version, connection) -> describeTopicConfigs(version));
        // offset 0 deletes nothing, so every version meets the same log
        requests.put(ApiKeys.DELETE_RECORDS, (target, version, connection) -> new DeleteRecordsRequestData()
                .setTimeoutMs(10_000).setTopics(List.of(new DeleteRecordsRequestData.DeleteRecordsTopic().setName(TOPIC)
                        .setPartitions(List.of(new DeleteRecordsRequestData.DeleteRecordsPartition()
                                .setPartitionIndex(0).setOffset(0))))));
        requests.put(ApiKeys.DESCRIBE_LOG_DIRS, (target, version, connection) -> new DescribeLogDirsRequestData()
                .setTopics(new DescribeLogDirsRequestData.DescribableLogDirTopicCollection(List.of(
                        new DescribeLogDirsRequestData.DescribableLogDirTopic().setTopic(TOPIC)
                                .setPartitions(List.of(0))).iterator())));
        requests.put(ApiKeys.INCREMENTAL_ALTER_CONFIGS, (target, version, connection) -> incrementalAlterConfigs());
        requests.put(ApiKeys.ALTER_CONFIGS, (target, version, connection) -> alterConfigs());
        requests.put(ApiKeys.DESCRIBE_CLUSTER, (target, version, connection) -> new DescribeClusterRequestData());
        requests.put(ApiKeys.DESCRIBE_TOPIC_PARTITIONS, (target, version, connection) ->
                new DescribeTopicPartitionsRequestData().setTopics(List.of(
                        new DescribeTopicPartitionsRequestData.TopicRequest().setName(TOPIC))));
        requests.put(ApiKeys.ELECT_LEADERS, (target, version, connection) -> new ElectLeadersRequestData()
                .setTimeoutMs(10_000).setTopicPartitions(new ElectLeadersRequestData.TopicPartitionsCollection(
                        List.of(new ElectLeadersRequestData.TopicPartitions().setTopic(TOPIC)
                                .setPartitions(List.of(0))).iterator())));
        requests.put(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, (target, version, connection) -> cancelReassignment());
        requests.put(ApiKeys.LIST_PARTITION_REASSIGNMENTS, (target, version, connection) ->
                new ListPartitionReassignmentsRequestData().setTimeoutMs(10_000).setTopics(null));
        requests.put(ApiKeys.ALTER_PARTITION, (target, version, connection) -> staleAlterPartition(target, version));
        // an id no broker has: a live one would be unregistered from the Kafka side's KRaft controller
        requests.put(ApiKeys.UNREGISTER_BROKER, (target, version, connection) -> new UnregisterBrokerRequestData()
                .setBrokerId(999));
        requests.put(ApiKeys.DESCRIBE_ACLS, (target, version, connection) ->
                new DescribeAclsRequest.Builder(AclBindingFilter.ANY).build(version).data());
        requests.put(ApiKeys.CREATE_ACLS, (target, version, connection) -> new CreateAclsRequestData().setCreations(
                List.of(CreateAclsRequest.aclCreation(new AclBinding(
                        new ResourcePattern(ResourceType.TOPIC, TOPIC, PatternType.LITERAL),
                        new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW))))));
        requests.put(ApiKeys.DELETE_ACLS, (target, version, connection) -> new DeleteAclsRequestData()
                .setFilters(List.of(DeleteAclsRequest.deleteAclsFilter(AclBindingFilter.ANY))));
        // validate-only, one entity Kafka accepts and one it refuses (a key it does not know): nothing is stored
        requests.put(ApiKeys.ALTER_CLIENT_QUOTAS, (target, version, connection) -> new AlterClientQuotasRequestData()
                .setValidateOnly(true).setEntries(List.of(clientQuota("parity", "producer_byte_rate", 1024),
                        clientQuota("parity-refused", "no_such_quota", 1))));
    }

    private static AlterClientQuotasRequestData.EntryData clientQuota(String clientId, String key, double value) {
        return new AlterClientQuotasRequestData.EntryData()
                .setEntity(List.of(new AlterClientQuotasRequestData.EntityData().setEntityType("client-id")
                        .setEntityName(clientId)))
                .setOps(List.of(new AlterClientQuotasRequestData.OpData().setKey(key).setValue(value)));
    }

    private static MetadataRequestData metadata(short version) {
        MetadataRequestData data = new MetadataRequestData().setTopics(List.of(
                new MetadataRequestData.MetadataRequestTopic().setName(TOPIC)));
        if (version >= 4) {
            data.setAllowAutoTopicCreation(false);
        }
        return data;
    }

    private static ProduceRequestData produce(SideBySideClusters.Target target, short version) {
        MemoryRecords records = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(System.currentTimeMillis(),
                "key".getBytes(StandardCharsets.UTF_8), ("produce v" + version).getBytes(StandardCharsets.UTF_8)));
        ProduceRequestData.TopicProduceData topic = new ProduceRequestData.TopicProduceData();
        if (version >= 13) {
            topic.setTopicId(target.topicId()); // v13 names topics by ID only
        } else {
            topic.setName(TOPIC);
        }
        topic.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records));
        ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(10_000);
        data.topicData().add(topic);
        return data;
    }

    private static ListOffsetsRequestData listOffsets(short version) {
        ListOffsetsRequestData.ListOffsetsTopic topic = new ListOffsetsRequestData.ListOffsetsTopic().setName(TOPIC);
        topic.partitions().add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0)
                .setTimestamp(ListOffsetsRequest.EARLIEST_TIMESTAMP));
        return ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
                .setTargetTimes(List.of(topic)).build(version).data();
    }

    private static OffsetForLeaderEpochRequestData offsetForLeaderEpoch() {
        OffsetForLeaderEpochRequestData.OffsetForLeaderTopic topic =
                new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic(TOPIC);
        topic.partitions().add(new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0)
                .setLeaderEpoch(0));
        OffsetForLeaderEpochRequestData data = new OffsetForLeaderEpochRequestData()
                .setReplicaId(OffsetsForLeaderEpochRequest.CONSUMER_REPLICA_ID);
        data.topics().add(topic);
        return data;
    }

    private static CreateTopicsRequestData createTopics(short version) {
        CreateTopicsRequestData data = new CreateTopicsRequestData().setTimeoutMs(10_000).setValidateOnly(true);
        data.topics().add(new CreateTopicsRequestData.CreatableTopic().setName("matrix-created-v" + version)
                .setNumPartitions(1).setReplicationFactor((short) 1));
        return data;
    }

    private static DeleteTopicsRequestData deleteMissingTopic(short version) {
        DeleteTopicsRequestData data = new DeleteTopicsRequestData().setTimeoutMs(10_000);
        if (version >= 6) {
            data.setTopics(List.of(new DeleteTopicsRequestData.DeleteTopicState().setName("matrix-missing")));
        } else {
            data.setTopicNames(List.of("matrix-missing"));
        }
        return data;
    }

    private static DescribeConfigsRequestData describeTopicConfigs(short version) {
        DescribeConfigsRequestData data = new DescribeConfigsRequestData().setIncludeSynonyms(true)
                .setResources(List.of(new DescribeConfigsRequestData.DescribeConfigsResource()
                        .setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName(TOPIC)
                        .setConfigurationKeys(List.of("cleanup.policy", RETENTION_MS))));
        if (version >= 3) {
            data.setIncludeDocumentation(true);
        }
        return data;
    }

    private static IncrementalAlterConfigsRequestData incrementalAlterConfigs() {
        IncrementalAlterConfigsRequestData.AlterConfigsResource resource =
                new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                        .setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName(TOPIC);
        resource.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig().setName(RETENTION_MS)
                .setConfigOperation((byte) 0).setValue("604800000"));
        IncrementalAlterConfigsRequestData data = new IncrementalAlterConfigsRequestData().setValidateOnly(true);
        data.resources().add(resource);
        return data;
    }

    private static AlterConfigsRequestData alterConfigs() {
        AlterConfigsRequestData.AlterConfigsResource resource = new AlterConfigsRequestData.AlterConfigsResource()
                .setResourceType(ConfigResource.Type.TOPIC.id()).setResourceName(TOPIC);
        resource.configs().add(new AlterConfigsRequestData.AlterableConfig().setName(RETENTION_MS)
                .setValue("604800000"));
        AlterConfigsRequestData data = new AlterConfigsRequestData().setValidateOnly(true);
        data.resources().add(resource);
        return data;
    }

    private static AlterPartitionReassignmentsRequestData cancelReassignment() {
        AlterPartitionReassignmentsRequestData.ReassignableTopic topic =
                new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName(TOPIC);
        topic.partitions().add(new AlterPartitionReassignmentsRequestData.ReassignablePartition().setPartitionIndex(0)
                .setReplicas(null));
        return new AlterPartitionReassignmentsRequestData().setTimeoutMs(10_000).setTopics(List.of(topic));
    }

    /** An ISR change from a broker epoch no broker has: the controller must fence it. */
    private static AlterPartitionRequestData staleAlterPartition(SideBySideClusters.Target target, short version) {
        AlterPartitionRequestData.PartitionData partition = new AlterPartitionRequestData.PartitionData()
                .setPartitionIndex(0).setLeaderEpoch(0).setPartitionEpoch(0);
        if (version >= 3) {
            partition.setNewIsrWithEpochs(List.of(new AlterPartitionRequestData.BrokerState()
                    .setBrokerId(target.brokerId()).setBrokerEpoch(1)));
        } else {
            partition.setNewIsr(List.of(target.brokerId()));
        }
        List<AlterPartitionRequestData.PartitionData> partitions = new ArrayList<>(List.of(partition));
        return new AlterPartitionRequestData().setBrokerId(target.brokerId()).setBrokerEpoch(1)
                .setTopics(List.of(new AlterPartitionRequestData.TopicData().setTopicId(target.topicId())
                        .setPartitions(partitions)));
    }
}
