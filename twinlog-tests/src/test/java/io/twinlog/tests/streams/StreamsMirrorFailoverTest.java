package io.twinlog.tests.streams;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
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
import java.util.function.Consumer;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A Kafka Streams exactly-once application failed over to a mirror and back (issue 26: transactional applications
 * that fail over and back). A word count (repartition topic, state store with its changelog, exactly_once_v2) runs
 * on cluster A; every one of its topics is mirrored to B with its consumer group. The operator's planned failover:
 * the application is stopped, B has caught up (logs and group offsets), the topics are failed over, and the
 * application starts on B with an empty state directory, so its state comes from B's copy of the changelog; it
 * counts more sentences there. Then the failback: A mirrors everything back from B (A's logs are truncated to the last
 * mirrored epoch and copied from B), A's topics are failed over, and the application counts a third batch on A. A
 * read_committed reader of A's output must see every word's counts 1, 2, ..., n exactly once: nothing lost, nothing
 * counted twice, across both moves.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class StreamsMirrorFailoverTest {
    private static final String APP = "word-count-dr";
    private static final List<String> TOPICS = List.of("sentences", "counts", APP + "-by-word-repartition",
            APP + "-word-counts-changelog");
    private static final int SENTENCES_PER_PHASE = 500;
    private static final long SEED = 20261206L;
    private static final Duration WAIT = Duration.ofSeconds(120);

    @TempDir
    Path stateDirs;

    @Test
    void wordCountIsExactAcrossAFailoverAndAFailback() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start()) {
            TestCluster a = clusters.source();
            TestCluster b = clusters.destination();
            Admin adminA = clusters.sourceAdmin();
            Admin adminB = clusters.destinationAdmin();
            MirrorAdmin onB = clusters.mirrors();
            MirrorAdmin onA = clusters.mirrorsOnSource();
            clusters.createSourceTopics(new NewTopic("sentences", 3, (short) 1), new NewTopic("counts", 3, (short) 1));
            Random random = new Random(SEED);
            Map<String, Long> expected = new TreeMap<>();

            // on A
            writeSentences(a, random, 0, expected);
            runUntilCounted(a, "on-a", expected);

            // planned failover to B: everything mirrored and the group's offsets synced, then the topics stopped
            clusters.createMirror("dr", Map.of("mirror.groups.sync.interval.ms", "1000"));
            assertEquals(Map.of(), onB.startMirrorTopics("dr", TOPICS, List.of(), List.of()));
            awaitCaughtUp(adminA, adminB);
            failOver(onB, "dr");

            // on B, from B's copy of the state
            writeSentences(b, random, 1, expected);
            runUntilCounted(b, "on-b", expected);

            // failback: A mirrors back from B, then its topics are stopped
            onA.createClusterMirror("back", Map.of("bootstrap.servers", b.bootstrapServers(),
                    "mirror.groups.sync.interval.ms", "1000"));
            assertEquals(Map.of(), onA.startMirrorTopics("back", TOPICS, List.of(), List.of()));
            awaitCaughtUp(adminB, adminA);
            failOver(onA, "back");

            // on A again
            writeSentences(a, random, 2, expected);
            runUntilCounted(a, "on-a-again", expected);

            Map<String, List<Long>> emitted = readCounts(a);
            for (Map.Entry<String, Long> e : expected.entrySet()) {
                assertEquals(WordCount.exactCounts(e.getValue()), emitted.get(e.getKey()), "the counts of "
                        + e.getKey());
            }
        }
    }

    /** A batch of seeded sentences of 3 to 5 words; {@code expected} gets how often each word was written. */
    private static void writeSentences(TestCluster cluster, Random random, int phase, Map<String, Long> expected)
            throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = cluster.producer(Map.of("enable.idempotence", true))) {
            for (int i = 0; i < SENTENCES_PER_PHASE; i++) {
                String sentence = WordCount.sentence(random, expected);
                producer.send(new ProducerRecord<>("sentences", ("p" + phase + "-s" + i)
                        .getBytes(StandardCharsets.UTF_8), sentence.getBytes(StandardCharsets.UTF_8))).get();
            }
        }
    }

    /** Runs the application (a fresh state directory) until every word's last count is the expected one. */
    private void runUntilCounted(TestCluster cluster, String run, Map<String, Long> expected) throws Exception {
        try (KafkaStreams streams = new KafkaStreams(WordCount.topology().build(),
                WordCount.config(APP, cluster.bootstrapServers(), stateDirs.resolve(run), 1, 1))) {
            streams.start();
            Waits.waitFor("every word counted " + run, () -> lastCounts(cluster),
                    last -> expected.entrySet().stream().allMatch(e -> e.getValue().equals(last.get(e.getKey()))),
                    WAIT);
            streams.close(Duration.ofSeconds(60));
        }
    }

    /**
     * The destination holds every record of every topic (the same end offsets) and the application's group has the
     * same committed offsets on both clusters.
     */
    private static void awaitCaughtUp(Admin source, Admin destination) throws Exception {
        Waits.waitFor("the destination holds every record of the source", () -> endOffsets(destination),
                ends -> {
                    try {
                        return ends.equals(endOffsets(source));
                    } catch (Exception e) {
                        return false;
                    }
                }, WAIT);
        Map<TopicPartition, Long> sourceGroup = groupOffsets(source);
        Waits.waitFor("the application's group offsets synced", () -> groupOffsets(destination),
                sourceGroup::equals, WAIT);
    }

    private static void failOver(MirrorAdmin admin, String mirror) throws Exception {
        assertEquals(Map.of(), admin.stopMirrorTopics(mirror, TOPICS, List.of()));
        Waits.waitUntil("every topic of " + mirror + " failed over", () -> admin
                .describeClusterMirrors(List.of(mirror)).get(mirror).topics().values().stream()
                .allMatch(t -> t.partitions().stream().allMatch(p -> p.state().equals("STOPPED"))), WAIT);
    }

    private static Map<TopicPartition, Long> endOffsets(Admin admin) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        admin.describeTopics(TOPICS).allTopicNames().get().values().forEach(t -> t.partitions().forEach(p ->
                latest.put(new TopicPartition(t.name(), p.partition()), OffsetSpec.latest())));
        return admin.listOffsets(latest).all().get().entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
    }

    private static Map<TopicPartition, Long> groupOffsets(Admin admin) throws Exception {
        return admin.listConsumerGroupOffsets(APP).partitionsToOffsetAndMetadata().get().entrySet().stream()
                .filter(e -> e.getValue() != null)
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
    }

    /** The last committed count of each word in the output (read_committed). */
    private static Map<String, Long> lastCounts(TestCluster cluster) {
        Map<String, Long> last = new HashMap<>();
        readAll(cluster, r -> last.put(r.key(), r.value()));
        return last;
    }

    /** Every committed count per word, in order. */
    private static Map<String, List<Long>> readCounts(TestCluster cluster) {
        Map<String, List<Long>> emitted = new HashMap<>();
        readAll(cluster, r -> emitted.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value()));
        return emitted;
    }

    /** Reads the output read_committed from the beginning up to its last stable offset. */
    private static void readAll(TestCluster cluster, Consumer<ConsumerRecord<String, Long>> each) {
        Properties p = new Properties();
        p.put("bootstrap.servers", cluster.bootstrapServers());
        p.put("isolation.level", "read_committed");
        try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
                new LongDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor("counts").stream()
                    .map(i -> new TopicPartition("counts", i.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))
                    && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(each);
            }
        }
    }
}
