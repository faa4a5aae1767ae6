package io.twinlog.tests;

import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.FetchSessionHandler;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.utils.internals.LogContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fetch sessions (KIP-227), driven by kafka-clients' own {@link FetchSessionHandler} as consumers and Twinlog's
 * followers drive them: after a full request, an incremental one names only what changed and the answer carries
 * only the partitions with something new; a stale epoch or an unknown session gets Kafka's errors; with no cache
 * slots the broker serves full requests without a session.
 */
@Timeout(60)
class FetchSessionsTest {
    private static final String TOPIC = "sessions";
    private static final int PARTITIONS = 3;
    private static final short VERSION = ApiKeys.FETCH.latestVersion();

    @Test
    void anIncrementalFetchAnswersOnlyThePartitionsWithNewRecords() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).build().start();
             Admin admin = cluster.admin()) {
            Uuid topicId = createAndFill(cluster, admin);
            int broker = cluster.runningBrokerIds().get(0);
            FetchSessionHandler session = new FetchSessionHandler(new LogContext(), broker);
            try (RawKafkaConnection connection = RawKafkaConnection.to(cluster.bootstrapServers())) {
                FetchResponse full = fetch(connection, session, topicId, Map.of(0, 0L, 1, 0L, 2, 0L));
                assertNotEquals(FetchMetadata.INVALID_SESSION_ID, full.sessionId(), "the broker opened a session");
                assertEquals(Map.of(0, 5, 1, 5, 2, 5), recordCounts(full));

                FetchResponse nothingNew = fetch(connection, session, topicId, Map.of(0, 5L, 1, 5L, 2, 5L));
                assertEquals(full.sessionId(), nothingNew.sessionId());
                assertEquals(Map.of(), recordCounts(nothingNew), "no partition had anything new");

                produce(cluster, 1, 2);
                FetchResponse one = fetch(connection, session, topicId, Map.of(0, 5L, 1, 5L, 2, 5L));
                assertEquals(Map.of(1, 2), recordCounts(one), "only the partition written to, with its 2 records");

                FetchRequest staleEpoch = FetchRequest.Builder.forConsumer(VERSION, 0, 1, Map.of())
                        .metadata(new FetchMetadata(full.sessionId(), 1)).build(VERSION);
                assertEquals(Errors.INVALID_FETCH_SESSION_EPOCH, connection.<FetchResponse>send(staleEpoch).error());
                FetchRequest unknown = FetchRequest.Builder.forConsumer(VERSION, 0, 1, Map.of())
                        .metadata(new FetchMetadata(full.sessionId() + 1, 1)).build(VERSION);
                assertEquals(Errors.FETCH_SESSION_ID_NOT_FOUND, connection.<FetchResponse>send(unknown).error());
            }
        }
    }

    @Test
    void withoutCacheSlotsEveryFetchIsAFullOneWithoutASession() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1)
                .brokerProperty("max.incremental.fetch.session.cache.slots", "0").build().start();
             Admin admin = cluster.admin()) {
            Uuid topicId = createAndFill(cluster, admin);
            FetchSessionHandler session = new FetchSessionHandler(new LogContext(), cluster.runningBrokerIds().get(0));
            try (RawKafkaConnection connection = RawKafkaConnection.to(cluster.bootstrapServers())) {
                for (int round = 0; round < 2; round++) {
                    FetchResponse response = fetch(connection, session, topicId, Map.of(0, 0L, 1, 0L, 2, 0L));
                    assertEquals(FetchMetadata.INVALID_SESSION_ID, response.sessionId());
                    assertEquals(Map.of(0, 5, 1, 5, 2, 5), recordCounts(response), "round " + round);
                }
            }
        }
    }

    private static Uuid createAndFill(TestCluster cluster, Admin admin) throws Exception {
        admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
        for (int p = 0; p < PARTITIONS; p++) {
            produce(cluster, p, 5);
        }
        return KafkaRequests.topicId(admin, TOPIC);
    }

    private static void produce(TestCluster cluster, int partition, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(TOPIC, partition, null, ("v" + i).getBytes())).get();
            }
        }
    }

    /** One request of the session at these fetch offsets (what a consumer at these positions sends), answered. */
    private static FetchResponse fetch(RawKafkaConnection connection, FetchSessionHandler session, Uuid topicId,
                                       Map<Integer, Long> offsets) throws Exception {
        FetchSessionHandler.Builder builder = session.newBuilder();
        offsets.forEach((partition, offset) -> builder.add(new TopicPartition(TOPIC, partition),
                new FetchRequest.PartitionData(topicId, offset, -1L, 1 << 20, Optional.empty())));
        FetchSessionHandler.FetchRequestData data = builder.build();
        FetchRequest request = FetchRequest.Builder.forConsumer(VERSION, 0, 1, data.toSend())
                .removed(data.toForget()).replaced(data.toReplace()).metadata(data.metadata()).build(VERSION);
        FetchResponse response = connection.send(request);
        assertEquals(Errors.NONE, response.error(), "top-level error of " + response.data());
        assertTrue(session.handleResponse(response, VERSION), "kafka-clients' handler takes the answer");
        return response;
    }

    /** Records per partition in the answer, for the partitions it carries. */
    private static Map<Integer, Integer> recordCounts(FetchResponse response) {
        Map<Integer, Integer> counts = new TreeMap<>();
        for (FetchResponseData.FetchableTopicResponse topic : response.data().responses()) {
            for (FetchResponseData.PartitionData p : topic.partitions()) {
                int[] n = {0};
                FetchResponse.recordsOrFail(p).records().forEach(r -> n[0]++);
                counts.put(p.partitionIndex(), n[0]);
            }
        }
        return counts;
    }
}
