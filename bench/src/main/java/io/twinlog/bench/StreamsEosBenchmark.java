package io.twinlog.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * A Kafka Streams {@code exactly_once_v2} pipeline on a started three-broker cluster (phase {@code txn}): an input
 * topic of 8 partitions (RF 3, {@code min.insync.replicas=2}) is filled with {@value #RECORDS} records of
 * {@value #VALUE_BYTES} B first; then an application with 2 stream threads copies it to an output topic through a
 * {@code mapValues} (a transaction per thread every {@code commit.interval.ms}, Streams' EOS default of 100 ms, with
 * the input offsets committed in it). After {@value #WARM_UP_SECONDS} s, the records committed to the output
 * (read_committed end offsets, which count one marker per partition per commit, under 0.2 % here) are counted over
 * {@value #MEASURED_SECONDS} s. If the application reached the end of the input inside that window the figure is a
 * lower bound, and the log says so.
 */
final class StreamsEosBenchmark {
    private static final Logger log = LoggerFactory.getLogger(StreamsEosBenchmark.class);
    static final int PARTITIONS = 8;
    static final int RECORDS = 12_000_000;
    static final int VALUE_BYTES = 100;
    static final int STREAM_THREADS = 2;
    static final long WARM_UP_SECONDS = 5;
    static final long MEASURED_SECONDS = 20;

    /** The stream threads' and their producers' cumulative figures logged per window (see {@link #timeTotals}). */
    private static final Set<String> TIMED = Set.of("flush-time-ns-total", "txn-begin-time-ns-total",
            "txn-send-offsets-time-ns-total", "txn-commit-time-ns-total", "blocked-time-ns-total",
            "commit-total", "process-total", "poll-total");
    /** The main consumers' averages: a stream thread reads a fetch response only while it polls. */
    private static final Set<String> CONSUMER_AVERAGES = Set.of("fetch-latency-avg", "time-between-poll-avg");

    private final ReplicatedCluster cluster;
    private final int round;
    private final List<String> warnings;

    StreamsEosBenchmark(ReplicatedCluster cluster, int round, List<String> warnings) {
        this.cluster = cluster;
        this.round = round;
        this.warnings = warnings;
    }

    static String workload() {
        return "streams eos p=" + PARTITIONS + " mapValues RF=3";
    }

    Measurement run() throws Exception {
        String bootstrapServers = cluster.bootstrapServers();
        String input = "bench-eos-in-r" + round;
        String output = "bench-eos-out-r" + round;
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            BenchTopics topics = new BenchTopics(admin);
            topics.createReplicated(input, PARTITIONS, ReplicatedBenchmark.REPLICATION_FACTOR,
                    ReplicatedBenchmark.MIN_IN_SYNC_REPLICAS);
            topics.createReplicated(output, PARTITIONS, ReplicatedBenchmark.REPLICATION_FACTOR,
                    ReplicatedBenchmark.MIN_IN_SYNC_REPLICAS);
        }
        log.info("[{}] Streams EOS: filling {} with {} records", cluster.name(), input, RECORDS);
        byte[] value = new byte[VALUE_BYTES];
        Arrays.fill(value, (byte) 'x');
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(ClientSettings.producer(bootstrapServers,
                Acks.ALL))) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(input, value));
            }
            producer.flush();
        }
        Path stateDir = Files.createTempDirectory("bench-eos-state");
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .mapValues(v -> v)
                .to(output, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        Properties config = new Properties();
        config.put(StreamsConfig.APPLICATION_ID_CONFIG, "bench-eos-r" + round);
        config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        config.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        config.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, STREAM_THREADS);
        config.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, ReplicatedBenchmark.REPLICATION_FACTOR);
        config.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        config.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        long committed;
        long elapsedNanos;
        try (KafkaStreams streams = new KafkaStreams(builder.build(), config);
             KafkaConsumer<byte[], byte[]> counter = committedCounter(bootstrapServers)) {
            List<TopicPartition> partitions = IntStream.range(0, PARTITIONS)
                    .mapToObj(p -> new TopicPartition(output, p)).toList();
            streams.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (committed(counter, partitions) == 0 && System.nanoTime() < deadline) {
                // a bench, not a test: waiting for the first commit to count from it
                Thread.sleep(50);
            }
            Thread.sleep(TimeUnit.SECONDS.toMillis(WARM_UP_SECONDS));
            long before = committed(counter, partitions);
            Map<String, Double> timesBefore = timeTotals(streams);
            ThreadCpu cpuBefore = ThreadCpu.snapshot();
            long startNanos = System.nanoTime();
            Thread.sleep(TimeUnit.SECONDS.toMillis(MEASURED_SECONDS));
            long after = committed(counter, partitions);
            elapsedNanos = System.nanoTime() - startNanos;
            log.info("[{}] Streams EOS, the JVM's threads over the window:{}", cluster.name(),
                    ThreadCpu.describe(ThreadCpu.snapshot().coresSince(cpuBefore, elapsedNanos), 12));
            logTimeSpent(streams, timesBefore, timeTotals(streams), elapsedNanos);
            committed = after - before;
            if (after >= RECORDS) {
                String warning = cluster.name() + " round " + round + ": the Streams application reached the end "
                        + "of its " + RECORDS + " input records inside the measured window; its figure is a "
                        + "lower bound";
                log.warn(warning);
                warnings.add(warning);
            }
            streams.close(Duration.ofSeconds(30));
        }
        Throughput throughput = new Throughput(committed, committed * VALUE_BYTES, elapsedNanos);
        log.info("[{}] Streams EOS: {} records committed in {} s: {} records/s", cluster.name(), committed,
                String.format("%.1f", throughput.seconds()), String.format("%.0f", throughput.recordsPerSecond()));
        return new Measurement(workload(), cluster.name(), round, throughput, Optional.empty());
    }

    /**
     * The clients' cumulative time totals, summed over the stream threads: where a thread's time goes (its
     * producer's flushes, offset sends and commits wait on the brokers; the rest is the thread's own work or its
     * polls).
     */
    private static Map<String, Double> timeTotals(KafkaStreams streams) {
        Map<String, Double> totals = new TreeMap<>();
        for (Metric metric : streams.metrics().values()) {
            MetricName name = metric.metricName();
            boolean producerTime = name.group().equals("producer-metrics") && TIMED.contains(name.name());
            boolean threadTime = name.group().equals("stream-thread-metrics") && TIMED.contains(name.name());
            if ((producerTime || threadTime) && metric.metricValue() instanceof Double value) {
                totals.merge(name.name(), value, Double::sum);
            }
        }
        return totals;
    }

    private void logTimeSpent(KafkaStreams streams, Map<String, Double> before, Map<String, Double> after,
                              long elapsedNanos) {
        StringBuilder line = new StringBuilder();
        for (Map.Entry<String, Double> entry : after.entrySet()) {
            double delta = entry.getValue() - before.getOrDefault(entry.getKey(), 0.0);
            String shown = entry.getKey().endsWith("-ns-total")
                    ? String.format("%.1f%% of the threads' time",
                            100.0 * delta / ((double) STREAM_THREADS * elapsedNanos))
                    : String.format("%.0f", delta);
            line.append(String.format("%n  %s: %s", entry.getKey(), shown));
        }
        for (Metric metric : streams.metrics().values()) {
            MetricName name = metric.metricName();
            String client = name.tags().getOrDefault("client-id", "");
            if (CONSUMER_AVERAGES.contains(name.name()) && client.endsWith("StreamThread-1-consumer")) {
                line.append(String.format("%n  thread 1's consumer %s: %.1f ms", name.name(),
                        (Double) metric.metricValue()));
            }
        }
        log.info("[{}] Streams EOS, the stream threads over the window:{}", cluster.name(), line);
    }

    private static KafkaConsumer<byte[], byte[]> committedCounter(String bootstrapServers) {
        Properties p = ClientSettings.consumer(bootstrapServers);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        return new KafkaConsumer<>(p);
    }

    /** The output's last stable offsets, summed: what read_committed readers can see. */
    private static long committed(KafkaConsumer<byte[], byte[]> counter, List<TopicPartition> partitions) {
        return counter.endOffsets(partitions).values().stream().mapToLong(Long::longValue).sum();
    }
}
