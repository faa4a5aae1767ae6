package io.twinlog.tests.kafka.protocol;

import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.Waits;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Twinlog against Apache Kafka 4.4, side by side (issue 10):
 * <ul>
 *   <li>the ApiVersions answers are compared; every difference must be one listed in {@link ExpectedDifferences}
 *       (and in docs/status.md), so a new one fails the test;</li>
 *   <li>the version matrix: for every Kafka API and every version Twinlog advertises, a representative request
 *       built with kafka-clients' message classes goes to both brokers; Twinlog's answer must parse at that version
 *       using all its bytes, and carry the same error codes as Kafka's ({@code AbstractResponse.errorCounts()}).</li>
 * </ul>
 */
@Timeout(600)
class KafkaProtocolParityTest {
    private static SideBySideClusters clusters;
    private static final Map<ApiKeys, RepresentativeRequest> REQUESTS = new EnumMap<>(ApiKeys.class);

    static {
        DataAndAdminRequests.register(REQUESTS);
        GroupRequests.register(REQUESTS);
        TransactionRequests.register(REQUESTS);
    }

    @BeforeAll
    static void start() throws Exception {
        clusters = SideBySideClusters.start();
        for (SideBySideClusters.Target target : List.of(clusters.kafka(), clusters.twinlog())) {
            // the group coordinator (and __consumer_offsets) must be up before group APIs are compared
            Waits.waitUntil("a group coordinator on " + target, () -> {
                try (RawKafkaConnection connection = RawKafkaConnection.to(target.bootstrap())) {
                    FindCoordinatorResponse response = (FindCoordinatorResponse) ProtocolExchange.exchange(connection,
                            ProtocolExchange.request(ApiKeys.FIND_COORDINATOR, (short) 3,
                                    GroupRequests.findCoordinator((short) 3, "matrix-warm-up")));
                    return response.error() == Errors.NONE;
                }
            });
            // and the transaction coordinator (and __transaction_state), for the transaction APIs
            Waits.waitUntil("a transaction coordinator on " + target, () -> {
                try (RawKafkaConnection connection = RawKafkaConnection.to(target.bootstrap())) {
                    FindCoordinatorResponse response = (FindCoordinatorResponse) ProtocolExchange.exchange(connection,
                            ProtocolExchange.request(ApiKeys.FIND_COORDINATOR, (short) 4,
                                    TransactionRequests.findTransactionCoordinator("matrix-warm-up")));
                    return response.data().coordinators().get(0).errorCode() == Errors.NONE.code();
                }
            });
            // Kafka hands out producer ids once its controller has granted the broker a block
            Waits.waitUntil("producer ids on " + target, () -> errorCounts(target, ApiKeys.INIT_PRODUCER_ID,
                    ApiKeys.INIT_PRODUCER_ID.latestVersion(false)).equals(Map.of(Errors.NONE, 1)));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (clusters != null) {
            clusters.close();
        }
    }

    @Test
    @Timeout(60)
    void apiVersionsDifferOnlyAsListed() throws IOException {
        Map<Integer, ApiVersionsResponseData.ApiVersion> kafka = apiVersions(clusters.kafka());
        Map<Integer, ApiVersionsResponseData.ApiVersion> twinlog = apiVersions(clusters.twinlog());
        Set<String> differences = new TreeSet<>();
        for (ApiVersionsResponseData.ApiVersion k : kafka.values()) {
            ApiVersionsResponseData.ApiVersion t = twinlog.get((int) k.apiKey());
            if (t == null) {
                differences.add("Kafka only: " + name(k.apiKey()));
            } else if (t.minVersion() != k.minVersion() || t.maxVersion() != k.maxVersion()) {
                differences.add(name(k.apiKey()) + ": Kafka v" + k.minVersion() + "-" + k.maxVersion() + ", Twinlog v"
                        + t.minVersion() + "-" + t.maxVersion());
            }
        }
        for (ApiVersionsResponseData.ApiVersion t : twinlog.values()) {
            if (!kafka.containsKey((int) t.apiKey())) {
                differences.add(ApiKeys.hasId(t.apiKey()) ? "Twinlog only: " + name(t.apiKey())
                        : "Twinlog only: Twinlog's own APIs (7000+)");
            }
        }
        Set<String> unexplained = new TreeSet<>(differences);
        unexplained.removeAll(ExpectedDifferences.API_VERSIONS.keySet());
        Set<String> stale = new TreeSet<>(ExpectedDifferences.API_VERSIONS.keySet());
        stale.removeAll(differences);
        assertTrue(unexplained.isEmpty(), "ApiVersions differences from Kafka 4.4 that are neither fixed nor listed "
                + "(ExpectedDifferences.API_VERSIONS and docs/status.md): " + unexplained);
        assertTrue(stale.isEmpty(), "listed ApiVersions differences that are gone (remove them from "
                + "ExpectedDifferences.API_VERSIONS and docs/status.md): " + stale);
    }

    @TestFactory
    List<DynamicTest> everyAdvertisedVersionIsAnsweredAsKafkaAnswersIt() throws IOException {
        Map<Integer, ApiVersionsResponseData.ApiVersion> kafka = apiVersions(clusters.kafka());
        List<DynamicTest> tests = new ArrayList<>();
        for (ApiVersionsResponseData.ApiVersion advertised : apiVersions(clusters.twinlog()).values()) {
            if (!ApiKeys.hasId(advertised.apiKey())) {
                continue; // Twinlog's own APIs have no kafka-clients schema; MirrorApiTest and others cover them
            }
            ApiKeys api = ApiKeys.forId(advertised.apiKey());
            for (short version = advertised.minVersion(); version <= advertised.maxVersion(); version++) {
                short v = version;
                boolean kafkaServes = kafka.containsKey((int) api.id) && kafka.get((int) api.id).minVersion() <= v
                        && v <= kafka.get((int) api.id).maxVersion();
                tests.add(DynamicTest.dynamicTest(api.name + " v" + v, () -> {
                    if (!api.isVersionSupported(v)) {
                        assertRefusedByClosingAsKafkaDoes(api, v);
                    } else {
                        compareAnswers(api, v, kafkaServes);
                    }
                }));
            }
        }
        return tests;
    }

    private static void compareAnswers(ApiKeys api, short version, boolean kafkaServes) throws Exception {
        Map<Errors, Integer> twinlog = errorCounts(clusters.twinlog(), api, version);
        String key = api.name + " v" + version;
        if (!kafkaServes) {
            Map<Errors, Integer> expected = ExpectedDifferences.TWINLOG_ONLY_ANSWERS.get(api);
            assertEquals(expected, twinlog, key + " is not served by Kafka 4.4: Twinlog's answer must be the one "
                    + "listed in ExpectedDifferences.TWINLOG_ONLY_ANSWERS");
            return;
        }
        Map<Errors, Integer> kafka = errorCounts(clusters.kafka(), api, version);
        String reason = ExpectedDifferences.ANSWERS.get(key);
        if (reason == null) {
            assertEquals(kafka, twinlog, "error codes of " + key + " (Kafka 4.4 vs Twinlog)");
        } else {
            assertTrue(!kafka.equals(twinlog), key + " now answers as Kafka does: remove it from "
                    + "ExpectedDifferences.ANSWERS (" + reason + ")");
        }
    }

    private static Map<Errors, Integer> errorCounts(SideBySideClusters.Target target, ApiKeys api, short version)
            throws Exception {
        try (RawKafkaConnection connection = RawKafkaConnection.to(target.bootstrap())) {
            RepresentativeRequest request = REQUESTS.getOrDefault(api,
                    (t, v, c) -> ApiMessageType.fromApiKey(api.id).newRequest());
            ApiMessage data = request.build(target, version, connection);
            AbstractResponse response = ProtocolExchange.exchange(connection,
                    ProtocolExchange.request(api, version, data));
            return response.errorCounts();
        }
    }

    /**
     * Produce v0-2: advertised for librdkafka (it disables compression unless ApiVersions lists Produce from v0,
     * KAFKA-18659) but removed from the protocol in Kafka 4.0. Kafka closes the connection without an answer.
     */
    private static void assertRefusedByClosingAsKafkaDoes(ApiKeys api, short version) throws IOException {
        for (SideBySideClusters.Target target : List.of(clusters.kafka(), clusters.twinlog())) {
            try (RawKafkaConnection connection = RawKafkaConnection.to(target.bootstrap())) {
                connection.writeFrame(emptyRequestOfRemovedVersion(api, version));
                assertTrue(connection.isClosedByBroker(), target + " answered " + api + " v" + version
                        + " instead of closing the connection");
            }
        }
    }

    /** Header v1 and an empty Produce body (acks, timeout, no topics): kafka-clients no longer writes v0-2. */
    private static ByteBuffer emptyRequestOfRemovedVersion(ApiKeys api, short version) throws IOException {
        assertEquals(ApiKeys.PRODUCE, api, "the only API advertised below its oldest version");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        byte[] clientId = ProtocolExchange.CLIENT_ID.getBytes(StandardCharsets.UTF_8);
        out.writeShort(api.id);
        out.writeShort(version);
        out.writeInt(1);
        out.writeShort(clientId.length);
        out.write(clientId);
        out.writeShort(1);
        out.writeInt(10_000);
        out.writeInt(0);
        return ByteBuffer.wrap(bytes.toByteArray());
    }

    private static Map<Integer, ApiVersionsResponseData.ApiVersion> apiVersions(SideBySideClusters.Target target)
            throws IOException {
        try (RawKafkaConnection connection = RawKafkaConnection.to(target.bootstrap())) {
            short version = ApiKeys.API_VERSIONS.latestVersion();
            ApiVersionsResponse response = (ApiVersionsResponse) ProtocolExchange.exchange(connection,
                    ProtocolExchange.request(ApiKeys.API_VERSIONS, version, new ApiVersionsRequestData()
                            .setClientSoftwareName("twinlog-version-matrix").setClientSoftwareVersion("1.0")));
            assertEquals(Errors.NONE, Errors.forCode(response.data().errorCode()), "ApiVersions of " + target);
            Map<Integer, ApiVersionsResponseData.ApiVersion> byKey = new TreeMap<>();
            response.data().apiKeys().forEach(v -> byKey.put((int) v.apiKey(), v));
            return byKey;
        }
    }

    private static String name(short apiKey) {
        return ApiKeys.hasId(apiKey) ? ApiKeys.forId(apiKey).name() : "API key " + apiKey;
    }
}
