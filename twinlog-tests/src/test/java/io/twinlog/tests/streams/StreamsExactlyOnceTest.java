package io.twinlog.tests.streams;

import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka Streams 4.4 with {@code processing.guarantee=exactly_once_v2} on a 3-broker Twinlog cluster (issue 26,
 * point 5): a word count (sentences split into words, regrouped by word through a repartition topic, counted in a
 * state store with its changelog, caching off so every update is emitted). Mid-run the leader of the input
 * partitions and then the coordinator of the application's transactions are killed and restarted. A read_committed
 * reader of the output must see, for every word, the counts 1, 2, ..., n exactly once each, with n what the seeded
 * generator wrote: nothing lost and nothing counted twice through the failures.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class StreamsExactlyOnceTest {
    private static final String APP = "word-count";
    private static final int SENTENCES = 4_000;
    private static final long SEED = 20261206L;
    private static final Duration WAIT = Duration.ofSeconds(120);

    @TempDir
    Path stateDir;

    @Test
    void wordCountIsExactThroughPartitionLeaderAndTransactionCoordinatorKills() throws Exception {
        try (TestCluster cluster = TestCluster.builder().brokers(3).build().start();
             Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("sentences", 3, (short) 3), new NewTopic("counts", 3,
                    (short) 3))).all().get();
            Map<String, Long> expected = writeSentences(cluster);
            long updates = expected.values().stream().mapToLong(Long::longValue).sum();

            try (KafkaStreams streams = new KafkaStreams(WordCount.topology().build(),
                    WordCount.config(APP, cluster.bootstrapServers(), stateDir, 3, 2))) {
                streams.start();
                Waits.waitUntil("a fifth of the counts out", () -> endOffsets(cluster, "counts") > updates / 5, WAIT);

                int inputLeader = admin.describeTopics(List.of("sentences")).allTopicNames().get().get("sentences")
                        .partitions().get(0).leader().id();
                cluster.killBroker(inputLeader);
                Waits.waitUntil("half the counts out", () -> endOffsets(cluster, "counts") > updates / 2, WAIT);
                cluster.startBroker(inputLeader);

                int coordinator = transactionCoordinator(admin);
                cluster.killBroker(coordinator);
                Waits.waitUntil("three quarters of the counts out", () -> endOffsets(cluster, "counts")
                        > updates * 3 / 4, WAIT);
                cluster.startBroker(coordinator);

                Map<String, List<Long>> emitted = readCounts(cluster, expected);
                for (Map.Entry<String, Long> e : expected.entrySet()) {
                    List<Long> counts = emitted.getOrDefault(e.getKey(), List.of());
                    assertEquals(WordCount.exactCounts(e.getValue()), counts, "the counts of " + e.getKey() + " ("
                            + counts.size() + " emitted)");
                }
            }
        }
    }

    /** Seeded sentences of 3 to 5 words, keyed by sentence number; returns how often each word was written. */
    private static Map<String, Long> writeSentences(TestCluster cluster) throws Exception {
        Random random = new Random(SEED);
        Map<String, Long> expected = new TreeMap<>();
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of("enable.idempotence", true))) {
            for (int i = 0; i < SENTENCES; i++) {
                String sentence = WordCount.sentence(random, expected);
                producer.send(new ProducerRecord<>("sentences", ("s" + i).getBytes(StandardCharsets.UTF_8),
                        sentence.getBytes(StandardCharsets.UTF_8)));
            }
        }
        return expected;
    }

    /** The coordinator of one of the application's transactional ids (its producers are one per stream thread). */
    private static int transactionCoordinator(Admin admin) throws Exception {
        List<TransactionListing> ids = new ArrayList<>();
        Waits.waitUntil("the application's transactional ids listed", () -> {
            ids.clear();
            admin.listTransactions().all().get().stream().filter(t -> t.transactionalId().startsWith(APP))
                    .forEach(ids::add);
            return !ids.isEmpty();
        }, WAIT);
        String id = ids.get(0).transactionalId();
        return admin.describeTransactions(List.of(id)).description(id).get().coordinatorId();
    }

    private static long endOffsets(TestCluster cluster, String topic) {
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            return consumer.endOffsets(partitions).values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /** Every committed count per word, in order, until each word reached its expected count (or the wait ends). */
    private static Map<String, List<Long>> readCounts(TestCluster cluster, Map<String, Long> expected) {
        Map<String, List<Long>> emitted = new HashMap<>();
        Properties p = new Properties();
        p.put("bootstrap.servers", cluster.bootstrapServers());
        p.put("isolation.level", "read_committed");
        try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                new LongDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor("counts").stream()
                    .map(i -> new TopicPartition("counts", i.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!reached(emitted, expected) && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, Long> r : consumer.poll(Duration.ofMillis(200))) {
                    emitted.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value());
                }
            }
            // anything beyond the expected counts (a duplicate) would show here
            for (ConsumerRecord<String, Long> r : consumer.poll(Duration.ofSeconds(1))) {
                emitted.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value());
            }
        }
        assertTrue(emitted.keySet().containsAll(expected.keySet()), "words seen: " + emitted.keySet());
        return emitted;
    }

    private static boolean reached(Map<String, List<Long>> emitted, Map<String, Long> expected) {
        return expected.entrySet().stream().allMatch(e -> {
            List<Long> counts = emitted.get(e.getKey());
            return counts != null && !counts.isEmpty() && counts.get(counts.size() - 1) >= e.getValue();
        });
    }
}
