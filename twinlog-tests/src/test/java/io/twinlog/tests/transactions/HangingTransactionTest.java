package io.twinlog.tests.transactions;

import io.twinlog.replication.Partition;
import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import io.twinlog.tests.KafkaRequests;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * KIP-890's verification: a transactional write that reaches a partition leader after its transaction ended (a
 * Produce held back in the network, a zombie's retry) must not open a new transaction there, since no coordinator
 * would ever end it and the partition's last stable offset, and with it every read_committed consumer, would stay
 * behind it for good. The leader asks the producer's coordinator first (AddPartitionsToTxn v5 between brokers) and
 * refuses the write: TRANSACTION_ABORTABLE for a producer that knows it (Produce v11), INVALID_TXN_STATE for one that
 * does not (v10), INVALID_PRODUCER_EPOCH for a transaction version 2 producer's write of before the end's epoch bump
 * (v12). Nothing is appended and the partition keeps no open transaction.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class HangingTransactionTest {
    private static final String TOPIC = "payments";
    private static final String ID = "late-writer";

    @Test
    void aWriteAfterItsTransactionEndedIsRefusedAndOpensNoTransaction() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(2).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(0, 1), 1, List.of(1, 0)))))
                    .all().get();
            Uuid topicId = admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC).topicId();
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of("transactional.id", ID))) {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(TOPIC, 0, null, bytes("committed"))).get();
                producer.commitTransaction();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(TOPIC, 1, null, bytes("aborted"))).get();
                producer.abortTransaction();
            }
            // EndTxn is answered before the markers are written: wait for them
            Waits.waitUntil("the abort completed", () -> admin.describeTransactions(List.of(ID)).description(ID)
                    .get().state() == TransactionState.COMPLETE_ABORT);
            short epoch = (short) admin.describeTransactions(List.of(ID)).description(ID).get().producerEpoch();
            long producerId = admin.describeTransactions(List.of(ID)).description(ID).get().producerId();
            TopicPartition p0 = new TopicPartition(TOPIC, 0);
            TopicPartition p1 = new TopicPartition(TOPIC, 1);

            // partition 0 was only in the committed transaction, partition 1 in the aborted one. A producer that
            // keeps its epoch (transaction version 1, Produce up to v11): its late batch reaches each leader with no
            // transaction open for it, and the coordinator says the partition is in no open transaction
            assertEquals(Errors.TRANSACTION_ABORTABLE, lateWrite(cluster, 0, p0, topicId, producerId, epoch,
                    (short) 11));
            assertEquals(Errors.INVALID_TXN_STATE, lateWrite(cluster, 1, p1, topicId, producerId, epoch, (short) 10));
            assertEquals(Errors.TRANSACTION_ABORTABLE, lateWrite(cluster, 1, p1, topicId, producerId, epoch,
                    (short) 11));
            // a transaction version 2 producer (Produce v12, whose leader adds the partition for it): the delayed
            // batch of the aborted transaction carries the epoch before the abort's bump, which partition 1 (from
            // the abort's marker) and the coordinator (for partition 0, never in that transaction) both refuse
            short beforeAbort = (short) (epoch - 1);
            assertEquals(Errors.INVALID_PRODUCER_EPOCH, lateWrite(cluster, 1, p1, topicId, producerId, beforeAbort,
                    (short) 12));
            assertEquals(Errors.INVALID_PRODUCER_EPOCH, lateWrite(cluster, 0, p0, topicId, producerId, beforeAbort,
                    (short) 12));

            for (int broker = 0; broker < 2; broker++) {
                TopicPartition tp = broker == 0 ? p0 : p1;
                Partition leader = cluster.broker(broker).replicaManager().partition(tp).orElseThrow();
                assertEquals(2, leader.log().logEndOffset(), tp + ": one record and its marker, nothing more");
                assertEquals(leader.log().logEndOffset(), leader.log().lastStableOffset(),
                        tp + ": no transaction holds the last stable offset");
                List<ProducerState> producers = admin.describeProducers(List.of(tp)).partitionResult(tp).get()
                        .activeProducers();
                assertTrue(producers.stream().noneMatch(p -> p.currentTransactionStartOffset().isPresent()),
                        tp + " " + producers);
            }
        }
    }

    /** A transactional batch of the producer sent straight to {@code broker}, the leader of {@code tp}. */
    private static Errors lateWrite(TestCluster cluster, int broker, TopicPartition tp, Uuid topicId, long producerId,
                                    short epoch, short version) throws Exception {
        MemoryRecords records = MemoryRecords.withTransactionalRecords(Compression.NONE, producerId, epoch, 1,
                new SimpleRecord(bytes("late")));
        ProduceRequest request = KafkaRequests.produce(version, tp.topic(), topicId, tp.partition(), (short) -1,
                records);
        request.data().setTransactionalId(ID);
        try (RawKafkaConnection leader = RawKafkaConnection.to("127.0.0.1:"
                + cluster.broker(broker).boundPort("PLAINTEXT"))) {
            ProduceResponse response = leader.send(request);
            return Errors.forCode(KafkaRequests.onlyPartition(response).errorCode());
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
