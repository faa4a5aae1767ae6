package io.twinlog.tests.transactions;

import io.twinlog.tests.KafkaTools;
import io.twinlog.tests.ToolResult;
import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import io.twinlog.transaction.TransactionCoordinatorHost;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The transaction coordinator's first half (issue 26): a transactional producer finds its coordinator
 * ({@code __transaction_state} created on first use) and {@code initTransactions()} succeeds; a second instance of
 * the same transactional id bumps the epoch and the first one's id and epoch are then fenced; the state survives
 * the coordinator's broker being killed (the new leader of the partition loads it from the log and bumps from
 * there); {@code kafka-transactions.sh list} and {@code describe} show it; bad input gets Kafka's error codes.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class InitTransactionsTest {
    private static final String TXN_STATE = TransactionCoordinatorHost.TRANSACTION_STATE_TOPIC;

    @TempDir
    File workDir;

    @Test
    void initTransactionsBumpsTheEpochFencesOlderInstancesAndSurvivesTheCoordinatorsBroker() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             Admin admin = cluster.admin()) {
            long producerId;
            short firstEpoch;
            try (KafkaProducer<byte[], byte[]> first = cluster.producer(Map.of("transactional.id", "app-1"))) {
                first.initTransactions();
                TransactionDescription described = describe(admin, "app-1");
                assertEquals(TransactionState.EMPTY, described.state());
                producerId = described.producerId();
                firstEpoch = (short) described.producerEpoch();
                assertEquals(0, firstEpoch);
            }
            assertEquals(5, admin.describeTopics(List.of(TXN_STATE)).allTopicNames().get().get(TXN_STATE)
                    .partitions().size(), "created with transaction.state.log.num.partitions");
            try (KafkaProducer<byte[], byte[]> second = cluster.producer(Map.of("transactional.id", "app-1"))) {
                second.initTransactions();
            }
            TransactionDescription bumped = describe(admin, "app-1");
            assertEquals(producerId, bumped.producerId(), "the same producer id, a higher epoch");
            assertEquals(firstEpoch + 1, bumped.producerEpoch());

            // the first instance re-initializing with its old id and epoch is fenced (KIP-360's expected epoch)
            int coordinator = bumped.coordinatorId();
            InitProducerIdResponse fenced = initProducerId(cluster, coordinator, "app-1", 60_000, producerId,
                    firstEpoch);
            assertEquals(Errors.PRODUCER_FENCED, fenced.error());

            // the coordinator's broker dies: the partition's new leader loads the id from the log
            cluster.killBroker(coordinator);
            Waits.waitUntil("another broker coordinates app-1", () -> {
                try {
                    TransactionDescription d = describe(admin, "app-1");
                    return d.coordinatorId() != coordinator && d.producerEpoch() == firstEpoch + 1;
                } catch (ExecutionException e) {
                    return false; // coordinator moving: NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS
                }
            }, Duration.ofSeconds(60));
            try (KafkaProducer<byte[], byte[]> third = cluster.producer(Map.of("transactional.id", "app-1"))) {
                third.initTransactions();
            }
            TransactionDescription reloaded = describe(admin, "app-1");
            assertEquals(producerId, reloaded.producerId());
            assertEquals(firstEpoch + 2, reloaded.producerEpoch(), "bumped from the state loaded off the log");
            cluster.startBroker(coordinator);
        }
    }

    @Test
    void listsAndDescribesWithKafkasToolAndRefusesBadInputWithKafkasErrors() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).build().start();
             Admin admin = cluster.admin()) {
            for (String id : List.of("orders-1", "orders-2", "payments-1")) {
                try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("transactional.id", id))) {
                    p.initTransactions();
                }
            }
            Collection<TransactionListing> all = admin.listTransactions().all().get();
            assertEquals(3, all.size(), all.toString());
            assertTrue(all.stream().allMatch(t -> t.state() == TransactionState.EMPTY), all.toString());
            assertEquals(2, admin.listTransactions(new ListTransactionsOptions().filterOnTransactionalIdPattern(
                    "orders-.*")).all().get().size());
            assertEquals(0, admin.listTransactions(new ListTransactionsOptions().filterStates(
                    List.of(TransactionState.ONGOING))).all().get().size());

            ToolResult list = KafkaTools.run(workDir, Duration.ofSeconds(60),
                    "org.apache.kafka.tools.TransactionsCommand", null, "--bootstrap-server",
                    cluster.bootstrapServers(), "list");
            list.assertSuccess();
            assertTrue(list.stdout().contains("payments-1") && list.stdout().contains("Empty"), list.toString());
            ToolResult describe = KafkaTools.run(workDir, Duration.ofSeconds(60),
                    "org.apache.kafka.tools.TransactionsCommand", null, "--bootstrap-server",
                    cluster.bootstrapServers(), "describe", "--transactional-id", "orders-2");
            describe.assertSuccess();
            assertTrue(describe.stdout().contains("orders-2") && describe.stdout().contains("Empty"),
                    describe.toString());

            ExecutionException unknown = assertThrows(ExecutionException.class, () -> describe(admin, "nobody"));
            assertInstanceOf(TransactionalIdNotFoundException.class, unknown.getCause());
            // Kafka's error codes, nothing written
            assertEquals(Errors.INVALID_TRANSACTION_TIMEOUT,
                    initProducerId(cluster, 0, "orders-1", 900_001, -1, (short) -1).error());
            assertEquals(Errors.INVALID_REQUEST, initProducerId(cluster, 0, "orders-1", 60_000, 5, (short) -1).error());
            assertEquals(Errors.PRODUCER_FENCED, initProducerId(cluster, 0, "orders-1", 60_000,
                    describe(admin, "orders-1").producerId() + 100, (short) 0).error());
            assertEquals(0, describe(admin, "orders-1").producerEpoch(), "no refusal bumped the epoch");
        }
    }

    @Test
    void aTransactionalIdsCoordinatorIsTheLeaderOfItsPartitionByKafkasFormula() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             Admin admin = cluster.admin();
             KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("transactional.id", "where-am-i"))) {
            p.initTransactions();
            int partition = Utils.abs("where-am-i".hashCode()) % 5;
            int leader = admin.describeTopics(List.of(TXN_STATE)).allTopicNames().get().get(TXN_STATE).partitions()
                    .get(partition).leader().id();
            assertEquals(leader, describe(admin, "where-am-i").coordinatorId());
            // every broker points a FindCoordinator for it at that leader
            for (int id : List.of(0, 1, 2)) {
                try (RawKafkaConnection c = RawKafkaConnection.to(cluster.broker(id).bootstrapServers())) {
                    FindCoordinatorResponse response = c.send(new FindCoordinatorRequest.Builder(
                            new FindCoordinatorRequestData().setKeyType(FindCoordinatorRequest.CoordinatorType
                                    .TRANSACTION.id()).setCoordinatorKeys(List.of("where-am-i"))).build());
                    assertEquals(leader, response.data().coordinators().get(0).nodeId());
                }
            }
            assertNotEquals(-1, leader);
        }
    }

    private static TransactionDescription describe(Admin admin, String id) throws Exception {
        return admin.describeTransactions(List.of(id)).description(id).get();
    }

    private static InitProducerIdResponse initProducerId(TestCluster cluster, int broker, String id, int timeoutMs,
                                                         long producerId, short epoch) throws Exception {
        try (RawKafkaConnection c = RawKafkaConnection.to(cluster.broker(broker).bootstrapServers())) {
            return c.send(new InitProducerIdRequest.Builder(new InitProducerIdRequestData().setTransactionalId(id)
                    .setTransactionTimeoutMs(timeoutMs).setProducerId(producerId).setProducerEpoch(epoch))
                    .build());
        }
    }
}
