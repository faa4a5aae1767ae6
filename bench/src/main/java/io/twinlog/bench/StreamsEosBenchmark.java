package io.twinlog.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
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
    static final int RECORDS = 5_000_000;
    static final int VALUE_BYTES = 100;
    static final long WARM_UP_SECONDS = 5;
    static final long MEASURED_SECONDS = 20;

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
        config.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 2);
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
            long startNanos = System.nanoTime();
            Thread.sleep(TimeUnit.SECONDS.toMillis(MEASURED_SECONDS));
            long after = committed(counter, partitions);
            elapsedNanos = System.nanoTime() - startNanos;
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
