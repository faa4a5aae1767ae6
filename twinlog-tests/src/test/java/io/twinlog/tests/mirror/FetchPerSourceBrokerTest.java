package io.twinlog.tests.mirror;

import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mirror fetches from each source broker on its own connection and thread: a record written to a partition
 * led by one source broker is mirrored without waiting out the long polls (500 ms each) of the idle brokers that
 * lead the mirror's other partitions. Fetching the brokers one after another in one loop, a record could wait for
 * up to two idle polls (up to a second); with one fetch session per broker it is mirrored as soon as the busy
 * broker's fetch returns.
 */
@Timeout(300)
class FetchPerSourceBrokerTest {
    private static final String TOPIC = "orders";
    /** Its own name: fetcher threads are counted by it in this JVM. */
    private static final String MIRROR = "per-broker";

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aBusySourceBrokerIsNotHeldByIdleOnes() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(3),
                TestCluster.builder().brokers(1))) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            List<Integer> ids = new ArrayList<>(new TreeSet<>(source.runningBrokerIds()));
            // one partition led by each source broker
            clusters.createSourceTopics(new NewTopic(TOPIC, Map.of(0, List.of(ids.get(0)),
                    1, List.of(ids.get(1)), 2, List.of(ids.get(2)))));
            clusters.mirror(MIRROR, TOPIC);
            TopicPartition busy = new TopicPartition(TOPIC, 0);

            Waits.waitUntil("a fetcher thread per source broker", () -> fetcherThreads(MIRROR).size() == 3);
            assertEquals(3, fetcherThreads(MIRROR).size(), "threads: " + fetcherThreads(MIRROR));

            List<Long> latenciesMs = new ArrayList<>();
            try (KafkaProducer<byte[], byte[]> producer = source.producer(Map.of("linger.ms", 0))) {
                for (int i = 0; i < 20; i++) {
                    producer.send(new ProducerRecord<>(TOPIC, 0, null,
                            ("r" + i).getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
                    long expectedEnd = i + 1;
                    long start = System.nanoTime();
                    Waits.waitUntil("record " + i + " mirrored", () -> destination.logEndOffset(busy) >= expectedEnd);
                    latenciesMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                }
            }
            Collections.sort(latenciesMs);
            long median = latenciesMs.get(latenciesMs.size() / 2);
            // one loop over the brokers would put the median near 500 ms (half a round of two idle long polls);
            // 300 ms leaves room for a loaded machine while still telling the two designs apart
            assertTrue(median < 300, "median mirror latency " + median + " ms, all: " + latenciesMs);
            for (int p = 0; p < 3; p++) {
                clusters.awaitMirrored(new TopicPartition(TOPIC, p));
            }
        }
    }

    private static Set<String> fetcherThreads(String mirror) {
        String prefix = "twinlog-mirror-fetcher-" + mirror + "-";
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .filter(n -> n.startsWith(prefix)).collect(Collectors.toCollection(TreeSet::new));
    }
}
