package io.twinlog.tests.groups;

import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The group coordinator answers an offset commit once the followers of its {@code __consumer_offsets} partition
 * have it. A coordinator write must wake those followers' parked fetches as a produce does: otherwise, on a quiet
 * cluster, every commit waits out {@code replica.fetch.wait.max.ms} (a Kafka Streams exactly-once application
 * commits every 100 ms and spent half its time there).
 */
@Timeout(120)
class ReplicatedCommitLatencyTest {
    private static final long FETCH_WAIT_MS = 5_000;

    @Test
    void aCommitOnAQuietClusterIsAnsweredWithoutWaitingOutTheFollowersLongPoll() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3)
                .brokerProperty("replica.fetch.wait.max.ms", String.valueOf(FETCH_WAIT_MS)).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("ledger", 1, (short) 3))).all().get();
            TopicPartition tp = new TopicPartition("ledger", 0);
            try (KafkaConsumer<byte[], byte[]> consumer = ConsumerGroupTest.member(cluster, "quiet", "classic")) {
                consumer.assign(List.of(tp));
                // the first commit finds and loads the coordinator: not timed
                consumer.commitSync(Map.of(tp, new OffsetAndMetadata(0)), Duration.ofSeconds(30));
                long slowestMs = 0;
                for (int i = 1; i <= 10; i++) {
                    long start = System.nanoTime();
                    consumer.commitSync(Map.of(tp, new OffsetAndMetadata(i)), Duration.ofSeconds(30));
                    slowestMs = Math.max(slowestMs, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                }
                assertTrue(slowestMs < FETCH_WAIT_MS / 2, "the slowest of 10 commits took " + slowestMs
                        + " ms; a follower's fetch parks for up to " + FETCH_WAIT_MS + " ms");
            }
        }
    }
}
