package io.twinlog.tests;

import io.twinlog.testkit.RawKafkaConnection;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Hand-built Kafka requests for tests that talk to the broker through a {@link RawKafkaConnection}: the request
 * builders of kafka-clients at an explicit version, the raw bytes of headers Kafka's own serializer refuses to write
 * (unknown API keys, versions above the latest), and protocol assertions on the typed responses.
 *
 * <p>Produce from v13 and Fetch from v13 name topics by topic ID only; the builders here take both name and ID and
 * put on the wire what the version carries.
 */
public final class KafkaRequests {
    static final String CLIENT_ID = "raw-test-client";

    private KafkaRequests() {
    }

    static Uuid topicId(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId();
    }

    // ---- Produce ----

    public static ProduceRequest produce(short version, String topic, Uuid topicId, int partition, short acks,
                                  MemoryRecords records) {
        ProduceRequestData.TopicProduceData t = new ProduceRequestData.TopicProduceData();
        if (version >= 13) {
            t.setTopicId(topicId);
        } else {
            t.setName(topic);
        }
        t.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(partition).setRecords(records));
        ProduceRequestData data = new ProduceRequestData().setAcks(acks).setTimeoutMs(10_000);
        data.topicData().add(t);
        // the constructor, not the builder: the builder validates the records and tests must be able to send bad ones
        return new ProduceRequest(data, version);
    }

    /** The response of a single-partition produce. */
    public static ProduceResponseData.PartitionProduceResponse onlyPartition(ProduceResponse response) {
        List<ProduceResponseData.TopicProduceResponse> topics = List.copyOf(response.data().responses());
        assertEquals(1, topics.size(), "topics in " + response.data());
        assertEquals(1, topics.get(0).partitionResponses().size(), "partitions in " + response.data());
        return topics.get(0).partitionResponses().get(0);
    }

    public static MemoryRecords records(int count, String prefix) {
        return MemoryRecords.withRecords(Compression.NONE, simpleRecords(count, prefix));
    }

    static SimpleRecord[] simpleRecords(int count, String prefix) {
        SimpleRecord[] out = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            out[i] = new SimpleRecord(System.currentTimeMillis(), bytes(prefix + "-key-" + i),
                    bytes(prefix + "-value-" + i));
        }
        return out;
    }

    // ---- Fetch ----

    static FetchRequest fetch(short version, String topic, Uuid topicId, int partition, long fetchOffset,
                              Optional<Integer> currentLeaderEpoch, int maxWaitMs) {
        Map<TopicPartition, FetchRequest.PartitionData> data = new LinkedHashMap<>();
        data.put(new TopicPartition(topic, partition),
                new FetchRequest.PartitionData(topicId, fetchOffset, -1L, 1 << 20, currentLeaderEpoch));
        return FetchRequest.Builder.forConsumer(version, maxWaitMs, 1, data).build(version);
    }

    /** The only partition of a single-partition fetch response; works for both name and topic-ID versions. */
    static FetchResponseData.PartitionData onlyPartition(FetchResponse response) {
        assertEquals(Errors.NONE, response.error(), "top-level error of " + response.data());
        List<FetchResponseData.FetchableTopicResponse> topics = response.data().responses();
        assertEquals(1, topics.size(), "topics in " + response.data());
        assertEquals(1, topics.get(0).partitions().size(), "partitions in " + response.data());
        return topics.get(0).partitions().get(0);
    }

    // ---- ListOffsets / InitProducerId / Metadata / ApiVersions ----

    static ListOffsetsRequest listOffsets(String topic, int partition, long timestamp) {
        ListOffsetsRequestData.ListOffsetsTopic t = new ListOffsetsRequestData.ListOffsetsTopic().setName(topic);
        t.partitions().add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(partition)
                .setTimestamp(timestamp).setCurrentLeaderEpoch(-1));
        return ListOffsetsRequest.Builder.forConsumer(false, IsolationLevel.READ_UNCOMMITTED)
                .setTargetTimes(List.of(t)).build(ApiKeys.LIST_OFFSETS.latestVersion());
    }

    static ListOffsetsResponseData.ListOffsetsPartitionResponse onlyPartition(ListOffsetsResponse response) {
        assertEquals(1, response.data().topics().size(), "topics in " + response.data());
        assertEquals(1, response.data().topics().get(0).partitions().size(), "partitions in " + response.data());
        return response.data().topics().get(0).partitions().get(0);
    }

    /** The latest offset (high watermark) of a partition, asserting the request itself succeeds. */
    static long latestOffset(RawKafkaConnection connection, String topic, int partition) throws IOException {
        ListOffsetsResponseData.ListOffsetsPartitionResponse r = onlyPartition(
                (ListOffsetsResponse) connection.send(listOffsets(topic, partition, ListOffsetsRequest.LATEST_TIMESTAMP)));
        assertEquals(Errors.NONE, Errors.forCode(r.errorCode()), "ListOffsets latest of " + topic + "-" + partition);
        return r.offset();
    }

    static InitProducerIdResponse initProducerId(RawKafkaConnection connection) throws IOException {
        InitProducerIdRequestData data = new InitProducerIdRequestData().setTransactionalId(null)
                .setTransactionTimeoutMs(60_000);
        InitProducerIdResponse response = connection.send(new InitProducerIdRequest.Builder(data).build());
        assertEquals(Errors.NONE, response.error(), "InitProducerId: " + response.data());
        return response;
    }

    static MetadataRequest metadata(short version, String topic) {
        return new MetadataRequest.Builder(List.of(topic), false).build(version);
    }

    static ApiVersionsRequest apiVersions(short version) {
        return new ApiVersionsRequest.Builder(version).build(version);
    }

    /**
     * Asserts the broker serves a new connection: ApiVersions answers without error and lists APIs, and Metadata
     * shows {@code topic} with all its partitions led.
     */
    static void assertServes(String bootstrap, String topic, String context) throws IOException {
        try (RawKafkaConnection c = RawKafkaConnection.to(bootstrap)) {
            ApiVersionsResponse versions = c.send(apiVersions(ApiKeys.API_VERSIONS.latestVersion()));
            ApiVersionsResponseData v = versions.data();
            assertEquals(Errors.NONE, Errors.forCode(v.errorCode()), "ApiVersions error " + context);
            assertFalse(v.apiKeys().isEmpty(), "ApiVersions lists no API " + context);
            MetadataResponse metadata = c.send(metadata(ApiKeys.METADATA.latestVersion(), topic));
            MetadataResponseData.MetadataResponseTopic t = metadata.data().topics().find(topic);
            if (t == null || t.errorCode() != Errors.NONE.code() || t.partitions().isEmpty()
                    || t.partitions().stream().anyMatch(p -> p.errorCode() != Errors.NONE.code() || p.leaderId() < 0)) {
                throw new AssertionError("Metadata does not show " + topic + " as served " + context + ": "
                        + metadata.data());
            }
        }
    }

    // ---- Raw frames ----

    /**
     * A request header written byte by byte: API key, version, correlation ID, client ID, and for header version 2
     * (flexible versions) an empty tagged-field section. Works for keys and versions kafka-clients will not write.
     */
    static byte[] rawHeader(short apiKey, short apiVersion, int correlationId, boolean flexible) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeShort(apiKey);
            out.writeShort(apiVersion);
            out.writeInt(correlationId);
            byte[] clientId = bytes(CLIENT_ID);
            out.writeShort(clientId.length);
            out.write(clientId);
            if (flexible) {
                out.writeByte(0);
            }
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static ByteBuffer concat(byte[]... parts) {
        int size = 0;
        for (byte[] p : parts) {
            size += p.length;
        }
        ByteBuffer b = ByteBuffer.allocate(size);
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.flip();
    }

    /**
     * Reads the minimal error frame the broker answers an unknown API key or an unsupported version with
     * ({@code [correlationId][errorCode]}), then expects the broker to close the connection.
     */
    static void assertRawUnsupportedVersionThenClose(RawKafkaConnection c, int correlationId, String context)
            throws IOException {
        ByteBuffer frame = c.readFrame();
        assertEquals(6, frame.remaining(), "size of the error frame " + context);
        assertEquals(correlationId, frame.getInt(), "correlation ID of the error frame " + context);
        assertEquals(Errors.UNSUPPORTED_VERSION, Errors.forCode(frame.getShort()), "error code " + context);
        if (!c.isClosedByBroker()) {
            throw new AssertionError("The broker kept the connection open after the error frame " + context);
        }
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
