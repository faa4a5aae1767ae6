package io.twinlog.tests.transactions;

import io.twinlog.replication.Partition;
import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Bad transaction requests get Kafka's error codes and change nothing (issue 26, point 6): ending a transaction
 * that is not open (INVALID_TXN_STATE, at both transaction versions), another producer's id
 * (INVALID_PRODUCER_ID_MAPPING), an old epoch (PRODUCER_FENCED), adding partitions or committing offsets for a
 * producer the coordinator does not know (INVALID_PRODUCER_ID_MAPPING). The transactional id's state and the
 * {@code __transaction_state} and {@code __consumer_offsets} logs are as they were.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class TransactionErrorsTest {
    private static final String ID = "errors-app";

    @Test
    void badTransactionRequestsGetKafkasCodesAndWriteNothing() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("ledger", 1, (short) 1))).all().get();
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of("transactional.id", ID))) {
                producer.initTransactions();
            }
            // the group's coordinator ready (its __consumer_offsets created and loaded), as a client finds it first
            admin.listConsumerGroupOffsets("errors-group").partitionsToOffsetAndMetadata().get();
            TransactionDescription before = admin.describeTransactions(List.of(ID)).description(ID).get();
            assertEquals(TransactionState.EMPTY, before.state());
            long producerId = before.producerId();
            short epoch = (short) before.producerEpoch();
            Map<TopicPartition, Long> logEnds = internalLogEnds(cluster);

            try (RawKafkaConnection coordinator = RawKafkaConnection.to(cluster.bootstrapServers())) {
                // nothing open to end
                assertEquals(Errors.INVALID_TXN_STATE, endTxn(coordinator, producerId, epoch, true, (short) 4));
                assertEquals(Errors.INVALID_TXN_STATE, endTxn(coordinator, producerId, epoch, true, (short) 5));
                assertEquals(Errors.INVALID_TXN_STATE, endTxn(coordinator, producerId, epoch, false, (short) 4));
                // another producer's id, an old epoch
                assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, endTxn(coordinator, producerId + 1, epoch, true,
                        (short) 4));
                assertEquals(Errors.PRODUCER_FENCED, endTxn(coordinator, producerId, (short) (epoch - 1), false,
                        (short) 4));
                // adding to a transaction of a producer the coordinator does not know, or with an old epoch
                assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, addPartitions(coordinator, producerId + 1, epoch));
                assertEquals(Errors.PRODUCER_FENCED, addPartitions(coordinator, producerId, (short) (epoch - 1)));
                // offsets of a producer the coordinator does not know (verified with it first, KIP-890)
                assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, txnOffsetCommit(coordinator, producerId + 1, epoch));
            }

            TransactionDescription after = admin.describeTransactions(List.of(ID)).description(ID).get();
            assertEquals(TransactionState.EMPTY, after.state());
            assertEquals(before.producerEpoch(), after.producerEpoch());
            assertEquals(List.of(), List.copyOf(after.topicPartitions()));
            Waits.waitFor("the internal logs unchanged", () -> internalLogEnds(cluster), logEnds::equals);
        }
    }

    /** The log end of every {@code __transaction_state} and {@code __consumer_offsets} partition. */
    private static Map<TopicPartition, Long> internalLogEnds(TestCluster cluster) {
        return cluster.broker(0).replicaManager().partitions().stream()
                .filter(p -> Topic.isInternal(p.topicPartition().topic()))
                .collect(Collectors.toMap(Partition::topicPartition,
                        p -> p.log().logEndOffset()));
    }

    private static Errors endTxn(RawKafkaConnection c, long producerId, short epoch, boolean commit, short version)
            throws Exception {
        EndTxnResponse response = c.send(new EndTxnRequest.Builder(new EndTxnRequestData().setTransactionalId(ID)
                .setProducerId(producerId).setProducerEpoch(epoch).setCommitted(commit), version > 4)
                .build(version));
        return Errors.forCode(response.data().errorCode());
    }

    private static Errors addPartitions(RawKafkaConnection c, long producerId, short epoch) throws Exception {
        AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection topics =
                new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection();
        topics.add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName("ledger")
                .setPartitions(List.of(0)));
        AddPartitionsToTxnResponse response = c.send(AddPartitionsToTxnRequest.Builder.forClient(ID, producerId,
                epoch, AddPartitionsToTxnRequest.getPartitions(topics)).build((short) 3));
        return response.errors().get(AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID)
                .get(new TopicPartition("ledger", 0));
    }

    private static Errors txnOffsetCommit(RawKafkaConnection c, long producerId, short epoch) throws Exception {
        TxnOffsetCommitResponse response = c.send(new TxnOffsetCommitRequest(new TxnOffsetCommitRequestData()
                .setTransactionalId(ID).setGroupId("errors-group").setProducerId(producerId)
                .setProducerEpoch(epoch).setTopics(List.of(new TxnOffsetCommitRequestData
                        .TxnOffsetCommitRequestTopic().setName("ledger").setPartitions(List.of(
                                new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition()
                                        .setPartitionIndex(0).setCommittedOffset(5))))), (short) 4));
        return Errors.forCode(response.data().topics().get(0).partitions().get(0).errorCode());
    }
}
