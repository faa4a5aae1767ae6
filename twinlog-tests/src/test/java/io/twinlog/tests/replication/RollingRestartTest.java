package io.twinlog.tests.replication;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;

import static io.twinlog.tests.replication.Replication.assertAckedRecordsReadable;
import static io.twinlog.tests.replication.Replication.awaitIsr;
import static io.twinlog.tests.replication.Replication.awaitLeaderIn;
import static io.twinlog.tests.replication.Replication.createTopic;
import static io.twinlog.tests.replication.Replication.noRetries;
import static io.twinlog.tests.replication.Replication.send;

/**
 * A rolling restart followed by the preferred leader election that operators run after one: while the first
 * replica was down the second led an epoch and wrote nothing in it (it noted the epoch at its log end when it became
 * leader). When the first leads again, the second's last epoch is one the leader never saw; the leader answers with
 * the epoch before it, which ends exactly at the second's log end. Nothing is to be cut, but the stray epoch entry
 * must go (Kafka's {@code UnifiedLog.truncateTo} drops epoch entries past the log end), or the second replica asks
 * the same question for ever and never copies another record.
 */
@Timeout(300)
class RollingRestartTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void aReplicaThatLedAnEpochWithoutWritingFollowsTheNextLeader() throws Exception {
        TopicPartition tp = new TopicPartition("rolling", 0);
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             Admin admin = cluster.admin()) {
            // the controller stays up: the restart is of another broker, the partition's preferred leader
            int controller = admin.describeCluster().controller().get().id();
            List<Integer> others = new ArrayList<>(List.of(0, 1, 2));
            others.remove(Integer.valueOf(controller));
            int preferred = others.get(0);
            int second = others.get(1);
            createTopic(admin, tp.topic(), Map.of(0, List.of(preferred, second, controller)), Map.of());
            awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
            NavigableMap<Long, String> acked = new TreeMap<>();
            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(noRetries("all"))) {
                for (int i = 0; i < 5; i++) {
                    acked.put(send(producer, tp, "before-" + i).offset(), "before-" + i);
                }
            }

            cluster.stopBroker(preferred);
            awaitLeaderIn(admin, tp, Set.of(second), TIMEOUT); // leads a new epoch, writes nothing in it
            cluster.startBroker(preferred);
            awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
            admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get();
            awaitLeaderIn(admin, tp, Set.of(preferred), TIMEOUT);

            try (KafkaProducer<byte[], byte[]> producer = cluster.producer(noRetries("1"))) {
                for (int i = 0; i < 5; i++) {
                    acked.put(send(producer, tp, "after-" + i).offset(), "after-" + i);
                }
            }
            long end = acked.lastKey() + 1;
            Waits.waitUntil("every replica of " + tp + " holds the records up to " + end, () -> {
                for (int id : List.of(0, 1, 2)) {
                    if (cluster.broker(id).replicaManager().partition(tp).orElseThrow().log().logEndOffset() < end) {
                        return false;
                    }
                }
                return true;
            }, TIMEOUT);
            awaitIsr(admin, tp, Set.of(0, 1, 2), TIMEOUT);
            assertAckedRecordsReadable(cluster, tp, acked);
        }
    }
}
