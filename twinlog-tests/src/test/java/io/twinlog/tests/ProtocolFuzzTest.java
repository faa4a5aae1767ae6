package io.twinlog.tests;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.TestSeed;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.EOFException;
import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Future;

import static io.twinlog.tests.KafkaRequests.assertServes;
import static io.twinlog.tests.KafkaRequests.rawHeader;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Seeded protocol fuzzing against a real broker on loopback. Each iteration opens a connection and sends one
 * malformed input: random bytes in a well-sized frame, a valid Metadata/Produce/Fetch/ApiVersions request with bytes
 * of its body flipped or cut short, a frame abandoned half-written, a negative or oversized size prefix, an unknown
 * API key, or a known key at a version outside its range.
 *
 * <p>Invariants, checked after every iteration: the broker answers such input with a frame carrying the request's
 * correlation ID (a well-formed response where the header was left intact), or closes the connection, or (only
 * where Kafka would too: acks=0 produce, fetch long poll) stays silent; and a fresh connection still gets
 * ApiVersions and Metadata. At the end, records produced before the fuzzing are intact at their offsets and a
 * KafkaProducer/KafkaConsumer round trip works.
 *
 * <p>The seed comes from {@value #SEED_PROPERTY} (random if absent) and is printed at the start and in every
 * failure; the inputs depend only on the seed, so {@code -Dtwinlog.fuzz.seed=N} replays a run. The iteration count
 * comes from {@value #ITERATIONS_PROPERTY}.
 */
@Timeout(300)
class ProtocolFuzzTest {
    static final String SEED_PROPERTY = "twinlog.fuzz.seed";
    static final String ITERATIONS_PROPERTY = "twinlog.fuzz.iterations";
    private static final int DEFAULT_ITERATIONS = 1_500;
    private static final Logger log = LoggerFactory.getLogger(ProtocolFuzzTest.class);

    private static final int SOCKET_REQUEST_MAX_BYTES = 1 << 20;
    private static final String TOPIC = "fuzz";
    private static final int BASELINE_RECORDS = 300;
    /** How long the broker gets to answer input it must answer or refuse. */
    private static final Duration MUST_ANSWER_TIMEOUT = Duration.ofSeconds(15);
    /** How long we wait where silence is legitimate (acks=0 produce, fetch long poll) before moving on. */
    private static final Duration MAY_BE_SILENT_TIMEOUT = Duration.ofMillis(500);
    private static final List<ApiKeys> FUZZED_APIS = List.of(ApiKeys.METADATA, ApiKeys.PRODUCE, ApiKeys.FETCH,
            ApiKeys.API_VERSIONS);

    private static TestCluster cluster;
    private static Uuid topicId;
    private static final List<String> baseline = new ArrayList<>();

    /** The kinds of bad input, each equally likely. */
    enum Case {
        RANDOM_BYTES, FLIPPED_REQUEST, TRUNCATED_REQUEST, DISCONNECT_MID_REQUEST, BAD_SIZE_PREFIX, UNKNOWN_API_KEY,
        VERSION_OUT_OF_RANGE
    }

    /** What the broker did with one input. */
    enum Outcome { ANSWERED, CLOSED, SILENT, NOT_AWAITED }

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(1)
                .brokerProperty("socket.request.max.bytes", Integer.toString(SOCKET_REQUEST_MAX_BYTES))
                .build().start();
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            topicId = KafkaRequests.topicId(admin, TOPIC);
        }
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
            for (int i = 0; i < BASELINE_RECORDS; i++) {
                String value = "baseline-" + i + "-" + "x".repeat(i % 40);
                baseline.add(value);
                acks.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, value.getBytes(StandardCharsets.UTF_8))));
            }
        }
        for (int i = 0; i < BASELINE_RECORDS; i++) {
            assertEquals(i, acks.get(i).get().offset(), "baseline record " + i + " offset");
        }
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Test
    void brokerSurvivesMalformedInputAndKeepsItsData() throws Exception {
        TestSeed seed = TestSeed.fromProperty(SEED_PROPERTY);
        int iterations = Integer.getInteger(ITERATIONS_PROPERTY, DEFAULT_ITERATIONS);
        String replay = seed.toString();
        log.info("ProtocolFuzzTest: {} iterations, {}", iterations, replay);
        Random random = seed.random();
        Map<String, Integer> tally = new TreeMap<>();
        long startNanos = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            Case c = Case.values()[random.nextInt(Case.values().length)];
            Iteration it = new Iteration(c);
            try {
                Outcome outcome = run(it, random);
                tally.merge(c + "->" + outcome, 1, Integer::sum);
                assertServes(cluster.bootstrapServers(), TOPIC, "");
                if (i % 50 == 49) {
                    assertBaselineOffsetsUnchanged();
                }
            } catch (AssertionError | Exception e) {
                throw new AssertionError("[ProtocolFuzzTest " + replay + "] iteration " + i + " " + it + ": "
                        + e, e);
            }
        }
        log.info("ProtocolFuzzTest: {} iterations in {} ms, outcomes {}, {}", iterations,
                (System.nanoTime() - startNanos) / 1_000_000, tally, replay);
        try {
            assertBaselineOffsetsUnchanged();
            assertRoundTripAndBaselineIntact();
        } catch (AssertionError | Exception e) {
            throw new AssertionError("[ProtocolFuzzTest " + replay + "] after " + iterations + " iterations: " + e, e);
        }
    }

    // ---- The cases ----

    private static Outcome run(Iteration it, Random random) throws IOException {
        return switch (it.fuzzCase) {
            case RANDOM_BYTES -> randomBytes(it, random);
            case FLIPPED_REQUEST -> flippedRequest(it, random);
            case TRUNCATED_REQUEST -> truncatedRequest(it, random);
            case DISCONNECT_MID_REQUEST -> disconnectMidRequest(it, random);
            case BAD_SIZE_PREFIX -> badSizePrefix(it, random);
            case UNKNOWN_API_KEY -> unknownApiKey(it, random);
            case VERSION_OUT_OF_RANGE -> versionOutOfRange(it, random);
        };
    }

    /**
     * Random bytes in a correctly sized frame; half the time behind a plausible header of a fuzzed API, so the body
     * parsers see garbage too. Any answer must carry the correlation ID the bytes put where the header keeps it.
     */
    private static Outcome randomBytes(Iteration it, Random random) throws IOException {
        byte[] payload;
        if (random.nextBoolean()) {
            ApiKeys api = FUZZED_APIS.get(random.nextInt(FUZZED_APIS.size()));
            short version = versionIn(api, random);
            byte[] header = rawHeader(api.id, version, random.nextInt(Integer.MAX_VALUE),
                    api.requestHeaderVersion(version) >= 2);
            byte[] body = randomBytes(random, random.nextInt(257));
            payload = KafkaRequests.concat(header, body).array();
            it.describe(api + " v" + version + " header + " + body.length + " random bytes");
        } else {
            payload = randomBytes(random, random.nextInt(513));
            it.describe(payload.length + " random bytes");
        }
        try (RawKafkaConnection c = connect()) {
            c.writeFrame(ByteBuffer.wrap(payload));
            Response r = readResponse(c, MAY_BE_SILENT_TIMEOUT);
            if (r.outcome == Outcome.ANSWERED) {
                assertAnswerCarriesCorrelationId(r.frame, payload);
            }
            return r.outcome;
        }
    }

    /**
     * A valid request with 1 to 4 bytes of its body XOR-ed with random values; the header stays intact, so an answer
     * must be a well-formed response of the same API and version for the same correlation ID.
     */
    private static Outcome flippedRequest(Iteration it, Random random) throws IOException {
        Serialized request = randomValidRequest(random, true);
        byte[] bytes = request.bytes.clone();
        int flips = 1 + random.nextInt(4);
        StringBuilder where = new StringBuilder();
        for (int f = 0; f < flips; f++) {
            int index = request.headerLength + random.nextInt(bytes.length - request.headerLength);
            int mask = 1 + random.nextInt(255);
            bytes[index] ^= (byte) mask;
            where.append(f == 0 ? "" : ",").append(index).append("^").append(mask);
        }
        it.describe(request + " with bytes flipped at " + where);
        try (RawKafkaConnection c = connect()) {
            c.writeFrame(ByteBuffer.wrap(bytes));
            boolean mayBeSilent = request.api == ApiKeys.PRODUCE || request.api == ApiKeys.FETCH;
            Response r = readResponse(c, mayBeSilent ? MAY_BE_SILENT_TIMEOUT : MUST_ANSWER_TIMEOUT);
            if (r.outcome == Outcome.SILENT && !mayBeSilent) {
                throw new AssertionError("no answer and no close within " + MUST_ANSWER_TIMEOUT.toMillis() + " ms");
            }
            if (r.outcome == Outcome.ANSWERED) {
                assertWellFormedResponse(r.frame, request, it);
            }
            return r.outcome;
        }
    }

    /** A valid request cut short inside a correctly sized frame: nothing parses, so the broker must close. */
    private static Outcome truncatedRequest(Iteration it, Random random) throws IOException {
        Serialized request = randomValidRequest(random, false);
        int length = random.nextInt(request.bytes.length);
        it.describe(request + " truncated to " + length + " of " + request.bytes.length + " bytes");
        try (RawKafkaConnection c = connect()) {
            c.writeFrame(ByteBuffer.wrap(request.bytes, 0, length));
            Response r = readResponse(c, MUST_ANSWER_TIMEOUT);
            if (r.outcome != Outcome.CLOSED) {
                throw new AssertionError("expected the broker to close the connection, got " + r.outcome
                        + (r.frame == null ? "" : " (" + r.frame.remaining() + "-byte frame)"));
            }
            return r.outcome;
        }
    }

    /**
     * The client vanishes mid-request: a size prefix promising more than follows, or a complete request whose
     * response nobody reads. The broker must drop the connection's state without harm.
     */
    private static Outcome disconnectMidRequest(Iteration it, Random random) throws IOException {
        Serialized request = randomValidRequest(random, false);
        boolean complete = random.nextInt(4) == 0;
        int written = complete ? request.bytes.length : random.nextInt(request.bytes.length);
        it.describe(request + (complete ? " complete, then disconnect before the response"
                : ": frame of " + request.bytes.length + " bytes, " + written + " written, then disconnect"));
        try (RawKafkaConnection c = connect()) {
            ByteBuffer frame = ByteBuffer.allocate(4 + written).putInt(request.bytes.length)
                    .put(request.bytes, 0, written);
            c.writeRaw(frame.array());
        }
        return Outcome.NOT_AWAITED;
    }

    /** A negative size or one above socket.request.max.bytes: the broker closes before allocating anything. */
    private static Outcome badSizePrefix(Iteration it, Random random) throws IOException {
        int size = random.nextBoolean() ? -1 - random.nextInt(Integer.MAX_VALUE)
                : SOCKET_REQUEST_MAX_BYTES + 1 + random.nextInt(Integer.MAX_VALUE - SOCKET_REQUEST_MAX_BYTES);
        byte[] tail = randomBytes(random, random.nextInt(65));
        it.describe("size prefix " + size + " then " + tail.length + " bytes");
        try (RawKafkaConnection c = connect()) {
            try {
                c.writeRaw(KafkaRequests.concat(ByteBuffer.allocate(4).putInt(size).array(), tail).array());
            } catch (SocketException e) {
                return Outcome.CLOSED; // closed while we were still writing
            }
            Response r = readResponse(c, MUST_ANSWER_TIMEOUT);
            if (r.outcome != Outcome.CLOSED) {
                throw new AssertionError("expected the broker to close the connection, got " + r.outcome);
            }
            return r.outcome;
        }
    }

    /** An API key kafka-clients does not know: a [correlationId][UNSUPPORTED_VERSION] frame, then close. */
    private static Outcome unknownApiKey(Iteration it, Random random) throws IOException {
        short apiKey;
        do {
            apiKey = (short) random.nextInt(1 << 16);
        } while (ApiKeys.hasId(apiKey) || MirrorApi.forId(apiKey).isPresent()); // Twinlog's own keys are known too
        short version = (short) random.nextInt(1 << 16);
        int correlationId = random.nextInt(Integer.MAX_VALUE);
        boolean flexible = random.nextBoolean();
        byte[] body = randomBytes(random, random.nextInt(33));
        it.describe("API key " + apiKey + " v" + version + " correlation " + correlationId + " + " + body.length
                + " bytes");
        try (RawKafkaConnection c = connect()) {
            c.writeFrame(KafkaRequests.concat(rawHeader(apiKey, version, correlationId, flexible), body));
            c.readTimeout(MUST_ANSWER_TIMEOUT);
            KafkaRequests.assertRawUnsupportedVersionThenClose(c, correlationId, "");
            return Outcome.CLOSED;
        }
    }

    /**
     * A known API at a version above its latest (or below its oldest): ApiVersions gets a v0 response with
     * UNSUPPORTED_VERSION and the connection stays open (KIP-511); every other API the raw error frame and close.
     */
    private static Outcome versionOutOfRange(Iteration it, Random random) throws IOException {
        ApiKeys api = random.nextBoolean() ? FUZZED_APIS.get(random.nextInt(FUZZED_APIS.size()))
                : ApiKeys.values()[random.nextInt(ApiKeys.values().length)];
        if (api.latestVersion() < api.oldestVersion()) {
            return removedApi(it, random, api);
        }
        short version;
        if (random.nextInt(4) == 0) {
            version = (short) (api.oldestVersion() - 1 - random.nextInt(api.oldestVersion() + 1));
        } else {
            version = (short) (api.latestVersion() + 1 + random.nextInt(Short.MAX_VALUE - api.latestVersion()));
        }
        int correlationId = random.nextInt(Integer.MAX_VALUE);
        byte[] body = randomBytes(random, random.nextInt(33));
        it.describe(api + " v" + version + " (range " + api.oldestVersion() + ".." + api.latestVersion()
                + ") correlation " + correlationId);
        try (RawKafkaConnection c = connect()) {
            c.writeFrame(KafkaRequests.concat(rawHeader(api.id, version, correlationId,
                    api.requestHeaderVersion(version) >= 2), body));
            c.readTimeout(MUST_ANSWER_TIMEOUT);
            if (api == ApiKeys.PRODUCE && version >= 0 && version < api.oldestVersion()) {
                // advertised for librdkafka (KAFKA-18659) but removed: closed without an answer, as Kafka 4.4 does
                if (!c.isClosedByBroker()) {
                    throw new AssertionError("Produce v" + version + " must close the connection without an answer");
                }
                return Outcome.CLOSED;
            }
            if (api != ApiKeys.API_VERSIONS) {
                KafkaRequests.assertRawUnsupportedVersionThenClose(c, correlationId, "");
                return Outcome.CLOSED;
            }
            ByteBuffer frame = c.readFrame();
            assertEquals(correlationId, ResponseHeader.parse(frame, (short) 0).correlationId(), "correlation ID");
            ApiVersionsResponseData data = ApiVersionsResponse.parse(new ByteBufferAccessor(frame), (short) 0).data();
            assertEquals(Errors.UNSUPPORTED_VERSION, Errors.forCode(data.errorCode()), "ApiVersions error");
            if (data.apiKeys().find(ApiKeys.API_VERSIONS.id) == null) {
                throw new AssertionError("the UNSUPPORTED_VERSION answer must list ApiVersions' range: " + data);
            }
            ApiVersionsResponse retry = c.send(KafkaRequests.apiVersions(ApiKeys.API_VERSIONS.latestVersion()));
            assertEquals(Errors.NONE, Errors.forCode(retry.data().errorCode()), "retry on the same connection");
            return Outcome.ANSWERED;
        }
    }

    /**
     * An API kafka-clients still names but no longer has any version of (LeaderAndIsr and the other ZooKeeper-era
     * inter-broker APIs): no header version exists to parse it with, so the broker closes without answering, as
     * Kafka closes on every header it cannot parse.
     */
    private static Outcome removedApi(Iteration it, Random random, ApiKeys api) throws IOException {
        short version = (short) random.nextInt(1 << 15);
        int correlationId = random.nextInt(Integer.MAX_VALUE);
        it.describe(api + " (no versions left) v" + version + " correlation " + correlationId);
        try (RawKafkaConnection c = connect()) {
            c.writeFrame(KafkaRequests.concat(rawHeader(api.id, version, correlationId, random.nextBoolean()),
                    randomBytes(random, random.nextInt(33))));
            Response r = readResponse(c, MUST_ANSWER_TIMEOUT);
            if (r.outcome != Outcome.CLOSED) {
                throw new AssertionError("expected the broker to close the connection, got " + r.outcome);
            }
            return r.outcome;
        }
    }

    // ---- Requests to mutate ----

    /** A serialized request (header and body, no size prefix) and where its body starts. */
    private record Serialized(ApiKeys api, short version, int correlationId, byte[] bytes, int headerLength) {
        @Override
        public String toString() {
            return api + " v" + version + " (" + bytes.length + " bytes, header " + headerLength + ")";
        }
    }

    /** One of Metadata, Produce, Fetch, ApiVersions at a random supported version, built by kafka-clients. */
    private static Serialized randomValidRequest(Random random, boolean needsBody) {
        ApiKeys api = FUZZED_APIS.get(random.nextInt(FUZZED_APIS.size()));
        short version = versionIn(api, random);
        AbstractRequest request = switch (api) {
            case METADATA -> KafkaRequests.metadata((short) Math.max(4, version), TOPIC);
            case PRODUCE -> KafkaRequests.produce(version, TOPIC, topicId, 0, random.nextBoolean() ? (short) 1 : -1,
                    fuzzRecords(random));
            case FETCH -> KafkaRequests.fetch(version, TOPIC, topicId, 0, random.nextInt(BASELINE_RECORDS + 1),
                    random.nextBoolean() ? Optional.empty() : Optional.of(0), 0);
            case API_VERSIONS -> KafkaRequests.apiVersions(needsBody ? (short) Math.max(3, version) : version);
            default -> throw new IllegalStateException("not fuzzed: " + api);
        };
        int correlationId = random.nextInt(Integer.MAX_VALUE);
        RequestHeader header = new RequestHeader(api, request.version(), KafkaRequests.CLIENT_ID, correlationId);
        ByteBuffer buffer = request.serializeWithHeader(header);
        ByteBuffer afterHeader = buffer.duplicate();
        RequestHeader.parse(afterHeader);
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return new Serialized(api, request.version(), correlationId, bytes, afterHeader.position() - buffer.position());
    }

    private static MemoryRecords fuzzRecords(Random random) {
        int count = 1 + random.nextInt(3);
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            records[i] = new SimpleRecord(1_700_000_000_000L + random.nextInt(1_000_000),
                    randomBytes(random, random.nextInt(8)), randomBytes(random, random.nextInt(64)));
        }
        return MemoryRecords.withRecords(Compression.NONE, records);
    }

    private static short versionIn(ApiKeys api, Random random) {
        return (short) (api.oldestVersion() + random.nextInt(api.latestVersion() - api.oldestVersion() + 1));
    }

    private static byte[] randomBytes(Random random, int length) {
        byte[] b = new byte[length];
        random.nextBytes(b);
        return b;
    }

    // ---- Reading what the broker did ----

    private record Response(Outcome outcome, ByteBuffer frame) {
    }

    private static Response readResponse(RawKafkaConnection c, Duration timeout) throws IOException {
        c.readTimeout(timeout);
        try {
            return new Response(Outcome.ANSWERED, c.readFrame());
        } catch (SocketTimeoutException e) {
            return new Response(Outcome.SILENT, null);
        } catch (EOFException | SocketException e) {
            return new Response(Outcome.CLOSED, null); // end of stream or connection reset
        }
    }

    /** Any answer is for the request the bytes described: same correlation ID as bytes 4..7 of the frame. */
    private static void assertAnswerCarriesCorrelationId(ByteBuffer frame, byte[] request) {
        if (request.length < 8 || frame.remaining() < 4) {
            throw new AssertionError("answered a " + request.length + "-byte request with a " + frame.remaining()
                    + "-byte frame");
        }
        int expected = ByteBuffer.wrap(request, 4, 4).getInt();
        assertEquals(expected, frame.getInt(frame.position()), "correlation ID of the answer to "
                + Arrays.toString(Arrays.copyOf(request, Math.min(16, request.length))) + "...");
    }

    /** The answer parses as a response of the request's API and version, for its correlation ID. */
    private static void assertWellFormedResponse(ByteBuffer frame, Serialized request, Iteration it) {
        ResponseHeader header = ResponseHeader.parse(frame, request.api.responseHeaderVersion(request.version));
        assertEquals(request.correlationId, header.correlationId(), "correlation ID of the answer");
        AbstractResponse response = AbstractResponse.parseResponse(request.api, new ByteBufferAccessor(frame),
                request.version);
        it.describe(it.detail + "; answered " + response.errorCounts());
    }

    // ---- Data invariants ----

    /** The log still starts at 0 and ends at or after the baseline (fuzzed produces may only add records). */
    private static void assertBaselineOffsetsUnchanged() throws IOException {
        try (RawKafkaConnection c = connect()) {
            ListOffsetsResponse earliest = c.send(KafkaRequests.listOffsets(TOPIC, 0,
                    ListOffsetsRequest.EARLIEST_TIMESTAMP));
            assertEquals(0, KafkaRequests.onlyPartition(earliest).offset(), "log start offset of " + TOPIC);
            long latest = KafkaRequests.latestOffset(c, TOPIC, 0);
            if (latest < BASELINE_RECORDS) {
                throw new AssertionError("log end offset of " + TOPIC + " fell to " + latest + " below the "
                        + BASELINE_RECORDS + " baseline records");
            }
        }
    }

    /**
     * A KafkaProducer appends after the fuzzing and a KafkaConsumer reads the partition from 0: the baseline records
     * at offsets 0..299 unchanged, the new ones at their acknowledged offsets.
     */
    private static void assertRoundTripAndBaselineIntact() throws Exception {
        int after = 20;
        List<RecordMetadata> acked = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < after; i++) {
                futures.add(producer.send(new ProducerRecord<>(TOPIC, 0, null,
                        ("after-fuzz-" + i).getBytes(StandardCharsets.UTF_8))));
            }
            for (Future<RecordMetadata> f : futures) {
                acked.add(f.get());
            }
        }
        long lastOffset = acked.get(after - 1).offset();
        Map<Long, String> read = new TreeMap<>();
        TopicPartition tp = new TopicPartition(TOPIC, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            Waits.waitFor("a consumer of " + tp + " to reach offset " + lastOffset + " (records read so far)", () -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    read.put(r.offset(), r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
                }
                return read.size();
            }, n -> read.containsKey(lastOffset));
        }
        for (int i = 0; i < BASELINE_RECORDS; i++) {
            assertEquals(baseline.get(i), read.get((long) i), "baseline record at offset " + i);
        }
        for (int i = 0; i < after; i++) {
            assertEquals("after-fuzz-" + i, read.get(acked.get(i).offset()),
                    "record produced after the fuzzing at offset " + acked.get(i).offset());
        }
        log.info("ProtocolFuzzTest: {} records in {} after fuzzing ({} appended by fuzzed produce requests)",
                read.size(), tp, read.size() - BASELINE_RECORDS - after);
    }

    private static RawKafkaConnection connect() throws IOException {
        return RawKafkaConnection.to(cluster.bootstrapServers());
    }

    /** One fuzz step, described for the failure message. */
    private static final class Iteration {
        final Case fuzzCase;
        String detail = "";

        Iteration(Case fuzzCase) {
            this.fuzzCase = fuzzCase;
        }

        void describe(String detail) {
            this.detail = detail;
        }

        @Override
        public String toString() {
            return fuzzCase + " (" + detail + ")";
        }
    }
}
