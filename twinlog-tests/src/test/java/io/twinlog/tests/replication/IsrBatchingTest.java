package io.twinlog.tests.replication;

import io.twinlog.server.controller.AlterPartitionManager;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartitionInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.twinlog.tests.replication.Replication.ids;
import static io.twinlog.tests.replication.Replication.noRetries;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Many partitions changing their ISRs at once cost a few AlterPartition requests, not one each: a leader that is
 * not the controller, cut off from its follower, shrinks the ISRs of all its partitions, then expands them again
 * when the link heals, each time in a handful of batched requests.
 */
@Timeout(300)
class IsrBatchingTest {
    private static final int PARTITIONS = 100;
    private static final long LAG_TIME_MAX_MS = 2_000;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @Test
    void manyIsrChangesAtOnceGoInAFewRequests() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).withFaultProxies()
                .brokerProperty("replica.lag.time.max.ms", Long.toString(LAG_TIME_MAX_MS)).build().start();
             Admin admin = cluster.admin()) {
            int controller = admin.describeCluster().controller().get().id();
            List<Integer> others = new ArrayList<>(List.of(0, 1, 2));
            others.remove(Integer.valueOf(controller));
            int leader = others.get(0);
            int follower = others.get(1);
            Map<Integer, List<Integer>> assignment = new HashMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                assignment.put(p, List.of(leader, follower));
            }
            admin.createTopics(List.of(new NewTopic("many", assignment))).all().get();
            awaitIsrs(admin, Set.of(leader, follower));
            AlterPartitionManager isrChanges = cluster.broker(leader).alterPartitionManager();

            long before = isrChanges.requestsSent();
            cluster.cutNetwork(leader, follower);
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(noRetries("1"))) {
                for (int p = 0; p < PARTITIONS; p++) { // the follower falls behind on every partition
                    producer.send(new ProducerRecord<>("many", p, null, "x".getBytes(StandardCharsets.UTF_8)));
                }
                producer.flush();
            }
            awaitIsrs(admin, Set.of(leader));
            long shrinkRequests = isrChanges.requestsSent() - before;

            before = isrChanges.requestsSent();
            cluster.healNetwork(leader, follower);
            awaitIsrs(admin, Set.of(leader, follower));
            long expandRequests = isrChanges.requestsSent() - before;

            System.out.printf("%d partitions: ISR shrink in %d AlterPartition requests, expansion in %d%n",
                    PARTITIONS, shrinkRequests, expandRequests);
            assertTrue(shrinkRequests <= PARTITIONS / 10, shrinkRequests + " requests for " + PARTITIONS + " shrinks");
            assertTrue(expandRequests <= PARTITIONS / 10, expandRequests + " requests for " + PARTITIONS
                    + " expansions");
        }
    }

    private static void awaitIsrs(Admin admin, Set<Integer> isr) {
        Waits.waitFor("every partition's ISR is " + isr, () -> admin.describeTopics(List.of("many")).allTopicNames()
                .get().get("many"), (TopicDescription d) -> d.partitions().size() == PARTITIONS
                && d.partitions().stream().map(TopicPartitionInfo::isr).allMatch(i -> ids(i).equals(isr)), TIMEOUT);
    }
}
