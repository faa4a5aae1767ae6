package io.twinlog.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * Transactional produce on a started three-broker cluster (phase {@code txn}, not in the default set): one producer
 * with a {@code transactional.id} sends records without keys to an 8-partition topic (replication factor 3,
 * {@code min.insync.replicas=2}) and commits every {@value #TRANSACTION_MS} ms, as
 * {@code kafka-producer-perf-test --transaction-duration-ms 100} does; each system's default
 * {@code transaction.version} (2 on both: the epoch bumped at every commit, partitions added by their leaders).
 * {@value #WARM_UP_SECONDS} s of transactions are not measured; then {@value #MEASURED_SECONDS} s are: records
 * committed per second, and the time {@code commitTransaction()} takes (its p50/p99 are the latency columns: the
 * flush of the transaction's last records, EndTxn, and on the coordinator the PREPARE write).
 */
final class TransactionsBenchmark {
    private static final Logger log = LoggerFactory.getLogger(TransactionsBenchmark.class);
    static final int PARTITIONS = 8;
    static final long TRANSACTION_MS = 100;
    static final long WARM_UP_SECONDS = 5;
    static final long MEASURED_SECONDS = 20;

    private final ReplicatedCluster cluster;
    private final Payloads payloads;
    private final int round;

    TransactionsBenchmark(ReplicatedCluster cluster, int round, Payloads payloads) {
        this.cluster = cluster;
        this.round = round;
        this.payloads = payloads;
    }

    static String workload() {
        return "txn p=" + PARTITIONS + " commit/" + TRANSACTION_MS + "ms RF=3";
    }

    List<Measurement> run() throws Exception {
        String bootstrapServers = cluster.bootstrapServers();
        String topic = "bench-txn-r" + round;
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            new BenchTopics(admin).createReplicated(topic, PARTITIONS, ReplicatedBenchmark.REPLICATION_FACTOR,
                    ReplicatedBenchmark.MIN_IN_SYNC_REPLICAS);
        }
        Properties config = ClientSettings.producer(bootstrapServers, Acks.ALL);
        config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "bench-txn-" + round);
        Throughput throughput;
        LatencyRecorder commits = new LatencyRecorder((int) (MEASURED_SECONDS * 1_000 / TRANSACTION_MS * 4));
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
            producer.initTransactions();
            producer.partitionsFor(topic);
            log.info("[{}] Transactions: {} s of warm-up on {}", cluster.name(), WARM_UP_SECONDS, topic);
            transactFor(producer, topic, TimeUnit.SECONDS.toNanos(WARM_UP_SECONDS), new LatencyRecorder(1));
            log.info("[{}] Transactions: {} s measured", cluster.name(), MEASURED_SECONDS);
            throughput = transactFor(producer, topic, TimeUnit.SECONDS.toNanos(MEASURED_SECONDS), commits);
        }
        LatencyRecorder.LatencySummary commitLatency = commits.summary();
        log.info("[{}] Committed {} records in {} s: {} records/s; commit p50 {} ms, p99 {} ms", cluster.name(),
                throughput.records(), String.format("%.1f", throughput.seconds()),
                String.format("%.0f", throughput.recordsPerSecond()), String.format("%.1f", commitLatency.p50Ms()),
                String.format("%.1f", commitLatency.p99Ms()));
        return List.of(new Measurement(workload(), cluster.name(), round, throughput, Optional.of(commitLatency)));
    }

    /**
     * Transactions of {@value #TRANSACTION_MS} ms each until {@code durationNanos} have passed; every record is
     * committed (a failed send makes {@code commitTransaction()} throw, which ends the run).
     */
    private Throughput transactFor(KafkaProducer<byte[], byte[]> producer, String topic, long durationNanos,
                                   LatencyRecorder commits) {
        long records = 0;
        long valueBytes = 0;
        long startNanos = System.nanoTime();
        long transactionNanos = TimeUnit.MILLISECONDS.toNanos(TRANSACTION_MS);
        while (System.nanoTime() - startNanos < durationNanos) {
            producer.beginTransaction();
            long transactionStart = System.nanoTime();
            while (System.nanoTime() - transactionStart < transactionNanos) {
                byte[] value = payloads.get(records);
                producer.send(new ProducerRecord<>(topic, value));
                records++;
                valueBytes += value.length;
            }
            long commitStart = System.nanoTime();
            producer.commitTransaction();
            commits.record(System.nanoTime() - commitStart);
        }
        return new Throughput(records, valueBytes, System.nanoTime() - startNanos);
    }
}
