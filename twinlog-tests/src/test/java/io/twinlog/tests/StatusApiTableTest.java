package io.twinlog.tests;

import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.StatusDoc;
import io.twinlog.testkit.TestCluster;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/status.md's table of the APIs served is what a broker advertises in ApiVersions, no more and no less, and its
 * table of differences from Kafka 4.4 agrees with it (decision 107): an API registered without a row, or a row left
 * behind, fails here with the names. What Kafka 4.4 serves is compared with a real Kafka broker by
 * twinlog-tests-kafka ({@code KafkaProtocolParityTest}, whose listed differences {@code StatusDifferencesTableTest}
 * holds against the same table).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class StatusApiTableTest {
    private static final Map<String, ApiKeys> BY_NAME = Stream.of(ApiKeys.values())
            .collect(Collectors.toMap(k -> k.name, Function.identity()));
    /** What a 1-broker cluster advertises (share.version at its default, 1: share-group APIs included). */
    private static Map<Integer, ApiVersionsResponseData.ApiVersion> advertised;

    @BeforeAll
    static void askApiVersions() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).build().start();
             RawKafkaConnection connection = RawKafkaConnection.to(cluster.broker(0).bootstrapServers())) {
            ApiVersionsResponse response = connection.send(
                    KafkaRequests.apiVersions(ApiKeys.API_VERSIONS.latestVersion()));
            assertEquals(Errors.NONE, Errors.forCode(response.data().errorCode()));
            advertised = new TreeMap<>();
            response.data().apiKeys().forEach(v -> advertised.put((int) v.apiKey(), v));
        }
    }

    @Test
    void theServedTableListsExactlyTheAdvertisedApis() throws Exception {
        StatusDoc doc = StatusDoc.read();

        Set<String> advertisedNames = new TreeSet<>();
        Set<Integer> twinlogKeys = new TreeSet<>();
        advertised.keySet().forEach(key -> {
            if (ApiKeys.hasId(key)) {
                advertisedNames.add(ApiKeys.forId(key).name);
            } else {
                twinlogKeys.add(key);
            }
        });
        Set<String> documented = new TreeSet<>(doc.servedApiNames());
        List<String> problems = new ArrayList<>();
        Set<String> notApis = new TreeSet<>(documented);
        notApis.removeAll(BY_NAME.keySet());
        if (!notApis.isEmpty()) {
            problems.add("rows naming no Kafka API (kafka-clients' ApiKeys names): " + notApis);
        }
        Set<String> undocumented = new TreeSet<>(advertisedNames);
        undocumented.removeAll(documented);
        if (!undocumented.isEmpty()) {
            problems.add("APIs advertised but not in the table: " + undocumented);
        }
        Set<String> notAdvertised = new TreeSet<>(documented);
        notAdvertised.removeAll(advertisedNames);
        notAdvertised.removeAll(notApis);
        if (!notAdvertised.isEmpty()) {
            problems.add("rows naming APIs the broker does not advertise: " + notAdvertised);
        }
        StatusDoc.KeyRange range = doc.servedTwinlogKeys().orElse(new StatusDoc.KeyRange(1, 0));
        Set<Integer> documentedKeys = new TreeSet<>();
        for (int key = range.first(); key <= range.last(); key++) {
            documentedKeys.add(key);
        }
        if (!documentedKeys.equals(twinlogKeys)) {
            problems.add("the row 'Twinlog APIs " + range.first() + "-" + range.last() + "' against Twinlog's own "
                    + "keys advertised " + twinlogKeys);
        }
        assertTrue(problems.isEmpty(), doc.path() + ", \"Kafka APIs served\", differs from ApiVersions: "
                + String.join("; ", problems));
    }

    /**
     * The Twinlog side of each difference: a Kafka-only API is not advertised, a Twinlog-only one is, and a version
     * difference states the range advertised. (Kafka's side: twinlog-tests-kafka.)
     */
    @Test
    void theDifferencesTableAgreesWithWhatIsAdvertised() throws Exception {
        StatusDoc doc = StatusDoc.read();
        List<String> problems = new ArrayList<>();
        for (StatusDoc.Difference row : doc.differences()) {
            for (String name : row.apiNames()) {
                ApiKeys api = BY_NAME.get(name);
                if (api == null) {
                    problems.add(name + " is no Kafka API");
                    continue;
                }
                ApiVersionsResponseData.ApiVersion served = advertised.get((int) api.id);
                switch (row.kind()) {
                    case KAFKA_ONLY -> {
                        if (served != null) {
                            problems.add(name + " is listed as Kafka only but advertised v" + served.minVersion()
                                    + "-" + served.maxVersion());
                        }
                    }
                    case TWINLOG_ONLY -> {
                        if (served == null) {
                            problems.add(name + " is listed as Twinlog only but not advertised");
                        }
                    }
                    case VERSIONS -> {
                        StatusDoc.VersionRange listed = row.twinlog();
                        if (served == null || served.minVersion() != listed.min()
                                || served.maxVersion() != listed.max()) {
                            problems.add(name + " is listed at Twinlog " + listed + " but advertised "
                                    + (served == null ? "not at all"
                                    : "v" + served.minVersion() + "-" + served.maxVersion()));
                        }
                    }
                    default -> problems.add(name + ": unexpected row kind " + row.kind());
                }
            }
            if (row.kind() == StatusDoc.Kind.TWINLOG_KEYS) {
                Set<Integer> own = new TreeSet<>();
                advertised.keySet().stream().filter(key -> !ApiKeys.hasId(key)).forEach(own::add);
                if (own.isEmpty() || !own.stream().allMatch(key -> row.twinlogKeys().contains(key))) {
                    problems.add("'API keys " + row.twinlogKeys().first() + "-" + row.twinlogKeys().last()
                            + "' against Twinlog's own keys advertised " + own);
                }
            }
        }
        assertTrue(problems.isEmpty(), doc.path() + ", the differences from Kafka 4.4, against ApiVersions: "
                + String.join("; ", problems));
    }
}
