package io.twinlog.tests.replication;

import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static io.twinlog.tests.replication.Replication.createTopic;
import static io.twinlog.tests.replication.Replication.noRetries;
import static io.twinlog.tests.replication.Replication.send;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code num.replica.fetchers} (Kafka's key): a follower copies one leader's partitions on that many threads, each
 * partition on one of them, and every replica ends up with every record.
 */
@Timeout(300)
class ReplicaFetchersTest {
    private static final String TOPIC = "spread";
    private static final int PARTITIONS = 12;

    @Test
    void aFollowerCopiesOneLeadersPartitionsOnSeveralFetchers() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3)
                .brokerProperty("num.replica.fetchers", "3").build().start();
             Admin admin = cluster.admin()) {
            Map<Integer, List<Integer>> assignment = new HashMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                assignment.put(p, List.of(0, 1, 2)); // broker 0 leads all: brokers 1 and 2 follow one leader
            }
            createTopic(admin, TOPIC, assignment, Map.of());
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(noRetries("all"))) {
                for (int p = 0; p < PARTITIONS; p++) {
                    for (int i = 0; i < 5; i++) {
                        send(producer, new TopicPartition(TOPIC, p), "r" + i);
                    }
                }
            }
            for (int p = 0; p < PARTITIONS; p++) {
                TopicPartition tp = new TopicPartition(TOPIC, p);
                Waits.waitUntil("5 records on every replica of " + tp,
                        () -> ReplicaLogs.logEndOffsets(cluster, tp).equals(Map.of(0, 5L, 1, 5L, 2, 5L)));
            }
            for (int follower : List.of(1, 2)) {
                assertEquals(Set.of(0, 1, 2), fetcherIds(follower, 0),
                        "broker " + follower + " copies broker 0's partitions on three fetchers");
            }
        }
    }

    /** The fetcher indices of the threads {@code follower} runs against {@code leader}. */
    private static Set<Integer> fetcherIds(int follower, int leader) {
        String prefix = "twinlog-replica-fetcher-" + follower + "-from-" + leader + "-";
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .filter(n -> n.startsWith(prefix)).map(n -> Integer.parseInt(n.substring(prefix.length())))
                .collect(Collectors.toSet());
    }
}
