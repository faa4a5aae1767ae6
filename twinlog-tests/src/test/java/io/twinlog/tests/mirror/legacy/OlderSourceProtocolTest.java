package io.twinlog.tests.mirror.legacy;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.common.mirror.BatchIdentity;
import io.twinlog.protocol.client.ClusterBatches;
import io.twinlog.protocol.client.InterBrokerClient;
import io.twinlog.protocol.client.UnsupportedApiVersionException;
import org.apache.kafka.clients.FetchSessionHandler;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What Twinlog sends to a source on Kafka before 3.1, against {@link OlderKafkaStub} (Kafka 2.8's versions): Fetch
 * answers read at the version negotiated (v12, by topic name), the cluster ID asked at a Metadata version such a
 * broker serves, and a request it does not serve refused without losing the connection. Fast guards; the real 2.8
 * and 3.9 brokers are driven by the compatibility tests of twinlog-tests-kafka.
 */
@Timeout(60)
class OlderSourceProtocolTest {
    private static final TopicPartition ORDERS_0 = new TopicPartition(OlderKafkaStub.TOPIC, 0);
    private OlderKafkaStub source;

    @BeforeEach
    void start() throws Exception {
        source = new OlderKafkaStub();
    }

    @AfterEach
    void stop() throws Exception {
        source.close();
    }

    @Test
    void aBatchIsReadFromAFetchAnsweredByTopicName() throws Exception {
        try (ClusterBatches batches = new ClusterBatches("the source", Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, source.bootstrapServers()))) {
            Optional<BatchIdentity> batch = batches.batchAt(ORDERS_0, 1);
            assertEquals(Optional.of(new BatchIdentity(0, OlderKafkaStub.RECORDS - 1,
                    OlderKafkaStub.LEADER_EPOCH, source.batchChecksum())), batch);
        }
    }

    @Test
    void theClusterIdIsAskedAtAVersionTheSourceServes() throws Exception {
        try (MirrorAdmin admin = MirrorAdmin.create(source.bootstrapServers(), Duration.ofSeconds(10))) {
            assertEquals(OlderKafkaStub.CLUSTER_ID, admin.clusterId());
        }
    }

    @Test
    void aFetchSessionReadsTheAnswerAtTheNegotiatedVersion() throws Exception {
        Node node = new Node(1, "127.0.0.1", source.port());
        try (InterBrokerClient client = new InterBrokerClient("old-source-test", 10_000, 64 * 1024, Time.SYSTEM)) {
            FetchSessionHandler session = new FetchSessionHandler(new LogContext(), node.id());
            FetchSessionHandler.Builder builder = session.newBuilder();
            builder.add(ORDERS_0, new FetchRequest.PartitionData(OlderKafkaStub.TOPIC_ID, 0, -1, 1 << 20,
                    Optional.of(OlderKafkaStub.LEADER_EPOCH)));
            FetchSessionHandler.FetchRequestData data = builder.build();
            InterBrokerClient.Exchange<FetchResponse> answer = client.exchange(node, FetchRequest.Builder
                    .forConsumer(ApiKeys.FETCH.latestVersion(), 0, 1, data.toSend())
                    .metadata(data.metadata()).removed(data.toForget()).replaced(data.toReplace()));
            assertEquals(12, answer.version(), "negotiated down to the source's newest Fetch");
            assertTrue(session.handleResponse(answer.body(), answer.version()), "the session accepts the answer");
            Map<TopicPartition, FetchResponseData.PartitionData> partitions = answer.body()
                    .responseData(session.sessionTopicNames(), answer.version());
            assertEquals(List.of(ORDERS_0), List.copyOf(partitions.keySet()));
            assertEquals(OlderKafkaStub.RECORDS, partitions.get(ORDERS_0).highWatermark());
        }
    }

    @Test
    void aRequestTheSourceDoesNotServeKeepsTheConnection() throws Exception {
        Node node = new Node(1, "127.0.0.1", source.port());
        try (InterBrokerClient client = new InterBrokerClient("old-source-test", 10_000, 64 * 1024, Time.SYSTEM)) {
            // the lag probe's max timestamp needs ListOffsets v7; Kafka 2.8 stops at v6
            ListOffsetsRequest.Builder probe = ListOffsetsRequest.Builder
                    .forConsumer(false, IsolationLevel.READ_UNCOMMITTED, true, false, false, false)
                    .setTargetTimes(List.of(new ListOffsetsRequestData.ListOffsetsTopic()
                            .setName(OlderKafkaStub.TOPIC).setPartitions(List.of(
                                    new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0)
                                            .setTimestamp(ListOffsetsRequest.MAX_TIMESTAMP)))));
            assertThrows(UnsupportedApiVersionException.class, () -> client.send(node, probe));
            // the same connection still carries requests
            LinkedHashMap<TopicPartition, FetchRequest.PartitionData> fetch = new LinkedHashMap<>();
            fetch.put(ORDERS_0, new FetchRequest.PartitionData(OlderKafkaStub.TOPIC_ID, 0, -1, 1 << 20,
                    Optional.empty()));
            FetchResponse response = client.send(node, FetchRequest.Builder.forConsumer(ApiKeys.FETCH
                    .latestVersion(), 0, 1, fetch));
            assertEquals(Errors.NONE, response.error());
            assertEquals(1, source.connections(), "the refused request did not cost the connection");
        }
    }
}
