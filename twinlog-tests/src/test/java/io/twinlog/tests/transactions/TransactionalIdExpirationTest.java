package io.twinlog.tests.transactions;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import io.twinlog.transaction.TransactionCoordinatorHost;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.twinlog.tests.transactions.TransactionalRecords.record;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * {@code transactional.id.expiration.ms}: an id unused for longer is forgotten (a tombstone in
 * {@code __transaction_state}, DescribeTransactions answers TRANSACTIONAL_ID_NOT_FOUND) and stays forgotten when
 * another broker loads the partition; the id's next producer starts afresh with a new producer id. An id in use is
 * kept.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class TransactionalIdExpirationTest {
    @Test
    void anIdleTransactionalIdIsForgottenAndStartsAfreshAndAnIdInUseIsKept() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3)
                .brokerProperty("transactional.id.expiration.ms", "3000")
                .brokerProperty("transaction.remove.expired.transaction.cleanup.interval.ms", "500").build().start();
             Admin admin = cluster.admin()) {
            long firstProducerId;
            try (KafkaProducer<byte[], byte[]> idle = cluster.producer(Map.of("transactional.id", "idle-app"))) {
                idle.initTransactions();
                firstProducerId = describe(admin, "idle-app").producerId();
            }
            admin.createTopics(List.of(new NewTopic("work", 1, (short) 3))).all().get();
            try (KafkaProducer<byte[], byte[]> busy = cluster.producer(Map.of("transactional.id", "busy-app"))) {
                busy.initTransactions();
                busy.beginTransaction();
                busy.send(record("work", "in-flight")).get(); // a transaction open: never expired
                Waits.waitUntil("idle-app forgotten", () -> notFound(admin, "idle-app"), Duration.ofSeconds(60));
                assertEquals(TransactionState.ONGOING, describe(admin, "busy-app").state());
                busy.abortTransaction();
            }
            // the tombstone holds when another broker loads the partition
            int partition = Utils.abs("idle-app".hashCode()) % 5;
            int coordinatorOfIdle = admin.describeTopics(List.of(TransactionCoordinatorHost.TRANSACTION_STATE_TOPIC))
                    .allTopicNames().get().get(TransactionCoordinatorHost.TRANSACTION_STATE_TOPIC).partitions()
                    .get(partition).leader().id();
            cluster.killBroker(coordinatorOfIdle);
            Waits.waitUntil("idle-app still unknown after the partition moved", () -> notFound(admin, "idle-app"),
                    Duration.ofSeconds(60));
            cluster.startBroker(coordinatorOfIdle);
            try (KafkaProducer<byte[], byte[]> again = cluster.producer(Map.of("transactional.id", "idle-app"))) {
                again.initTransactions();
                TransactionDescription fresh = describe(admin, "idle-app");
                assertNotEquals(firstProducerId, fresh.producerId(), "a new producer id");
                assertEquals(0, fresh.producerEpoch());
            }
        }
    }

    private static TransactionDescription describe(Admin admin, String id) throws Exception {
        return admin.describeTransactions(List.of(id)).description(id).get();
    }

    private static boolean notFound(Admin admin, String id) throws Exception {
        try {
            describe(admin, id);
            return false;
        } catch (ExecutionException e) {
            return e.getCause() instanceof TransactionalIdNotFoundException;
        }
    }
}
