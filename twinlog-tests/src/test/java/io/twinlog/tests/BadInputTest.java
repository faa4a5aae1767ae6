package io.twinlog.tests;

import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.utils.internals.Crc32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import static io.twinlog.tests.KafkaRequests.assertRawUnsupportedVersionThenClose;
import static io.twinlog.tests.KafkaRequests.assertServes;
import static io.twinlog.tests.KafkaRequests.concat;
import static io.twinlog.tests.KafkaRequests.fetch;
import static io.twinlog.tests.KafkaRequests.latestOffset;
import static io.twinlog.tests.KafkaRequests.onlyPartition;
import static io.twinlog.tests.KafkaRequests.produce;
import static io.twinlog.tests.KafkaRequests.rawHeader;
import static io.twinlog.tests.KafkaRequests.records;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bad client input, one case per test, each answered with the exact error code Apache Kafka answers it with (or
 * the connection closed where Kafka closes it), and the broker still serving afterwards. Everything goes through
 * a {@link RawKafkaConnection} so the test controls every byte and every version. Where Twinlog deliberately
 * answers differently from Kafka 4.4, the test's Javadoc says how and why.
 *
 * <p>The cluster has {@code socket.request.max.bytes} = 1 MiB and auto-creation off, so an unknown topic stays
 * unknown.
 */
@Timeout(300)
class BadInputTest {
    private static final int SOCKET_REQUEST_MAX_BYTES = 1 << 20;
    private static final String TOPIC = "bad-input";
    private static final int PARTITIONS = 2;
    private static final int INITIAL_RECORDS = 5;
    private static final String SMALL_MESSAGES_TOPIC = "small-messages";
    private static final int SMALL_MAX_MESSAGE_BYTES = 1024;

