package io.twinlog.tests.transactions;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.twinlog.tests.transactions.TransactionalRecords.WAIT;
import static io.twinlog.tests.transactions.TransactionalRecords.causedBy;
import static io.twinlog.tests.transactions.TransactionalRecords.readAll;
import static io.twinlog.tests.transactions.TransactionalRecords.record;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The transaction coordinator's failures, with real clients on 3 brokers: its broker killed while a transaction is
 * open (the new coordinator loads it, the producer's next instance has it aborted with markers, read_committed
 * readers move on) or right after a commit (the new coordinator completes what was committed: nothing lost, nothing
 * doubled); a transaction left open by a producer that went away is aborted after its timeout and that producer is
 * fenced.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class CoordinatorFailoverTest {

    @Test
    void anOpenTransactionOfAKilledCoordinatorIsAbortedByTheNextInstanceAndACommittedOneCompleted()
            throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("orders", 3, (short) 3))).all().get();
            KafkaProducer<byte[], byte[]> first = cluster.producer(Map.of("transactional.id", "orders-app"));
            first.initTransactions();
            first.beginTransaction();
            for (int i = 0; i < 20; i++) {
                first.send(record("orders", "open-" + i));
            }
            first.flush();
            int coordinator = describe(admin, "orders-app").coordinatorId();
            assertEquals(TransactionState.ONGOING, describe(admin, "orders-app").state());
            cluster.killBroker(coordinator);
            first.close(Duration.ZERO);

            // the next instance: its InitProducerId has the open transaction aborted, then it commits its own
            try (KafkaProducer<byte[], byte[]> second = cluster.producer(Map.of("transactional.id", "orders-app"))) {
                second.initTransactions();
                second.beginTransaction();
                for (int i = 0; i < 20; i++) {
                    second.send(record("orders", "committed-" + i));
                }
                second.commitTransaction();
                int newCoordinator = describe(admin, "orders-app").coordinatorId();
                // the coordinator of the commit dies right after it: its successor completes the markers
                cluster.startBroker(coordinator);
                cluster.killBroker(newCoordinator);
                List<String> seen = readAll(cluster, "orders", "read_committed", 20);
                assertEquals(20, seen.size(), seen.toString());
                assertTrue(seen.stream().allMatch(v -> v.startsWith("committed-")), seen.toString());
                Waits.waitUntil("the commit completed by the new coordinator", () -> stateOrNull(admin,
                        "orders-app") == TransactionState.COMPLETE_COMMIT, WAIT);
                cluster.startBroker(newCoordinator);
            }
        }
    }

    /**
     * A commit whose markers cannot be written yet (its only partition's one replica is down) stays in
     * PREPARE_COMMIT; the coordinator dies; the next one loads it, keeps sending the markers, and once the
     * partition is back the records are visible and the transaction completes.
     */
    @Test
    void aCommitLeftInPrepareByADeadCoordinatorIsCompletedByTheNextOne() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             Admin admin = cluster.admin();
             KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of("transactional.id", "held-app"))) {
            producer.initTransactions();
            int coordinator = describe(admin, "held-app").coordinatorId();
            int holder = (coordinator + 1) % 3;
            admin.createTopics(List.of(new NewTopic("held", Map.of(0, List.of(holder))))).all().get();
            producer.beginTransaction();
            producer.send(record("held", "committed-while-down")).get();
            cluster.killBroker(holder);
            producer.commitTransaction(); // PREPARE_COMMIT is written; the marker waits for the partition
            Waits.waitUntil("the commit prepared, its marker not written", () ->
                    stateOrNull(admin, "held-app") == TransactionState.PREPARE_COMMIT, WAIT);
            cluster.killBroker(coordinator);
            cluster.startBroker(holder);
            Waits.waitUntil("the next coordinator completed the commit", () ->
                    stateOrNull(admin, "held-app") == TransactionState.COMPLETE_COMMIT, WAIT);
            assertEquals(List.of("committed-while-down"), readAll(cluster, "held", "read_committed", 1));
            cluster.startBroker(coordinator);
        }
    }

    @Test
    void aTransactionLeftOpenIsAbortedAfterItsTimeoutAndItsProducerFenced() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3)
                .brokerProperty("transaction.abort.timed.out.transaction.cleanup.interval.ms", "500").build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("events", 1, (short) 3))).all().get();
            KafkaProducer<byte[], byte[]> gone = cluster.producer(Map.of("transactional.id", "events-app",
                    "transaction.timeout.ms", 3_000));
            try {
                gone.initTransactions();
                gone.beginTransaction();
                gone.send(record("events", "never-committed")).get();
                short epoch = (short) describe(admin, "events-app").producerEpoch();
                // another producer's committed record behind the open transaction is held back until it ends
                try (KafkaProducer<byte[], byte[]> other = cluster.producer(Map.of("transactional.id", "other"))) {
                    other.initTransactions();
                    other.beginTransaction();
                    other.send(record("events", "committed-behind")).get();
                    other.commitTransaction();
                }
                Waits.waitUntil("the open transaction aborted after its timeout", () ->
                        stateOrNull(admin, "events-app") == TransactionState.COMPLETE_ABORT, WAIT);
                assertEquals(epoch + 1, describe(admin, "events-app").producerEpoch(), "its epoch was fenced");
                List<String> seen = readAll(cluster, "events", "read_committed", 1);
                assertEquals(List.of("committed-behind"), seen);
                // the late commit is refused: at transaction version 1 as fenced; at 2 (the default) the producer's
                // epoch is one below the id's, which Kafka 4.4 takes for a retry of an end, and committing an
                // aborted transaction is INVALID_TXN_STATE
                Exception refused = assertThrows(Exception.class, gone::commitTransaction);
                assertTrue(causedBy(refused, ProducerFencedException.class)
                        || causedBy(refused, InvalidTxnStateException.class), refused.toString());
            } finally {
                gone.close(Duration.ZERO);
            }
        }
    }

    private static TransactionDescription describe(Admin admin, String id) throws Exception {
        return admin.describeTransactions(List.of(id)).description(id).get();
    }

    private static TransactionState stateOrNull(Admin admin, String id) throws Exception {
        try {
            return describe(admin, id).state();
        } catch (ExecutionException e) {
            return null; // the coordinator is moving
        }
    }}
