package io.twinlog.tests.kafka.protocol;

import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Where Twinlog answers differently from Apache Kafka 4.4 on purpose, each with its reason (the same list is
 * docs/status.md's table of differences from Kafka 4.4, held to this one by {@link StatusDifferencesTableTest}).
 * {@link KafkaProtocolParityTest} fails on a difference missing here and on an entry here that is no longer a
 * difference.
 */
final class ExpectedDifferences {
    /** ApiVersions: difference (as the test words it) → reason. */
    static final Map<String, String> API_VERSIONS = new HashMap<>();

    /** Version-matrix answers whose error codes differ from Kafka's: "API vN" → reason. */
    static final Map<String, String> ANSWERS = new HashMap<>();

    /** APIs Kafka 4.4's brokers do not serve: the error codes of Twinlog's answer to the representative request. */
    static final Map<ApiKeys, Map<Errors, Integer>> TWINLOG_ONLY_ANSWERS = Map.of(
            // the representative ISR change comes from a broker epoch no broker has: fenced, as Kafka's controller
            // fences it (the response also counts its top-level NONE)
            ApiKeys.ALTER_PARTITION, Map.of(Errors.NONE, 1, Errors.STALE_BROKER_EPOCH, 1));

    static {
        kafkaOnly("metadata lives in ZooKeeper: no KRaft quorum or controller registrations; "
                        + "feature levels are written to the /feature node (decision 87)",
                ApiKeys.DESCRIBE_QUORUM, ApiKeys.ADD_RAFT_VOTER, ApiKeys.REMOVE_RAFT_VOTER,
                ApiKeys.UNREGISTER_CONTROLLER, ApiKeys.UPDATE_FEATURES);
        kafkaOnly("no delegation tokens",
                ApiKeys.CREATE_DELEGATION_TOKEN,
                ApiKeys.RENEW_DELEGATION_TOKEN, ApiKeys.EXPIRE_DELEGATION_TOKEN, ApiKeys.DESCRIBE_DELEGATION_TOKEN);
        kafkaOnly("no Kafka Streams groups (KIP-1071)", ApiKeys.STREAMS_GROUP_HEARTBEAT,
                ApiKeys.STREAMS_GROUP_DESCRIBE, ApiKeys.STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE);
        kafkaOnly("replicas are not moved between a broker's log dirs",
                ApiKeys.ALTER_REPLICA_LOG_DIRS);
        API_VERSIONS.put("Twinlog only: " + ApiKeys.ALTER_PARTITION.name(), "inter-broker: leaders send ISR changes "
                + "to the controller, which is a broker (decisions 4 and 11), and Twinlog's inter-broker client "
                + "negotiates versions through ApiVersions; Kafka's brokers send it to the KRaft controller");
        API_VERSIONS.put("Twinlog only: Twinlog's own APIs (7000+)", "cluster mirrors (decision 14); Kafka clients "
                + "ignore API keys they do not know");
    }

    private ExpectedDifferences() {
    }

    private static void kafkaOnly(String reason, ApiKeys... apis) {
        for (ApiKeys api : List.of(apis)) {
            API_VERSIONS.put("Kafka only: " + api.name(), reason);
        }
    }
}
