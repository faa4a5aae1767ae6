package io.twinlog.tests;

import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * InitProducerId never waits for ZooKeeper: with the broker cut off it, ids of the claimed block are still served,
 * and once the block is used up every request is answered at once with COORDINATOR_LOAD_IN_PROGRESS (retriable),
 * not held; after ZooKeeper is back, ids are served again, all distinct.
 */
@Timeout(300)
class ProducerIdsWithoutZooKeeperTest {

    @Test
    void producerIdRequestsAreAnsweredAtOnceWhileZooKeeperIsUnreachable() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(1).withFaultProxies()
                .brokerProperty("zookeeper.session.timeout.ms", "30000").build().start();
             RawKafkaConnection connection = RawKafkaConnection.to(cluster.bootstrapServers())) {
            connection.readTimeout(Duration.ofSeconds(5)); // a request held behind ZooKeeper fails the test
            Set<Long> ids = new HashSet<>();
            ids.add(Waits.waitFor("the first block of producer ids claimed", () -> initProducerId(connection),
                    r -> r.error() == Errors.NONE).data().producerId());
            cluster.cutZooKeeper(0);
            int refused = 0;
            for (int i = 0; i < 1_200; i++) {
                InitProducerIdResponse r = initProducerId(connection);
                if (r.error() == Errors.NONE) {
                    assertTrue(ids.add(r.data().producerId()), "id " + r.data().producerId() + " handed out twice");
                } else {
                    assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS, r.error());
                    refused++;
                }
            }
            assertTrue(refused > 0, "1,200 ids were served from one block of 1,000 without ZooKeeper");

            cluster.healZooKeeper(0);
            InitProducerIdResponse again = Waits.waitFor("producer ids served again", () -> initProducerId(connection),
                    r -> r.error() == Errors.NONE);
            assertTrue(ids.add(again.data().producerId()), "a new block starts after every id handed out");
        }
    }

    private static InitProducerIdResponse initProducerId(RawKafkaConnection connection) throws Exception {
        return connection.send(new InitProducerIdRequest.Builder(new InitProducerIdRequestData()
                .setTransactionalId(null).setTransactionTimeoutMs(60_000)).build());
    }
}
