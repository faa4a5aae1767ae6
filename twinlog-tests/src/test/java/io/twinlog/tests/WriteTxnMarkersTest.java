package io.twinlog.tests;

import io.twinlog.replication.Partition;
import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * WriteTxnMarkers, what a transaction coordinator sends partition leaders to end a transaction (served as Kafka
 * serves it). The test appends two open transactions straight into the leader's partition, as verified producer
 * appends would leave them, with no coordinator involved, then ends one with COMMIT and one with ABORT through the API over the wire: the last stable offset
 * moves, read_committed consumers see the committed records only, and the producers have no open transaction
 * left. A marker from an older coordinator epoch is refused by the log (TRANSACTION_COORDINATOR_FENCED), a follower
 * answers NOT_LEADER_OR_FOLLOWER, an unknown partition UNKNOWN_TOPIC_OR_PARTITION.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class WriteTxnMarkersTest {
    private static final String TOPIC = "ledger";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final long COMMITTED = 4_001;
    private static final long ABORTED = 4_002;
    private static final int COORDINATOR_EPOCH = 5;

    @Test
    void markersEndOpenTransactionsAsTheirCoordinatorDecided() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(2).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(0, 1))))).all().get();
            Waits.waitUntil("both replicas in the ISR", () -> admin.describeTopics(List.of(TOPIC)).allTopicNames()
                    .get().get(TOPIC).partitions().get(0).isr().size() == 2);
            Partition leader = cluster.broker(0).replicaManager().partition(TP).orElseThrow();
            // as a produce whose transaction its coordinator confirmed (KIP-890) appends them
            leader.appendRecordsToLeader(transactional(COMMITTED, "committed"), (short) -1,
                    leader.maybeStartTransactionVerification(COMMITTED, 0, (short) 0, false));
            leader.appendRecordsToLeader(transactional(ABORTED, "aborted"), (short) -1,
                    leader.maybeStartTransactionVerification(ABORTED, 0, (short) 0, false));
            Waits.waitUntil("6 records replicated, the last stable offset held at the first open transaction",
                    () -> leader.log().highWatermark() == 6 && leader.log().lastStableOffset() == 0);

            try (RawKafkaConnection toLeader = RawKafkaConnection.to(address(cluster, 0));
                 RawKafkaConnection toFollower = RawKafkaConnection.to(address(cluster, 1))) {
                assertEquals(Errors.NOT_LEADER_OR_FOLLOWER, outcome(toFollower, COMMITTED, true, COORDINATOR_EPOCH,
                        TOPIC));
                assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, outcome(toLeader, COMMITTED, true,
                        COORDINATOR_EPOCH, "no-such-topic"));
                assertEquals(Errors.NONE, outcome(toLeader, COMMITTED, true, COORDINATOR_EPOCH, TOPIC));
                assertEquals(Errors.NONE, outcome(toLeader, ABORTED, false, COORDINATOR_EPOCH, TOPIC));
                assertEquals(Errors.TRANSACTION_COORDINATOR_FENCED, outcome(toLeader, ABORTED, false,
                        COORDINATOR_EPOCH - 2, TOPIC), "a deposed coordinator's marker");
            }

            assertEquals(8, leader.log().logEndOffset(), "6 records and 2 markers");
            assertEquals(8, leader.log().lastStableOffset(), "no open transaction holds the last stable offset");
            assertEquals(List.of("committed-0", "committed-1", "committed-2"), readCommitted(cluster));
            List<ProducerState> producers = admin.describeProducers(List.of(TP)).partitionResult(TP).get()
                    .activeProducers();
            assertTrue(producers.stream().noneMatch(p -> p.currentTransactionStartOffset().isPresent())
                    && producers.stream().allMatch(p -> p.coordinatorEpoch().orElse(-1) == COORDINATOR_EPOCH),
                    producers.toString());
        }
    }

    /** An open transaction of three records of producer {@code producerId}, epoch 0. */
    private static MemoryRecords transactional(long producerId, String prefix) {
        SimpleRecord[] records = new SimpleRecord[3];
        for (int i = 0; i < 3; i++) {
            records[i] = new SimpleRecord((prefix + "-" + i).getBytes(StandardCharsets.UTF_8));
        }
        return MemoryRecords.withTransactionalRecords(Compression.NONE, producerId, (short) 0, 0, records);
    }

    /** One marker for {@code topic}-0 sent as a coordinator would (v1: transaction version 0). */
    private static Errors outcome(RawKafkaConnection connection, long producerId, boolean commit, int coordinatorEpoch,
                                  String topic) throws Exception {
        WriteTxnMarkersRequestData data = new WriteTxnMarkersRequestData();
        data.markers().add(new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(producerId)
                .setProducerEpoch((short) 0).setTransactionResult(commit).setCoordinatorEpoch(coordinatorEpoch)
                .setTopics(List.of(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName(topic)
                        .setPartitionIndexes(List.of(0)))));
        WriteTxnMarkersResponse response = connection.send(new WriteTxnMarkersRequest.Builder(data).build((short) 1));
        WriteTxnMarkersResponseData.WritableTxnMarkerResult result = response.data().markers().get(0);
        assertEquals(producerId, result.producerId());
        return Errors.forCode(result.topics().get(0).partitions().get(0).errorCode());
    }

    private static String address(TestCluster cluster, int broker) {
        return "127.0.0.1:" + cluster.broker(broker).boundPort("PLAINTEXT");
    }

    private static List<String> readCommitted(TestCluster cluster) {
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of("isolation.level", "read_committed"))) {
            consumer.assign(List.of(TP));
            consumer.seekToBeginning(List.of(TP));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (consumer.position(TP) < 8 && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(new String(r.value(), StandardCharsets.UTF_8));
                }
            }
        }
        return values;
    }
}