    private static TestCluster cluster;
    private static Uuid topicId;
    private static Uuid smallMessagesTopicId;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(1)
                .brokerProperty("socket.request.max.bytes", Integer.toString(SOCKET_REQUEST_MAX_BYTES))
                .brokerProperty("auto.create.topics.enable", "false")
                .build().start();
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1),
                    new NewTopic(SMALL_MESSAGES_TOPIC, 1, (short) 1).configs(
                            Map.of("max.message.bytes", Integer.toString(SMALL_MAX_MESSAGE_BYTES))))).all().get();
            topicId = KafkaRequests.topicId(admin, TOPIC);
            smallMessagesTopicId = KafkaRequests.topicId(admin, SMALL_MESSAGES_TOPIC);
        }
        try (RawKafkaConnection c = connect()) {
            ProduceResponse r = c.send(produce(ApiKeys.PRODUCE.latestVersion(), TOPIC, topicId, 0, (short) 1,
                    records(INITIAL_RECORDS, "initial")));
            assertEquals(Errors.NONE, Errors.forCode(onlyPartition(r).errorCode()), "initial produce: " + r.data());
        }
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    // ---- Framing and versions (network layer) ----

    /**
     * Twinlog answers {@code [correlationId][UNSUPPORTED_VERSION]} before closing, where Kafka closes without a word:
     * a client then sees why instead of a bare disconnect (see {@code Processor}).
     */
    @ParameterizedTest(name = "apiKey={0}")
    @ValueSource(shorts = {999, -7, Short.MAX_VALUE})
    void unknownApiKeyIsAnsweredWithUnsupportedVersionThenClosed(short apiKey) throws Exception {
        try (RawKafkaConnection c = connect()) {
            c.writeFrame(concat(rawHeader(apiKey, (short) 0, 4242, false)));
            assertRawUnsupportedVersionThenClose(c, 4242, "for API key " + apiKey);
        }
        assertServes(cluster.bootstrapServers(), TOPIC, "after an unknown API key");
    }

    /** As for an unknown key: the raw error frame, then close (Kafka closes without answering). */
    @ParameterizedTest(name = "api={0}")
    @ValueSource(strings = {"PRODUCE", "FETCH", "METADATA", "LIST_OFFSETS", "CREATE_TOPICS"})
    void versionAboveLatestIsAnsweredWithUnsupportedVersionThenClosed(ApiKeys api) throws Exception {
        short version = (short) (api.latestVersion() + 1);
        try (RawKafkaConnection c = connect()) {
            boolean flexible = api.requestHeaderVersion(version) >= 2;
            c.writeFrame(concat(rawHeader(api.id, version, 77, flexible), new byte[16]));
            assertRawUnsupportedVersionThenClose(c, 77, "for " + api + " v" + version);
        }
        assertServes(cluster.bootstrapServers(), TOPIC, "after an unsupported version");
    }

    /**
     * As in Kafka (KIP-511), an ApiVersions request of an unknown version gets a v0 response with UNSUPPORTED_VERSION
     * whose API list holds the ApiVersions range itself, and the connection stays open so the client can retry
     * with a version both sides know.
     */
    @Test
    void apiVersionsAboveLatestIsAnsweredWithV0ResponseListingTheApis() throws Exception {
        short version = (short) (ApiKeys.API_VERSIONS.latestVersion() + 1);
        try (RawKafkaConnection c = connect()) {
            byte[] softwareNameAndVersion = {5, 'r', 'a', 'w', 'x', 2, '1', 0};
            c.writeFrame(concat(rawHeader(ApiKeys.API_VERSIONS.id, version, 31, true), softwareNameAndVersion));
            ByteBuffer frame = c.readFrame();
            assertEquals(31, ResponseHeader.parse(frame, (short) 0).correlationId());
            ApiVersionsResponseData data = ApiVersionsResponse.parse(new ByteBufferAccessor(frame), (short) 0).data();
            assertEquals(Errors.UNSUPPORTED_VERSION, Errors.forCode(data.errorCode()));
            assertFalse(data.apiKeys().isEmpty(), "the API list must be sent with UNSUPPORTED_VERSION");
            ApiVersionsResponseData.ApiVersion apiVersions = data.apiKeys().find(ApiKeys.API_VERSIONS.id);
            assertNotNull(apiVersions, "ApiVersions itself is listed: " + data);
            assertEquals(ApiKeys.API_VERSIONS.latestVersion(), apiVersions.maxVersion());

            ApiVersionsResponse retry = c.send(KafkaRequests.apiVersions(apiVersions.maxVersion()));
            assertEquals(Errors.NONE, Errors.forCode(retry.data().errorCode()), "retry on the same connection");
        }
    }

    /**
     * A header cut inside the client ID does not parse: the connection is closed without an answer, as Kafka does,
     * and the cut must not be mistaken for an unknown API key (which would be answered).
     */
    @ParameterizedTest(name = "cut at {0}")
    @ValueSource(ints = {9, 11, 13})
    void truncatedHeaderOfKnownApiClosesWithoutAnswer(int length) throws Exception {
        byte[] header = rawHeader(ApiKeys.METADATA.id, (short) 12, 5, true);
        try (RawKafkaConnection c = connect()) {
            c.writeFrame(ByteBuffer.wrap(header, 0, length));
            assertTrue(c.isClosedByBroker(), "the broker must close the connection without answering");
        }
        assertServes(cluster.bootstrapServers(), TOPIC, "after a truncated header");
    }

    @ParameterizedTest(name = "size={0}")
    @ValueSource(ints = {SOCKET_REQUEST_MAX_BYTES + 1, 64 << 20, Integer.MAX_VALUE, -1, Integer.MIN_VALUE})
    void frameSizeAboveSocketRequestMaxBytesOrNegativeClosesTheConnection(int size) throws Exception {
        try (RawKafkaConnection c = connect()) {
            ByteBuffer prefix = ByteBuffer.allocate(4 + 64).putInt(size);
            c.writeRaw(prefix.array());
            assertTrue(c.isClosedByBroker(), "the broker must close a connection announcing a " + size
                    + "-byte frame (socket.request.max.bytes=" + SOCKET_REQUEST_MAX_BYTES + ")");
        }
        assertServes(cluster.bootstrapServers(), TOPIC, "after a frame of size " + size);
    }

    // ---- Produce ----

    @Test
    void produceToUnknownTopicByNameIsUnknownTopicOrPartition() throws Exception {
        try (RawKafkaConnection c = connect()) {
            ProduceResponse r = c.send(produce((short) 12, "no-such-topic", null, 0, (short) 1, records(1, "x")));
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.forCode(onlyPartition(r).errorCode()),
                    r.data().toString());
        }
    }

    @Test
    void produceToUnknownTopicIdIsUnknownTopicId() throws Exception {
        Uuid unknown = Uuid.randomUuid();
        try (RawKafkaConnection c = connect()) {
            ProduceResponse r = c.send(produce((short) 13, null, unknown, 0, (short) 1, records(1, "x")));
            ProduceResponseData.TopicProduceResponse t = r.data().responses().iterator().next();
            assertEquals(unknown, t.topicId(), "the response names the topic as the request did");
            assertEquals(Errors.UNKNOWN_TOPIC_ID, Errors.forCode(onlyPartition(r).errorCode()), r.data().toString());
        }
    }

    @ParameterizedTest(name = "produce v{0}")
    @ValueSource(shorts = {3, 9, 12, 13})
    void produceToUnknownPartitionOfExistingTopicIsUnknownTopicOrPartition(short version) throws Exception {
        try (RawKafkaConnection c = connect()) {
            ProduceResponse r = c.send(produce(version, TOPIC, topicId, PARTITIONS + 5, (short) 1, records(1, "x")));
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.forCode(onlyPartition(r).errorCode()),
                    r.data().toString());
        }
    }

    @Test
    void batchAboveTopicMaxMessageBytesIsMessageTooLargeAndNotAppended() throws Exception {
        MemoryRecords big = MemoryRecords.withRecords(Compression.NONE,
                new SimpleRecord(System.currentTimeMillis(), null, new byte[SMALL_MAX_MESSAGE_BYTES * 2]));
        try (RawKafkaConnection c = connect()) {
            long before = latestOffset(c, SMALL_MESSAGES_TOPIC, 0);
            ProduceResponse r = c.send(produce(ApiKeys.PRODUCE.latestVersion(), SMALL_MESSAGES_TOPIC,
                    smallMessagesTopicId, 0, (short) -1, big));
            assertEquals(Errors.MESSAGE_TOO_LARGE, Errors.forCode(onlyPartition(r).errorCode()), r.data().toString());
            assertEquals(before, latestOffset(c, SMALL_MESSAGES_TOPIC, 0), "log end after the refused batch");

            ProduceResponse small = c.send(produce(ApiKeys.PRODUCE.latestVersion(), SMALL_MESSAGES_TOPIC,
                    smallMessagesTopicId, 0, (short) -1, records(1, "small")));
            assertEquals(Errors.NONE, Errors.forCode(onlyPartition(small).errorCode()), "a small batch still fits");
        }
    }

    @Test
    void batchWithCorruptCrcIsCorruptMessageAndLogUnchanged() throws Exception {
        MemoryRecords corrupt = records(3, "crc");
        ByteBuffer buffer = corrupt.buffer();
        // The last record ends with its value and a zero header count: flip the value's last byte. The CRC covers
        // everything from the attributes on, so only the checksum can notice.
        int index = buffer.limit() - 2;
        assertTrue(index >= DefaultRecordBatch.RECORD_BATCH_OVERHEAD, "the flipped byte lies in the record area");
        buffer.put(index, (byte) (buffer.get(index) ^ 0x5A));
        corrupt = MemoryRecords.readableRecords(buffer);
        MutableRecordBatch batch = corrupt.batches().iterator().next();
        assertFalse(batch.isValid(), "the test must send a batch whose CRC does not match");

        try (RawKafkaConnection c = connect()) {
            long before = latestOffset(c, TOPIC, 0);
            ProduceResponse r = c.send(produce(ApiKeys.PRODUCE.latestVersion(), TOPIC, topicId, 0, (short) 1,
                    corrupt));
            assertEquals(Errors.CORRUPT_MESSAGE, Errors.forCode(onlyPartition(r).errorCode()), r.data().toString());
            assertEquals(before, latestOffset(c, TOPIC, 0), "ListOffsets latest after the corrupt batch");
            FetchResponseData.PartitionData tail = onlyPartition((FetchResponse) c.send(fetch(
                    ApiKeys.FETCH.latestVersion(), TOPIC, topicId, 0, before, Optional.empty(), 0)));
            assertEquals(Errors.NONE, Errors.forCode(tail.errorCode()));
            assertEquals(0, tail.records().sizeInBytes(), "nothing readable past the old log end");
        }
    }

    /**
     * A batch whose attributes name a compression codec that does not exist, with a correct CRC so only the codec is
     * wrong: CORRUPT_MESSAGE for that partition, nothing appended. (Kafka 4.4 lets the IllegalArgumentException of
     * the codec lookup escape and answers UNKNOWN_SERVER_ERROR; Twinlog treats it as the corrupt input it is.)
     */
    @Test
    void batchWithUnknownCompressionCodecIsCorruptMessageAndLogUnchanged() throws Exception {
        ByteBuffer buffer = records(2, "codec").buffer();
        int attributesOffset = DefaultRecordBatch.CRC_OFFSET + 4;
        int codecByte = attributesOffset + 1; // low byte of the int16 attributes; codec in its 3 lowest bits
        buffer.put(codecByte, (byte) (buffer.get(codecByte) | 0x07));
        buffer.putInt(DefaultRecordBatch.CRC_OFFSET,
                (int) Crc32C.compute(buffer, attributesOffset, buffer.limit() - attributesOffset));
        MemoryRecords unknownCodec = MemoryRecords.readableRecords(buffer);
        assertTrue(unknownCodec.batches().iterator().next().isValid(), "only the codec is wrong, not the CRC");

        try (RawKafkaConnection c = connect()) {
            long before = latestOffset(c, TOPIC, 0);
            ProduceResponse r = c.send(produce(ApiKeys.PRODUCE.latestVersion(), TOPIC, topicId, 0, (short) 1,
                    unknownCodec));
            assertEquals(Errors.CORRUPT_MESSAGE, Errors.forCode(onlyPartition(r).errorCode()), r.data().toString());
            assertEquals(before, latestOffset(c, TOPIC, 0), "ListOffsets latest after the refused batch");
        }
    }

    /**
     * Partition data without records (the nullable field sent as null) is INVALID_RECORD, the code Kafka's
     * validation gives a partition with no record batch; the request is answered, not failed as a whole.
     */
    @ParameterizedTest(name = "produce v{0}")
    @ValueSource(shorts = {3, 13})
    void produceWithNullRecordsIsInvalidRecord(short version) throws Exception {
        try (RawKafkaConnection c = connect()) {
            long before = latestOffset(c, TOPIC, 0);
            ProduceResponse r = c.send(produce(version, TOPIC, topicId, 0, (short) 1, null));
            assertEquals(Errors.INVALID_RECORD, Errors.forCode(onlyPartition(r).errorCode()), r.data().toString());
            assertEquals(before, latestOffset(c, TOPIC, 0), "log end after the refused produce");
        }
    }

    /** Kafka refuses acks other than -1, 0 and 1 with INVALID_REQUIRED_ACKS and appends nothing. */
    @ParameterizedTest(name = "acks={0}")
    @ValueSource(shorts = {2, -2, 100})
    void produceWithInvalidAcksIsInvalidRequiredAcksAndNotAppended(short acks) throws Exception {
        try (RawKafkaConnection c = connect()) {
            long before = latestOffset(c, TOPIC, 1);
            ProduceResponse r = c.send(produce(ApiKeys.PRODUCE.latestVersion(), TOPIC, topicId, 1, acks,
                    records(2, "acks")));
            assertEquals(Errors.INVALID_REQUIRED_ACKS, Errors.forCode(onlyPartition(r).errorCode()),
                    r.data().toString());
            assertEquals(before, latestOffset(c, TOPIC, 1), "log end after the refused produce");
        }
    }

    // ---- Fetch ----

    @ParameterizedTest(name = "fetch v{0}")
    @ValueSource(shorts = {4, 12, 13, 18})
    void fetchBeyondLogEndIsOffsetOutOfRange(short version) throws Exception {
        try (RawKafkaConnection c = connect()) {
            long logEnd = latestOffset(c, TOPIC, 0);
            FetchResponseData.PartitionData p = onlyPartition((FetchResponse) c.send(fetch(version, TOPIC, topicId,
                    0, logEnd + 10, Optional.empty(), 500)));
            assertEquals(Errors.OFFSET_OUT_OF_RANGE, Errors.forCode(p.errorCode()), p.toString());
        }
    }

    @ParameterizedTest(name = "fetch v{0}")
    @ValueSource(shorts = {9, 12, 13, 18})
    void fetchWithNewerCurrentLeaderEpochIsUnknownLeaderEpoch(short version) throws Exception {
        try (RawKafkaConnection c = connect()) {
            FetchResponseData.PartitionData p = onlyPartition((FetchResponse) c.send(fetch(version, TOPIC, topicId,
                    0, 0, Optional.of(5), 0)));
            assertEquals(Errors.UNKNOWN_LEADER_EPOCH, Errors.forCode(p.errorCode()),
                    "the partition is in leader epoch 0; the client claims 5: " + p);
        }
    }

    /**
     * An isolation level other than 0 (read_uncommitted) and 1 (read_committed) is INVALID_REQUEST for the whole
     * fetch. (Kafka 4.4 answers UNKNOWN_SERVER_ERROR, from the IllegalArgumentException of the level lookup.)
     */
    @ParameterizedTest(name = "isolation level {0}")
    @ValueSource(bytes = {2, -1, 77})
    void fetchWithUnknownIsolationLevelIsInvalidRequest(byte isolationLevel) throws Exception {
        FetchRequest request = fetch(ApiKeys.FETCH.latestVersion(), TOPIC, topicId, 0, 0, Optional.empty(), 0);
        request.data().setIsolationLevel(isolationLevel);
        try (RawKafkaConnection c = connect()) {
            FetchResponse r = c.send(request);
            assertEquals(Errors.INVALID_REQUEST, r.error(), r.data().toString());
        }
    }

    @Test
    void fetchFromUnknownTopicIsUnknownTopicOrPartitionByNameAndUnknownTopicIdById() throws Exception {
        try (RawKafkaConnection c = connect()) {
            FetchResponseData.PartitionData byName = onlyPartition((FetchResponse) c.send(fetch((short) 12,
                    "no-such-topic", Uuid.ZERO_UUID, 0, 0, Optional.empty(), 0)));
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.forCode(byName.errorCode()), byName.toString());
            FetchResponseData.PartitionData byId = onlyPartition((FetchResponse) c.send(fetch(
                    ApiKeys.FETCH.latestVersion(), "no-such-topic", Uuid.randomUuid(), 0, 0, Optional.empty(), 0)));
            assertEquals(Errors.UNKNOWN_TOPIC_ID, Errors.forCode(byId.errorCode()), byId.toString());
        }
    }

    // ---- CreateTopics ----

    static Stream<String> invalidTopicNames() {
        return Stream.of("bad/name", ".", "..", "a".repeat(300), "", "spaces are illegal", "ümlaut");
    }

    @ParameterizedTest(name = "name=\"{0}\"")
    @MethodSource("invalidTopicNames")
    void createTopicWithInvalidNameIsInvalidTopicException(String name) throws Exception {
        CreateTopicsResponseData.CreatableTopicResult r = createTopic(name, Map.of());
        assertEquals(Errors.INVALID_TOPIC_EXCEPTION, Errors.forCode(r.errorCode()), r.toString());
        assertNotNull(r.errorMessage(), "an error message explains the refusal");
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({"retention.ms,abc", "cleanup.policy,bogus", "max.message.bytes,-5", "min.insync.replicas,0",
            "no.such.config,1"})
    void createTopicWithBadConfigIsInvalidConfigNamingTheKey(String key, String value) throws Exception {
        String name = "bad-config-" + key.replace('.', '-');
        CreateTopicsResponseData.CreatableTopicResult r = createTopic(name, Map.of(key, value));
        assertEquals(Errors.INVALID_CONFIG, Errors.forCode(r.errorCode()), r.toString());
        assertNotNull(r.errorMessage());
        assertTrue(r.errorMessage().contains(key), "the message names " + key + ": " + r.errorMessage());
        try (RawKafkaConnection c = connect()) {
            MetadataResponse m = c.send(KafkaRequests.metadata(ApiKeys.METADATA.latestVersion(), name));
            MetadataResponseData.MetadataResponseTopic t = m.data().topics().find(name);
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.forCode(t.errorCode()),
                    "the refused topic must not exist: " + t);
        }
    }

    private static CreateTopicsResponseData.CreatableTopicResult createTopic(String name, Map<String, String> configs)
            throws IOException {
        CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic().setName(name)
                .setNumPartitions(1).setReplicationFactor((short) 1);
        configs.forEach((k, v) -> topic.configs().add(new CreateTopicsRequestData.CreatableTopicConfig()
                .setName(k).setValue(v)));
        CreateTopicsRequestData data = new CreateTopicsRequestData().setTimeoutMs(10_000);
        data.topics().add(topic);
        try (RawKafkaConnection c = connect()) {
            CreateTopicsResponse response = c.send(new CreateTopicsRequest.Builder(data).build());
            assertEquals(1, response.data().topics().size(), response.data().toString());
            return response.data().topics().iterator().next();
        }
    }

    // ---- ListOffsets / OffsetsForLeaderEpoch ----

    @ParameterizedTest(name = "{0}-{1}")
    @CsvSource({"no-such-topic,0", TOPIC + "," + (PARTITIONS + 3)})
    void listOffsetsOnUnknownPartitionIsUnknownTopicOrPartition(String topic, int partition) throws Exception {
        try (RawKafkaConnection c = connect()) {
            ListOffsetsResponse r = c.send(KafkaRequests.listOffsets(topic, partition,
                    ListOffsetsRequest.LATEST_TIMESTAMP));
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.forCode(onlyPartition(r).errorCode()),
                    r.data().toString());
        }
    }

    @ParameterizedTest(name = "{0}-{1}")
    @CsvSource({"no-such-topic,0", TOPIC + "," + (PARTITIONS + 3)})
    void offsetsForLeaderEpochOnUnknownPartitionIsUnknownTopicOrPartition(String topic, int partition)
            throws Exception {
        OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection topics =
                new OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection();
        OffsetForLeaderEpochRequestData.OffsetForLeaderTopic t =
                new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic(topic);
        t.partitions().add(new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(partition)
                .setLeaderEpoch(0).setCurrentLeaderEpoch(-1));
        topics.add(t);
        try (RawKafkaConnection c = connect()) {
            OffsetsForLeaderEpochResponse r = c.send(OffsetsForLeaderEpochRequest.Builder.forConsumer(topics).build());
            OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult tr = r.data().topics().find(topic);
            assertNotNull(tr, r.data().toString());
            assertEquals(1, tr.partitions().size(), tr.toString());
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.forCode(tr.partitions().get(0).errorCode()),
                    tr.toString());
        }
    }

    private static RawKafkaConnection connect() throws IOException {
        return RawKafkaConnection.to(cluster.bootstrapServers());
    }
}
