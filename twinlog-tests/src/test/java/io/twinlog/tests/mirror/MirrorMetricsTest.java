package io.twinlog.tests.mirror;

import com.yammer.metrics.core.Gauge;
import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.Metric;
import com.yammer.metrics.core.MetricName;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.server.BrokerServer;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The destination broker's mirror metrics, read from its registry by their MBean names (docs/operations.md, "Mirror
 * metrics"): partitions per state while mirroring, paused and after failover; the lag of a backlog copied after a
 * resume, in records and seconds (from the source's record timestamps), back to 0 once caught up; what the fetcher
 * appended; the failover counted; the partition's lag gauges gone once it stopped mirroring. A destination broker
 * restarted while the source is down reports the lag as unknown (-1), not 0.
 */
@Timeout(300)
class MirrorMetricsTest {
    private static final String MIRROR = "m";
    private static final String TOPIC = "orders";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final String STATES = "kafka.server:type=MirrorMetadataManager,name=";
    private static final String PARTITION_TAGS = ",mirror=" + MIRROR + ",topic=" + TOPIC + ",partition=0";
    private static final String PARTITION_LAG_RECORDS = "kafka.server:type=ClusterMirrorPartition,name=LagRecords"
            + PARTITION_TAGS;
    private static final String PARTITION_LAG_SECONDS = "kafka.server:type=ClusterMirrorPartition,name=LagSeconds"
            + PARTITION_TAGS;
    private static final String PARTITION_LAG_BYTES = "kafka.server:type=ClusterMirrorPartition,name=LagBytes"
            + PARTITION_TAGS;
    private static final String MIRROR_LAG_RECORDS = "kafka.server:type=ClusterMirror,name=LagRecords,mirror=" + MIRROR;
    private static final String MIRROR_LAG_SECONDS = "kafka.server:type=ClusterMirror,name=LagSeconds,mirror=" + MIRROR;
    private static final String MAX_LAG = "kafka.server:type=MirrorFetcherManager,name=MaxLag,clientId=MirrorReplica";
    /** A backlog of 1 KiB records many times the fetcher's 1 MiB per partition and fetch: copied over many fetches. */
    private static final int BACKLOG = 16_000;
    private static final int RECORD_BYTES = 1024;

    @Test
    void lagStatesAndFailoverAreReportedByTheDestinationLeader() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start()) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            MirrorAdmin mirrors = clusters.mirrors();
            BrokerServer broker = destination.broker(0);
            clusters.createSourceTopics(new NewTopic(TOPIC, 1, (short) 1));
            long firstTimestamp = System.currentTimeMillis() - TimeUnit.MINUTES.toMillis(5);
            produce(source, 0, 100, firstTimestamp);

            clusters.mirror(MIRROR, TOPIC);
            clusters.awaitMirrored(TP);
            awaitGauge(broker, STATES + "MirroringPartitionState", 1);
            awaitGauge(broker, STATES + "MirroringPartitionState,mirror=" + MIRROR, 1);
            awaitGauge(broker, PARTITION_LAG_RECORDS, 0L);
            assertEquals(0, gaugeValue(broker, STATES + "StoppedPartitionState").orElseThrow());
            assertTrue(meter(broker, "kafka.server:type=ClusterMirror,name=MirrorMessagesPerSec,mirror=" + MIRROR)
                    .count() >= 100, "the fetcher's appends are counted");

            // a backlog built while paused is copied after the resume: the lag shows while it is, then closes
            assertEquals(Map.of(), mirrors.pauseMirrorTopics(MIRROR, List.of(TOPIC), List.of()));
            awaitGauge(broker, STATES + "PausedPartitionState,mirror=" + MIRROR, 1);
            produce(source, 100, BACKLOG, firstTimestamp);
            long sourceEnd = 100 + BACKLOG;
            try (LagSampler sampler = new LagSampler(broker)) {
                assertEquals(Map.of(), mirrors.resumeMirrorTopics(MIRROR, List.of(TOPIC), List.of()));
                Waits.waitUntil("the backlog mirrored", () -> logEnd(destination) == sourceEnd, Duration.ofSeconds(60));
                awaitGauge(broker, PARTITION_LAG_RECORDS, 0L);
                sampler.close();
                assertTrue(sampler.maxRecords.get() > 0, "records behind while copying: " + sampler);
                assertTrue(sampler.maxMirrorRecords.get() > 0, "the mirror's sum too: " + sampler);
                assertTrue(sampler.maxFetcherLag.get() > 0, "MaxLag too: " + sampler);
                assertTrue(sampler.maxBytes.get() >= sampler.maxRecords.get() * RECORD_BYTES / 2,
                        "about a KiB per record behind: " + sampler);
                // the backlog's timestamps span BACKLOG ms: the lag in seconds is measured against the source's
                // newest record, not the wall clock (its records are 5 minutes old)
                long maxLagMs = sampler.maxMillis.get();
                assertTrue(maxLagMs > 0 && maxLagMs <= BACKLOG + 100, "seconds behind while copying: " + sampler);
            }
            assertEquals(0.0, gaugeValue(broker, PARTITION_LAG_SECONDS).orElseThrow(), "caught up");
            assertEquals(0L, gaugeValue(broker, MIRROR_LAG_RECORDS).orElseThrow());
            awaitGauge(broker, STATES + "MirroringPartitionState,mirror=" + MIRROR, 1);

            MirrorSteps.failOver(mirrors, MIRROR, TOPIC);
            awaitGauge(broker, STATES + "StoppedPartitionState", 1);
            awaitGauge(broker, STATES + "StoppedPartitionState,mirror=" + MIRROR, 1);
            assertEquals(0, gaugeValue(broker, STATES + "MirroringPartitionState").orElseThrow());
            assertEquals(1, meter(broker, "kafka.server:type=ClusterMirror,name=Failovers,mirror=" + MIRROR).count());
            for (String gone : List.of(PARTITION_LAG_RECORDS, PARTITION_LAG_BYTES, PARTITION_LAG_SECONDS)) {
                assertFalse(find(broker, gone).isPresent(), gone + " is removed once the partition stopped mirroring");
            }
            assertEquals(0L, gaugeValue(broker, MAX_LAG).orElseThrow());
        }
    }

    @Test
    void aBrokerThatTookThePartitionWhileTheSourceIsDownReportsTheLagAsUnknown() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start()) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            clusters.createSourceTopics(new NewTopic(TOPIC, 1, (short) 1));
            produce(source, 0, 10, System.currentTimeMillis());
            clusters.mirror(MIRROR, TOPIC);
            clusters.awaitMirrored(TP);
            awaitGauge(destination.broker(0), PARTITION_LAG_SECONDS, 0.0);

            source.stopBroker(0);
            destination.stopBroker(0);
            BrokerServer restarted = destination.startBroker(0);
            // it knows nothing of the source since it took the partition: 0 would say a failover loses nothing
            awaitGauge(restarted, PARTITION_LAG_RECORDS, -1L);
            assertEquals(-1.0, gaugeValue(restarted, PARTITION_LAG_SECONDS).orElseThrow());
            assertEquals(-1.0, gaugeValue(restarted, MIRROR_LAG_SECONDS).orElseThrow());
            assertEquals(0L, gaugeValue(restarted, MIRROR_LAG_RECORDS).orElseThrow(), "unknown partitions left out");
        }
    }

    /** Samples the lag gauges every millisecond while a backlog is copied, keeping the largest values seen. */
    private static final class LagSampler implements AutoCloseable {
        private final AtomicLong maxRecords = new AtomicLong();
        private final AtomicLong maxBytes = new AtomicLong();
        private final AtomicLong maxMillis = new AtomicLong();
        private final AtomicLong maxMirrorRecords = new AtomicLong();
        private final AtomicLong maxFetcherLag = new AtomicLong();
        private final AtomicLong samples = new AtomicLong();
        private final Thread thread;
        private volatile boolean running = true;

        LagSampler(BrokerServer broker) {
            thread = new Thread(() -> {
                while (running) {
                    sample(broker, PARTITION_LAG_RECORDS, maxRecords, 1);
                    sample(broker, PARTITION_LAG_BYTES, maxBytes, 1);
                    sample(broker, PARTITION_LAG_SECONDS, maxMillis, 1000);
                    sample(broker, MIRROR_LAG_RECORDS, maxMirrorRecords, 1);
                    sample(broker, MAX_LAG, maxFetcherLag, 1);
                    samples.incrementAndGet();
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // the sampling interval
                }
            }, "mirror-lag-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        /** Each gauge once found: they stay registered while the partition mirrors. */
        private final Map<String, Gauge<?>> gauges = new HashMap<>();

        private void sample(BrokerServer broker, String mbean, AtomicLong max, int scale) {
            Gauge<?> gauge = gauges.get(mbean);
            if (gauge == null) {
                gauge = (Gauge<?>) find(broker, mbean).orElse(null);
                if (gauge == null) {
                    return;
                }
                gauges.put(mbean, gauge);
            }
            max.accumulateAndGet(Math.round(((Number) gauge.value()).doubleValue() * scale), Math::max);
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.join(TimeUnit.SECONDS.toMillis(10));
        }

        @Override
        public String toString() {
            return "max records " + maxRecords + ", bytes " + maxBytes + ", ms " + maxMillis + ", mirror records "
                    + maxMirrorRecords + ", MaxLag " + maxFetcherLag + " over " + samples + " samples";
        }
    }

    private static void awaitGauge(BrokerServer broker, String mbean, Object expected) {
        Waits.waitFor(mbean + " = " + expected, () -> gaugeValue(broker, mbean),
                v -> v.isPresent() && v.get().equals(expected));
    }

    static Optional<Object> gaugeValue(BrokerServer broker, String mbean) {
        return find(broker, mbean).map(m -> ((Gauge<?>) m).value());
    }

    static Meter meter(BrokerServer broker, String mbean) {
        return (Meter) find(broker, mbean).orElseThrow(() -> new AssertionError(mbean + " is not registered"));
    }

    /** The metric of this exact MBean name in the broker's registry. */
    private static Optional<Metric> find(BrokerServer broker, String mbean) {
        for (Map.Entry<MetricName, Metric> e : broker.metrics().registry().allMetrics().entrySet()) {
            if (e.getKey().getMBeanName().equals(mbean)) {
                return Optional.of(e.getValue());
            }
        }
        return Optional.empty();
    }

    private static long logEnd(TestCluster cluster) {
        return cluster.broker(0).replicaManager().partition(TP).map(p -> p.log().logEndOffset()).orElse(-1L);
    }

    /** Records {@code from} to {@code from + count - 1}, record i stamped {@code firstTimestamp + i} ms. */
    private static void produce(TestCluster cluster, int from, int count, long firstTimestamp) throws Exception {
        byte[] value = new byte[RECORD_BYTES];
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 5,
                ProducerConfig.COMPRESSION_TYPE_CONFIG, "none"))) {
            for (int i = from; i < from + count; i++) {
                p.send(new ProducerRecord<>(TOPIC, 0, firstTimestamp + i, null, value));
            }
            p.flush();
        }
    }
}
