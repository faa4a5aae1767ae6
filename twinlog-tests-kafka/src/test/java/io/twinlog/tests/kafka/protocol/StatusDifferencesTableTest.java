package io.twinlog.tests.kafka.protocol;

import io.twinlog.testkit.StatusDoc;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * docs/status.md's table of differences from Kafka 4.4 is {@link ExpectedDifferences#API_VERSIONS}, row for row, so
 * the table says what {@link KafkaProtocolParityTest} finds against a real Kafka 4.4 broker (decision 107): a
 * difference fixed, added or changed in the code's list and not in the document fails here with both lists. No
 * broker: the parity test holds the list to Kafka, {@code StatusApiTableTest} (twinlog-tests) the table to Twinlog.
 */
@Timeout(10)
class StatusDifferencesTableTest {
    private static final Map<String, ApiKeys> BY_NAME = Stream.of(ApiKeys.values())
            .collect(Collectors.toMap(k -> k.name, Function.identity()));

    @Test
    void theStatusTableListsExactlyTheExpectedDifferences() throws IOException {
        StatusDoc doc = StatusDoc.read();
        Set<String> documented = new TreeSet<>();
        for (StatusDoc.Difference row : doc.differences()) {
            switch (row.kind()) {
                case KAFKA_ONLY -> row.apiNames().forEach(name -> documented.add("Kafka only: " + enumName(name)));
                case TWINLOG_ONLY -> row.apiNames().forEach(name -> documented.add("Twinlog only: " + enumName(name)));
                case TWINLOG_KEYS -> documented.add("Twinlog only: Twinlog's own APIs (7000+)");
                // the parity test's wording: "SHARE_FETCH: Kafka v1-2, Twinlog v1-1"
                case VERSIONS -> row.apiNames().forEach(name -> documented.add(enumName(name) + ": Kafka "
                        + row.kafka() + ", Twinlog " + row.twinlog()));
                default -> throw new IllegalStateException("unexpected row kind " + row.kind());
            }
        }
        assertEquals(new TreeSet<>(ExpectedDifferences.API_VERSIONS.keySet()), documented,
                "ExpectedDifferences.API_VERSIONS (expected) against the differences from Kafka 4.4 in " + doc.path()
                        + " (actual)");
    }

    /** The name {@link KafkaProtocolParityTest} writes: the enum constant's (kafka-clients' own name in the doc). */
    private static String enumName(String apiName) {
        ApiKeys api = BY_NAME.get(apiName);
        return api == null ? "not a Kafka API: " + apiName : api.name();
    }
}
