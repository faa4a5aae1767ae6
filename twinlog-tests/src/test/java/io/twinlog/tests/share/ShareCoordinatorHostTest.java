package io.twinlog.tests.share;

import io.twinlog.replication.ReplicaManager;
import io.twinlog.server.handlers.share.ShareFeature;
import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.DeleteShareGroupStateRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.InitializeShareGroupStateRequestData;
import org.apache.kafka.common.message.ReadShareGroupStateRequestData;
import org.apache.kafka.common.message.ReadShareGroupStateResponseData;
import org.apache.kafka.common.message.ReadShareGroupStateSummaryRequestData;
import org.apache.kafka.common.message.WriteShareGroupStateRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.DeleteShareGroupStateRequest;
import org.apache.kafka.common.requests.DeleteShareGroupStateResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.InitializeShareGroupStateRequest;
import org.apache.kafka.common.requests.InitializeShareGroupStateResponse;
import org.apache.kafka.common.requests.ReadShareGroupStateRequest;
import org.apache.kafka.common.requests.ReadShareGroupStateResponse;
import org.apache.kafka.common.requests.ReadShareGroupStateSummaryRequest;
import org.apache.kafka.common.requests.ReadShareGroupStateSummaryResponse;
import org.apache.kafka.common.requests.WriteShareGroupStateRequest;
import org.apache.kafka.common.requests.WriteShareGroupStateResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * Kafka's share coordinator hosted on 3 brokers: the share-group state RPCs Kafka's persister sends (here raw, as
 * a broker's persister would) are advertised and answered only once share.version is 1; the coordinator prunes its
 * log up to the last snapshot; the state of a share partition written to one coordinator is read back from the next
 * leader of its {@code __share_group_state} partition after the first one crashed.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ShareCoordinatorHostTest {
    private static final String GROUP = "share-group-a";
    private static final byte ACKNOWLEDGED = 2;
    private static final Set<Errors> RETRIED = Set.of(Errors.NOT_COORDINATOR, Errors.COORDINATOR_LOAD_IN_PROGRESS);

    @Test
    void stateRpcsAreServedOnlyWithShareVersionAndOutliveTheirCoordinator() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3)
                .brokerProperty("share.coordinator.state.topic.num.partitions", "3")
                // every write a snapshot and pruning every half second: the records before the last snapshot go
                .brokerProperty("share.coordinator.snapshot.update.records.per.snapshot", "0")
                .brokerProperty("share.coordinator.state.topic.prune.interval.ms", "500").build().start();
             CuratorFramework zk = CuratorFrameworkFactory.newClient(cluster.zookeeperConnect(),
                     new RetryOneTime(100));
             Admin admin = cluster.admin()) {
            zk.start();
            admin.createTopics(List.of(new NewTopic("orders", 1, (short) 3))).all().get();
            Uuid topicId = admin.describeTopics(List.of("orders")).allTopicNames().get().get("orders").topicId();
            String key = GROUP + ":" + topicId + ":0";

            // share.version 0, written by an operator (1 is the default): nothing of it is advertised or served
            zk.create().forPath("/feature", "{\"version\":1,\"features\":{\"share.version\":0}}"
                    .getBytes(StandardCharsets.UTF_8));
            for (int id : List.of(0, 1, 2)) {
                int broker = id;
                Waits.waitUntil("broker " + id + " advertises no share-group API",
                        () -> shareApisAdvertised(cluster, broker).isEmpty());
            }
            assertEquals(Errors.INVALID_REQUEST.code(), findShareCoordinator(cluster, 0, key).errorCode());
            ReadShareGroupStateResponse off = send(cluster, 0, new ReadShareGroupStateRequest.Builder(read(topicId))
                    .build());
            assertEquals(Errors.UNSUPPORTED_VERSION.code(), off.data().results().get(0).partitions().get(0)
                    .errorCode());

            zk.setData().forPath("/feature", "{\"version\":1,\"features\":{\"share.version\":1}}"
                    .getBytes(StandardCharsets.UTF_8));
            for (int id : List.of(0, 1, 2)) {
                int broker = id;
                Waits.waitUntil("broker " + id + " advertises the share-group APIs", () -> shareApisAdvertised(
                        cluster, broker).equals(ShareFeature.APIS));
            }

            // the first share key creates __share_group_state; then its partition's leader is the coordinator
            int coordinator = Waits.waitFor("a share coordinator", () -> findShareCoordinator(cluster, 1, key),
                    c -> c.errorCode() == Errors.NONE.code()).nodeId();
            // retried as Kafka's persister retries while the new leader has not yet taken the partition up
            // (NOT_COORDINATOR until its election is applied) or loads it (LOAD_IN_PROGRESS)
            InitializeShareGroupStateResponse initialized = Waits.waitFor("the state initialized", () -> send(cluster,
                    coordinator, new InitializeShareGroupStateRequest.Builder(new InitializeShareGroupStateRequestData()
                            .setGroupId(GROUP).setTopics(List.of(new InitializeShareGroupStateRequestData
                                    .InitializeStateData().setTopicId(topicId).setPartitions(List.of(
                                    new InitializeShareGroupStateRequestData.PartitionData().setPartition(0)
                                            .setStateEpoch(0).setStartOffset(10)))))).build()),
                    r -> !RETRIED.contains(Errors.forCode(((InitializeShareGroupStateResponse) r).data().results()
                            .get(0).partitions().get(0).errorCode())));
            assertEquals(Errors.NONE.code(), initialized.data().results().get(0).partitions().get(0).errorCode());
            WriteShareGroupStateResponse written = send(cluster, coordinator, new WriteShareGroupStateRequest.Builder(
                    new WriteShareGroupStateRequestData().setGroupId(GROUP).setTopics(List.of(
                            new WriteShareGroupStateRequestData.WriteStateData().setTopicId(topicId).setPartitions(
                                    List.of(new WriteShareGroupStateRequestData.PartitionData().setPartition(0)
                                            .setStateEpoch(0).setLeaderEpoch(0).setStartOffset(12)
                                            .setStateBatches(List.of(new WriteShareGroupStateRequestData.StateBatch()
                                                    .setFirstOffset(14).setLastOffset(15)
                                                    .setDeliveryState(ACKNOWLEDGED)
                                                    .setDeliveryCount((short) 1)))))))).build());
            assertEquals(Errors.NONE.code(), written.data().results().get(0).partitions().get(0).errorCode());
            assertState(readState(cluster, coordinator, topicId));
            ReadShareGroupStateSummaryResponse summary = send(cluster, coordinator,
                    new ReadShareGroupStateSummaryRequest.Builder(new ReadShareGroupStateSummaryRequestData()
                            .setGroupId(GROUP).setTopics(List.of(new ReadShareGroupStateSummaryRequestData
                                    .ReadStateSummaryData().setTopicId(topicId).setPartitions(List.of(
                                    new ReadShareGroupStateSummaryRequestData.PartitionData().setPartition(0)
                                            .setLeaderEpoch(0)))))).build());
            assertEquals(12, summary.data().results().get(0).partitions().get(0).startOffset());
            Waits.waitUntil("the coordinator prunes the records no state needs", () -> stateLogStart(cluster,
                    coordinator) > 0);

            // the coordinator crashes: the next leader of the partition loads the same state from the log
            cluster.killBroker(coordinator);
            int next = Waits.waitFor("another share coordinator", () -> findShareCoordinator(cluster,
                            cluster.runningBrokerIds().get(0), key),
                    c -> c.errorCode() == Errors.NONE.code() && c.nodeId() != coordinator).nodeId();
            assertNotEquals(coordinator, next);
            ReadShareGroupStateResponseData.PartitionResult reloaded = Waits.waitFor("the state reloaded",
                    () -> readState(cluster, next, topicId), p -> p.errorCode() == Errors.NONE.code());
            assertState(reloaded);

            DeleteShareGroupStateResponse deleted = send(cluster, next, new DeleteShareGroupStateRequest.Builder(
                    new DeleteShareGroupStateRequestData().setGroupId(GROUP).setTopics(List.of(
                            new DeleteShareGroupStateRequestData.DeleteStateData().setTopicId(topicId)
                                    .setPartitions(List.of(new DeleteShareGroupStateRequestData.PartitionData()
                                            .setPartition(0)))))).build());
            assertEquals(Errors.NONE.code(), deleted.data().results().get(0).partitions().get(0).errorCode());

            // back to 0: hidden and refused again, without a restart
            zk.setData().forPath("/feature", "{\"version\":1,\"features\":{\"share.version\":0}}"
                    .getBytes(StandardCharsets.UTF_8));
            Waits.waitUntil("the state RPCs are hidden again", () -> shareApisAdvertised(cluster, next).isEmpty());
            assertEquals(Errors.INVALID_REQUEST.code(), findShareCoordinator(cluster, next, key).errorCode());
        }
    }

    private static void assertState(ReadShareGroupStateResponseData.PartitionResult state) {
        assertEquals(Errors.NONE.code(), state.errorCode(), state.errorMessage());
        assertEquals(12, state.startOffset());
        assertEquals(0, state.stateEpoch());
        assertEquals(1, state.stateBatches().size());
        ReadShareGroupStateResponseData.StateBatch batch = state.stateBatches().get(0);
        assertEquals(List.of(14L, 15L, ACKNOWLEDGED, (short) 1), List.of(batch.firstOffset(), batch.lastOffset(),
                batch.deliveryState(), batch.deliveryCount()));
    }

    /** The highest log start offset of the {@code __share_group_state} partitions the broker has. */
    private static long stateLogStart(TestCluster cluster, int broker) {
        ReplicaManager replicas = cluster.broker(broker).replicaManager();
        long highest = 0;
        for (int p = 0; p < 3; p++) {
            highest = Math.max(highest, replicas.partition(new TopicPartition(Topic.SHARE_GROUP_STATE_TOPIC_NAME, p))
                    .map(partition -> partition.log().logStartOffset()).orElse(0L));
        }
        return highest;
    }

    private static ReadShareGroupStateRequestData read(Uuid topicId) {
        return new ReadShareGroupStateRequestData().setGroupId(GROUP).setTopics(List.of(
                new ReadShareGroupStateRequestData.ReadStateData().setTopicId(topicId).setPartitions(List.of(
                        new ReadShareGroupStateRequestData.PartitionData().setPartition(0).setLeaderEpoch(0)))));
    }

    private static ReadShareGroupStateResponseData.PartitionResult readState(TestCluster cluster, int broker,
                                                                             Uuid topicId) throws Exception {
        ReadShareGroupStateResponse response = send(cluster, broker,
                new ReadShareGroupStateRequest.Builder(read(topicId)).build());
        return response.data().results().get(0).partitions().get(0);
    }

    private static FindCoordinatorResponseData.Coordinator findShareCoordinator(TestCluster cluster, int broker,
                                                                               String key) throws Exception {
        FindCoordinatorResponse response = send(cluster, broker, new FindCoordinatorRequest.Builder(
                new FindCoordinatorRequestData().setKeyType(FindCoordinatorRequest.CoordinatorType.SHARE.id())
                        .setCoordinatorKeys(List.of(key))).build((short) 6));
        return response.data().coordinators().get(0);
    }

    private static Set<ApiKeys> shareApisAdvertised(TestCluster cluster, int broker) throws Exception {
        ApiVersionsResponse response = send(cluster, broker, new ApiVersionsRequest.Builder(
                new ApiVersionsRequestData().setClientSoftwareName("test").setClientSoftwareVersion("1"),
                (short) 3, (short) 3).build((short) 3));
        Set<ApiKeys> share = new HashSet<>();
        response.data().apiKeys().forEach(k -> {
            if (ApiKeys.hasId(k.apiKey()) && ApiKeys.forId(k.apiKey()).name.contains("Share")) {
                share.add(ApiKeys.forId(k.apiKey()));
            }
        });
        return share;
    }

    private static <T extends AbstractResponse> T send(TestCluster cluster, int broker, AbstractRequest request)
            throws Exception {
        try (RawKafkaConnection connection = RawKafkaConnection.to(cluster.broker(broker).bootstrapServers())) {
            return connection.send(request);
        }
    }
}
