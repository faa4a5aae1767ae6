package io.twinlog.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

/**
 * Incremental fetch sessions (KIP-227) at their use case: one consumer assigned {@value #PARTITIONS} partitions of
 * which few have new data. A producer writes {@value #RECORDS_PER_SECOND} records/s of 1 KiB round-robin over the
 * partitions, from the thread that polls the consumer; after the window's warm-up, over its measured interval:
 * the consumer's fetch requests per second, the bytes it sent per request and received per response (its network
 * client's totals, nearly all of them fetches: no group, no other requests in steady state), and the system's CPU
 * ({@link SystemCpu}) per second. Run on one broker with the broker's default
 * {@code max.incremental.fetch.session.cache.slots} (sessions) and with 0 (every fetch a full one).
 */
final class FetchSessionsBenchmark {
    private static final Logger log = LoggerFactory.getLogger(FetchSessionsBenchmark.class);
    static final int PARTITIONS = 1000;
    static final int RECORDS_PER_SECOND = 100;
    static final String SLOTS_CONFIG = "max.incremental.fetch.session.cache.slots";

    /** The two broker settings compared. */
    enum Sessions {
        ON("sessions", Map.of()),
        OFF("no sessions", Map.of(SLOTS_CONFIG, "0"));

        private final String label;
        private final Map<String, String> brokerOverrides;

        Sessions(String label, Map<String, String> brokerOverrides) {
            this.label = label;
            this.brokerOverrides = brokerOverrides;
        }

        Map<String, String> brokerOverrides() {
            return brokerOverrides;
        }
    }

    private final ClusterUnderTest cluster;
    private final int round;
    private final BenchOptions options;
    private final Payloads payloads;

    FetchSessionsBenchmark(ClusterUnderTest cluster, int round, BenchOptions options, Payloads payloads) {
        this.cluster = cluster;
        this.round = round;
        this.options = options;
        this.payloads = payloads;
    }

    List<SystemFigure> run(Sessions sessions) throws Exception {
        String bootstrap = cluster.bootstrapServers();
        String topic = cluster.name() + "-r" + round + "-sessions-" + sessions.name().toLowerCase();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            new BenchTopics(admin).create(topic, PARTITIONS);
        }
        List<TopicPartition> assignment = IntStream.range(0, PARTITIONS)
                .mapToObj(p -> new TopicPartition(topic, p)).toList();
        AtomicReference<Exception> sendError = new AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(ClientSettings.producer(bootstrap,
                Acks.ONE));
             KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(ClientSettings.consumer(bootstrap))) {
            consumer.assign(assignment);
            consumer.seekToEnd(assignment);
            SteadyWindow.Bounds bounds = options.window().from(System.nanoTime());
            long intervalNanos = 1_000_000_000L / RECORDS_PER_SECOND;
            long nextSendNanos = System.nanoTime();
            long sent = 0;
            long received = 0;
            Totals before = null;
            SystemCpu.Snapshot cpuBefore = null;
            ThreadCpu threadsBefore = null;
            long now = System.nanoTime();
            while (now < bounds.endNanos()) {
                if (before == null && now >= bounds.beginNanos()) {
                    before = Totals.of(consumer);
                    cpuBefore = SystemCpu.snapshot();
                    threadsBefore = ThreadCpu.snapshot();
                }
                while (nextSendNanos <= now) {
                    producer.send(new ProducerRecord<>(topic, (int) (sent % PARTITIONS), null, payloads.get(sent)),
                            (metadata, e) -> {
                                if (e != null) {
                                    sendError.compareAndSet(null, e);
                                }
                            });
                    sent++;
                    nextSendNanos += intervalNanos;
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(5));
                received += records.count();
                now = System.nanoTime();
            }
            Totals after = Totals.of(consumer);
            SystemCpu.Snapshot cpuAfter = SystemCpu.snapshot();
            ThreadCpu threadsAfter = ThreadCpu.snapshot();
            if (sendError.get() != null) {
                throw new IllegalStateException("A send to " + topic + " failed", sendError.get());
            }
            if (before == null) {
                throw new IllegalStateException("The measured interval of " + topic + " never began");
            }
            double seconds = bounds.lengthNanos() / 1e9;
            double requests = after.requests - before.requests;
            double responses = after.responses - before.responses;
            List<SystemFigure> figures = new ArrayList<>();
            String suffix = " (" + sessions.label + ")";
            figures.add(figure("fetch requests/s" + suffix, requests / seconds, "1/s", false));
            figures.add(figure("bytes per fetch request" + suffix,
                    (after.outgoingBytes - before.outgoingBytes) / requests, "B", false));
            figures.add(figure("bytes per fetch response" + suffix,
                    (after.incomingBytes - before.incomingBytes) / responses, "B", false));
            figures.add(figure("broker CPU" + suffix, cpuAfter.systemSecondsSince(cpuBefore) / seconds, "cores",
                    false));
            log.info("[{}] {}: {} records sent, {} received; {}; where the cores went:{}", cluster.name(),
                    sessions.label, sent, received, figures,
                    ThreadCpu.describe(threadsAfter.coresSince(threadsBefore, bounds.lengthNanos()), 8));
            return figures;
        }
    }

    private SystemFigure figure(String name, double value, String unit, boolean higherIsBetter) {
        return new SystemFigure(cluster.name(), round, name, value, unit, higherIsBetter);
    }

    /** The consumer's network client totals (all requests, almost all of them fetches here). */
    private record Totals(double requests, double responses, double outgoingBytes, double incomingBytes) {
        static Totals of(KafkaConsumer<?, ?> consumer) {
            Map<MetricName, ? extends Metric> metrics = consumer.metrics();
            return new Totals(total(metrics, "request-total"), total(metrics, "response-total"),
                    total(metrics, "outgoing-byte-total"), total(metrics, "incoming-byte-total"));
        }

        private static double total(Map<MetricName, ? extends Metric> metrics, String name) {
            return metrics.entrySet().stream()
                    .filter(e -> e.getKey().name().equals(name) && e.getKey().group().equals("consumer-metrics"))
                    .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue())
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException("The consumer has no metric " + name));
        }
    }
}
