package io.twinlog.tests.quota;

import io.twinlog.testkit.RawKafkaConnection;
import io.twinlog.testkit.TestCluster;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Client quotas enforced as Kafka enforces them (issue 28, point 3), measured with real kafka-clients: a producer
 * limited to 1 MiB/s produces about 1 MiB/s while an unlimited one beside it is not slowed; a consumer limited to
 * 1 MiB/s reads about 1 MiB/s; a request-time quota answers with {@code throttle_time_ms} and holds the connection
 * muted for that long (KIP-219). The quota windows are 3 x 1 s (Kafka's default 11 samples would let a first burst
 * of ~10 MB through and make a 10 s measurement meaningless).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ClientQuotaEnforcementTest {
    private static final long MIB = 1 << 20;
    private static final byte[] KIB = new byte[1024];
    private static final long MEASURED_FROM_S = 4;
    private static final long MEASURED_UNTIL_S = 12;
    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(1)
                .brokerProperty("quota.window.num", "3")
                .brokerProperty("quota.window.size.seconds", "1")
                .build().start();
        try (Admin admin = cluster.admin()) {
            admin.createTopics(List.of(new NewTopic("produced", 1, (short) 1), new NewTopic("consumed", 1,
                    (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aProducerLimitedTo1MiBPerSecondProducesAbout1MiBPerSecondAndAnotherIsNotSlowed() throws Exception {
        setQuota("limited-producer", "producer_byte_rate", MIB);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (KafkaProducer<byte[], byte[]> limited = producer("limited-producer");
             KafkaProducer<byte[], byte[]> free = producer("free-producer")) {
            long start = System.nanoTime();
            Future<Long> a = pool.submit(ackedInWindow(limited, start));
            Future<Long> b = pool.submit(ackedInWindow(free, start));
            double seconds = (MEASURED_UNTIL_S - MEASURED_FROM_S);
            double limitedRate = a.get(60, TimeUnit.SECONDS) / seconds / MIB;
            double freeRate = b.get(60, TimeUnit.SECONDS) / seconds / MIB;
            System.out.printf("producers over %.0f s: limited %.2f MiB/s, free %.2f MiB/s%n", seconds, limitedRate,
                    freeRate);
            assertTrue(limitedRate > 0.7 && limitedRate < 1.35, "limited producer at " + limitedRate + " MiB/s");
            assertTrue(freeRate > 2 * limitedRate, "the unlimited producer is not held back: " + freeRate
                    + " MiB/s beside " + limitedRate);
            assertTrue(metric(limited, "produce-throttle-time-avg") > 0, "the limited producer was told to wait");
            assertEquals(0.0, metric(free, "produce-throttle-time-max"), "the free producer never was");
        } finally {
            pool.shutdownNow();
        }
        assertTrue(brokerMetric("Produce", "throttle-time", "limited-producer") > 0,
                "Kafka's kafka.server:type=Produce throttle-time of the client");
        assertTrue(brokerMetric("Produce", "byte-rate", "limited-producer") > 0);
    }

    @Test
    void aConsumerLimitedTo1MiBPerSecondReadsAbout1MiBPerSecond() throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = producer("filler")) {
            for (int i = 0; i < 14 * 1024; i++) {
                producer.send(new ProducerRecord<>("consumed", KIB));
            }
            producer.flush();
        }
        setQuota("limited-consumer", "consumer_byte_rate", MIB);
        TopicPartition tp = new TopicPartition("consumed", 0);
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of(ConsumerConfig.CLIENT_ID_CONFIG,
                "limited-consumer", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"))) {
            consumer.assign(List.of(tp));
            long bytes = 0;
            long measuredFrom = -1;
            long measuredBytes = 0;
            long start = System.nanoTime();
            while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(12)) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                for (var r : records) {
                    bytes += r.value().length;
                }
                if (measuredFrom < 0 && System.nanoTime() - start > TimeUnit.SECONDS.toNanos(4)) {
                    measuredFrom = System.nanoTime();
                    measuredBytes = bytes;
                }
            }
            double rate = (bytes - measuredBytes) / ((System.nanoTime() - measuredFrom) / 1e9) / MIB;
            System.out.printf("limited consumer: %.2f MiB/s%n", rate);
            assertTrue(rate > 0.6 && rate < 1.4, "limited consumer at " + rate + " MiB/s");
            assertTrue(consumerMetric(consumer, "fetch-throttle-time-avg") > 0, "told to wait");
        }
        // another client id reads the whole 14 MiB at once
        try (KafkaConsumer<byte[], byte[]> consumer = cluster.consumer(Map.of(ConsumerConfig.CLIENT_ID_CONFIG,
                "free-consumer", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"))) {
            consumer.assign(List.of(tp));
            long start = System.nanoTime();
            long count = 0;
            while (count < 14 * 1024 && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(30)) {
                count += consumer.poll(Duration.ofMillis(200)).count();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            assertEquals(14 * 1024, count);
            assertTrue(seconds < 7, "14 MiB read by an unlimited consumer in " + seconds + " s");
        }
    }

    @Test
    void aRequestTimeQuotaThrottlesAndHoldsTheConnectionMuted() throws Exception {
        // RawKafkaConnection's client id; a quota small enough that a few Metadata requests exceed it
        setQuota("raw-test-client", "request_percentage", 0.01);
        try (RawKafkaConnection connection = RawKafkaConnection.to(cluster.bootstrapServers())) {
            MetadataRequest request = new MetadataRequest(new MetadataRequestData().setTopics(null), (short) 12);
            int throttleMs = 0;
            for (int i = 0; i < 1_000 && throttleMs == 0; i++) {
                MetadataResponse response = connection.send(request);
                throttleMs = response.throttleTimeMs();
            }
            assertTrue(throttleMs > 0, "a response carried throttle_time_ms");
            long sent = System.nanoTime();
            connection.send(request);
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            // the connection stays muted until the throttle ends: the next request is read only then
            assertTrue(waitedMs >= throttleMs * 0.8, "next answer after " + waitedMs + " ms, throttle "
                    + throttleMs + " ms");
        }
        assertTrue(brokerMetric("Request", "throttle-time", "raw-test-client") > 0);
    }

    /**
     * Produces 1 KiB records as fast as the producer takes them until {@value #MEASURED_UNTIL_S} s after
     * {@code startNanos}; returns the bytes acknowledged from {@value #MEASURED_FROM_S} s on (the first seconds are
     * the burst a fresh quota sensor lets through).
     */
    private static Callable<Long> ackedInWindow(KafkaProducer<byte[], byte[]> producer, long startNanos) {
        return () -> {
            AtomicLong acked = new AtomicLong();
            long from = startNanos + TimeUnit.SECONDS.toNanos(MEASURED_FROM_S);
            long until = startNanos + TimeUnit.SECONDS.toNanos(MEASURED_UNTIL_S);
            while (System.nanoTime() < until) {
                producer.send(new ProducerRecord<>("produced", KIB), (metadata, e) -> {
                    long now = System.nanoTime();
                    if (e == null && now >= from && now < until) {
                        acked.addAndGet(KIB.length);
                    }
                });
            }
            producer.flush();
            return acked.get();
        };
    }

    private static KafkaProducer<byte[], byte[]> producer(String clientId) {
        return cluster.producer(Map.of(ProducerConfig.CLIENT_ID_CONFIG, clientId, ProducerConfig.ACKS_CONFIG, "1",
                ProducerConfig.LINGER_MS_CONFIG, 5, ProducerConfig.BATCH_SIZE_CONFIG, 64 * 1024,
                ProducerConfig.BUFFER_MEMORY_CONFIG, 4 * MIB));
    }

    private static void setQuota(String clientId, String key, double value) throws Exception {
        try (Admin admin = cluster.admin()) {
            admin.alterClientQuotas(List.of(new ClientQuotaAlteration(new ClientQuotaEntity(Map.of(
                    ClientQuotaEntity.CLIENT_ID, clientId)), List.of(new ClientQuotaAlteration.Op(key, value)))))
                    .all().get(30, TimeUnit.SECONDS);
        }
    }

    private static double metric(KafkaProducer<?, ?> producer, String name) {
        return value(producer.metrics(), name);
    }

    private static double consumerMetric(KafkaConsumer<?, ?> consumer, String name) {
        return value(consumer.metrics(), name);
    }

    private static double value(Map<MetricName, ? extends Metric> metrics, String name) {
        return metrics.entrySet().stream().filter(e -> e.getKey().name().equals(name)
                        && e.getKey().group().endsWith("-metrics") && !e.getKey().tags().containsKey("node-id"))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).findFirst().orElse(Double.NaN);
    }

    /** Kafka's quota metric of one client on the broker (group Produce/Fetch/Request, tag client-id). */
    private static double brokerMetric(String group, String name, String clientId) {
        return cluster.broker(0).metrics().kafkaMetrics().metrics().entrySet().stream()
                .filter(e -> e.getKey().group().equals(group) && e.getKey().name().equals(name)
                        && clientId.equals(e.getKey().tags().get("client-id")))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue()).max().orElse(Double.NaN);
    }
}
