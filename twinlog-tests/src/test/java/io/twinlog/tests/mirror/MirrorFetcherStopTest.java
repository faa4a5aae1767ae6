package io.twinlog.tests.mirror;

import io.twinlog.mirror.MirrorPartitionSink;
import io.twinlog.mirror.fetcher.MirrorFetchListener;
import io.twinlog.mirror.fetcher.MirrorFetchMetrics;
import io.twinlog.mirror.fetcher.MirrorFetchQuota;
import io.twinlog.mirror.fetcher.MirrorFetcher;
import io.twinlog.testkit.FaultProxy;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Stopping a mirror's fetch does not wait for the fetch in flight, and appends nothing after it (issue 30, the
 * source fetch). A {@link MirrorFetcher} fetches from a one-broker source behind a {@link FaultProxy} (its fetches
 * cross the proxy) into in-memory partitions: a partition removed while its fetch is parked on the source gets
 * nothing of that fetch's answer while the others go on; and a fetcher whose fetch the source holds (blackholed,
 * under a 60 s {@code request.timeout.ms}) stops at once rather than at its request timeout or its threads' 5 s
 * shutdown wait.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class MirrorFetcherStopTest {
    private static FaultProxy proxy;
    private static TestCluster source;

    @BeforeAll
    static void startSource() throws Exception {
        proxy = new FaultProxy("fetch-stop-source", "127.0.0.1", 1); // retargeted at the source's start
        source = MirrorSteps.startSourceBehind(proxy, TestCluster.builder());
    }

    @AfterAll
    static void stopSource() throws Exception {
        source.close();
        proxy.close();
    }

    @Test
    void aRemovedPartitionGetsNothingOfTheFetchInFlightWhileTheOthersGoOn() throws Exception {
        TopicPartition removed = new TopicPartition("removal", 0);
        TopicPartition kept = new TopicPartition("removal", 1);
        MemorySink removedSink = new MemorySink();
        MemorySink keptSink = new MemorySink();
        MirrorFetcher fetcher = fetcher("removal", 30_000);
        createTopic(fetcher, "removal", 2);
        produce("removal", 0, 10);
        produce("removal", 1, 10);
        fetcher.addPartition(removed, removedSink);
        fetcher.addPartition(kept, keptSink);
        fetcher.start();
        try {
            Waits.waitUntil("both partitions caught up", () -> removedSink.end == 10 && keptSink.end == 10);
            fetcher.removePartition(removed); // its fetch is parked on the source (caught up), with the kept one's
            removedSink.removed = true;
            produce("removal", 0, 10); // the parked fetch answers with these: they must not be appended
            produce("removal", 1, 10);
            Waits.waitUntil("the kept partition fetched on", () -> keptSink.end == 20);
            produce("removal", 0, 10);
            produce("removal", 1, 10);
            Waits.waitUntil("and again", () -> keptSink.end == 30);
        } finally {
            long start = System.nanoTime();
            fetcher.detach();
            fetcher.shutdown();
            System.out.printf("a fetcher stopped with its fetch parked on the source (max wait 500 ms): %d ms%n",
                    (System.nanoTime() - start) / 1_000_000);
        }
        assertEquals(0, removedSink.appendsAfterRemoval.get(), "appended to a removed partition");
        assertEquals(10, removedSink.end);
    }

    @Test
    void aFetcherStopsAtOnceWhileTheSourceHoldsItsFetch() throws Exception {
        TopicPartition tp = new TopicPartition("held", 0);
        MemorySink sink = new MemorySink();
        MirrorFetcher fetcher = fetcher("held", 60_000);
        createTopic(fetcher, "held", 1);
        produce("held", 0, 10);
        fetcher.addPartition(tp, sink);
        fetcher.start();
        boolean stopped = false;
        try {
            Waits.waitUntil("caught up", () -> sink.end == 10);
            proxy.blackhole();
            produce("held", 0, 10);
            // a fetch answers within its 500 ms max wait: one unanswered for 2 s is held by the blackhole
            Waits.waitUntil("a fetch held by the source", () -> fetcher.lastAnsweredMs(tp).isPresent()
                    && Time.SYSTEM.hiResClockMs() - fetcher.lastAnsweredMs(tp).getAsLong() > 2_000,
                    Duration.ofSeconds(20));
            long start = System.nanoTime();
            fetcher.detach();
            sink.removed = true;
            fetcher.shutdown();
            stopped = true;
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            System.out.printf("a fetcher stopped with its fetch held by a blackholed source (request.timeout.ms "
                    + "60000): %d ms%n", tookMs);
            assertTrue(tookMs < 2_000, "the stop waited " + tookMs + " ms for the fetch in flight");
            assertFalse(Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.isAlive()
                    && t.getName().startsWith("twinlog-mirror-fetcher-held")), "its threads ended");
        } finally {
            proxy.heal();
            if (!stopped) {
                fetcher.shutdown();
            }
        }
        assertEquals(0, sink.appendsAfterRemoval.get(), "appended after the stop");
        assertEquals(10, sink.end);
    }

    private static MirrorFetcher fetcher(String name, int requestTimeoutMs) {
        return new MirrorFetcher(name, Map.of("bootstrap.servers", proxy.address(),
                "request.timeout.ms", Integer.toString(requestTimeoutMs)), 30_000, new QuietListener(),
                MirrorFetchMetrics.NONE, new MirrorFetchQuota(MirrorFetchQuota.Windows.KAFKA_DEFAULT, Time.SYSTEM),
                Time.SYSTEM);
    }

    /** Creates {@code topic} on the source and gives its topic ID to the fetcher, as the state machine's pass does. */
    private static void createTopic(MirrorFetcher fetcher, String topic, int partitions) throws Exception {
        try (Admin admin = source.admin()) {
            Uuid id = admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).topicId(topic).get();
            fetcher.sourceProblem(topic, id);
        }
    }

    private static void produce(String topic, int partition, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = source.producer(Map.of("linger.ms", 5))) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(topic, partition, null, ("r" + i).getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
    }

    /** A local partition in memory: its log end, and the appends made after it was removed from the fetcher. */
    private static final class MemorySink implements MirrorPartitionSink {
        volatile long end;
        volatile boolean removed;
        final AtomicInteger appendsAfterRemoval = new AtomicInteger();

        @Override
        public boolean isLeader() {
            return true;
        }

        @Override
        public int leaderEpoch() {
            return Integer.MAX_VALUE; // no source epoch reaches it: no fencing
        }

        @Override
        public long logEndOffset() {
            return end;
        }

        @Override
        public long logStartOffset() {
            return 0;
        }

        @Override
        public Optional<Integer> latestEpoch() {
            return Optional.empty();
        }

        @Override
        public void appendMirrored(MemoryRecords records) {
            if (removed) {
                appendsAfterRemoval.incrementAndGet();
            }
            for (RecordBatch b : records.batches()) {
                end = b.lastOffset() + 1;
            }
        }

        @Override
        public void truncateFullyAndStartAt(long offset, String reason) {
            end = offset;
        }
    }

    /** The fetcher's reports: none is expected from a healthy source. */
    private static final class QuietListener implements MirrorFetchListener {
        @Override
        public void onEpochFencingNeeded(TopicPartition partition, int sourceEpoch) {
        }

        @Override
        public void onProgress(TopicPartition partition, long sourceHighWatermark, long localLogEndOffset) {
        }

        @Override
        public void onMirrored(TopicPartition partition, long appendedNewestTimestamp, long caughtUpAtMs) {
        }

        @Override
        public void onSourceDiverged(TopicPartition partition, int sourceEpoch, long sourceEndOffset, String reason) {
        }

        @Override
        public void onFailure(TopicPartition partition, String reason, boolean retriable) {
        }
    }
}
