package io.twinlog.tests.replication;

import io.twinlog.replication.Partition;
import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import io.twinlog.tests.KafkaRequests;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsPartitionResult;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DeleteRecordsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DeleteRecords waits for the in-sync replicas like acks=all: a follower cut off from its leader (still in the ISR)
 * holds the answer back until the request times out (REQUEST_TIMED_OUT, for acks=all produce too), and takes the
 * new log start once it fetches again, holding no request thread meanwhile (the broker's only one answers other
 * requests). Sent to a follower, the request is answered NOT_LEADER_OR_FOLLOWER.
 */
@Timeout(120)
class DeleteRecordsReplicationTest {
    private static final TopicPartition TP = new TopicPartition("trimmed", 0);

    @Test
    void answersOnceEveryInSyncReplicaMovedItsLogStart() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).withFaultProxies()
                .brokerProperty("num.io.threads", "1").build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TP.topic(), 1, (short) 3))).all().get();
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of("acks", "all"))) {
                for (int i = 0; i < 50; i++) {
                    producer.send(new ProducerRecord<>(TP.topic(), 0, null, new byte[]{(byte) i}));
                }
            }
            TopicDescription description = admin.describeTopics(List.of(TP.topic())).allTopicNames().get()
                    .get(TP.topic());
            int leader = description.partitions().get(0).leader().id();
            int follower = description.partitions().get(0).replicas().stream().filter(n -> n.id() != leader)
                    .findFirst().orElseThrow().id();
            Waits.waitUntil("every replica holds the 50 records", () -> cluster.runningBrokerIds().stream()
                    .allMatch(id -> log(cluster, id).highWatermark() == 50));

            assertEquals(Errors.NOT_LEADER_OR_FOLLOWER, deleteRecords(cluster, follower, 10, 5_000).error());

            cluster.cutNetwork(leader, follower);
            CompletableFuture<DeleteRecordsResult> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return deleteRecords(cluster, leader, 20, 6_000);
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            });
            Waits.waitUntil("the leader moved its log start", () -> log(cluster, leader).logStartOffset() == 20);
            // the broker's only request thread is not held meanwhile: the request waits in a purgatory, and the
            // leader answers Metadata and an acks=1 produce at once (decision 69)
            long began = System.nanoTime();
            try (RawKafkaConnection connection = connect(cluster, leader)) {
                MetadataResponse metadata = connection.send(new MetadataRequest.Builder(List.of(TP.topic()), false)
                        .build());
                assertEquals(Errors.NONE, metadata.errors().getOrDefault(TP.topic(), Errors.NONE));
                ProduceRequest acksOne = KafkaRequests.produce(ApiKeys.PRODUCE.latestVersion(), TP.topic(),
                        description.topicId(), 0, (short) 1, KafkaRequests.records(1, "acks-one"));
                assertEquals(Errors.NONE, Errors.forCode(KafkaRequests.onlyPartition(
                        (ProduceResponse) connection.send(acksOne)).errorCode()));
            }
            long otherRequestsMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
            assertFalse(waiting.isDone(), "DeleteRecords still waits for the cut follower");
            assertTrue(otherRequestsMs < 3_000, "other requests took " + otherRequestsMs + " ms");
            DeleteRecordsResult timedOut = waiting.get(30, TimeUnit.SECONDS);
            assertEquals(Errors.REQUEST_TIMED_OUT, timedOut.error(), "the cut follower has not moved");
            assertEquals(20, log(cluster, leader).logStartOffset());
            assertEquals(0, log(cluster, follower).logStartOffset());
            // acks=all waits in the same way: it times out with REQUEST_TIMED_OUT, never the append's success
            ProduceRequest produce = KafkaRequests.produce(ApiKeys.PRODUCE.latestVersion(), TP.topic(),
                    description.topicId(), 0, (short) -1, KafkaRequests.records(1, "unacknowledged"));
            produce.data().setTimeoutMs(1_500);
            try (RawKafkaConnection connection = connect(cluster, leader)) {
                assertEquals(Errors.REQUEST_TIMED_OUT, Errors.forCode(KafkaRequests.onlyPartition(
                        (ProduceResponse) connection.send(produce)).errorCode()));
            }

            cluster.healNetwork(leader, follower);
            Waits.waitUntil("the follower takes the new log start", () -> log(cluster, follower).logStartOffset()
                    == 20);
            DeleteRecordsResult done = deleteRecords(cluster, leader, 20, 10_000);
            assertEquals(Errors.NONE, done.error());
            assertEquals(20, done.lowWatermark());
        }
    }

    private record DeleteRecordsResult(Errors error, long lowWatermark) {
    }

    private static DeleteRecordsResult deleteRecords(TestCluster cluster, int brokerId, long offset, int timeoutMs)
            throws Exception {
        DeleteRecordsRequestData data = new DeleteRecordsRequestData().setTimeoutMs(timeoutMs).setTopics(List.of(
                new DeleteRecordsRequestData.DeleteRecordsTopic().setName(TP.topic()).setPartitions(List.of(
                        new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0)
                                .setOffset(offset)))));
        try (RawKafkaConnection connection = connect(cluster, brokerId)) {
            DeleteRecordsResponse response = connection.send(new DeleteRecordsRequest.Builder(data).build());
            DeleteRecordsPartitionResult result = response.data().topics().iterator().next().partitions().iterator()
                    .next();
            return new DeleteRecordsResult(Errors.forCode(result.errorCode()), result.lowWatermark());
        }
    }

    private static RawKafkaConnection connect(TestCluster cluster, int brokerId) throws Exception {
        return new RawKafkaConnection("127.0.0.1", cluster.broker(brokerId).boundPort("PLAINTEXT"));
    }

    private static UnifiedLog log(TestCluster cluster, int brokerId) {
        return cluster.broker(brokerId).replicaManager().partition(TP).map(Partition::log).orElseThrow();
    }
}
