package io.twinlog.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Runs every workload against one started system, in a fixed order: a warm-up (produce with both acks settings to
 * an 8-partition topic, then consume it; not reported), then for 1 and 8 partitions: produce with {@code acks=1}
 * to a fresh topic, produce with {@code acks=all} to another fresh topic, and consume the {@code acks=all} topic.
 * Topic names start with the system's name and the round so no two brokers in this JVM share per-topic metric
 * names.
 */
final class SystemBenchmark {
    private static final Logger log = LoggerFactory.getLogger(SystemBenchmark.class);
    static final List<Integer> PARTITION_COUNTS = List.of(1, 8);
    private static final int WARM_UP_PARTITIONS = 8;
    private static final Duration CONSUME_STALL_TIMEOUT = Duration.ofSeconds(30);

    private final ClusterUnderTest cluster;
    private final BenchOptions options;
    private final Payloads payloads;
    private final int round;

    SystemBenchmark(ClusterUnderTest cluster, int round, BenchOptions options, Payloads payloads) {
        this.cluster = cluster;
        this.round = round;
        this.options = options;
        this.payloads = payloads;
    }

    List<Measurement> run() throws Exception {
        String bootstrapServers = cluster.bootstrapServers();
        List<Measurement> measurements = new ArrayList<>();
        Map<String, Object> adminConfigs = new HashMap<>(cluster.clientSecurity());
        adminConfigs.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        try (Admin admin = Admin.create(adminConfigs)) {
            BenchTopics topics = new BenchTopics(admin);
            ProduceBenchmark produce = new ProduceBenchmark(bootstrapServers, payloads, cluster.clientSecurity());
            ConsumeBenchmark consume = new ConsumeBenchmark(bootstrapServers, CONSUME_STALL_TIMEOUT,
                    cluster.clientSecurity());

            if (options.warmUpRecords() > 0) {
                String warmUpTopic = topicPrefix() + "-warmup";
                log.info("[{}] Warm-up: {} records per acks setting to {}", cluster.name(), options.warmUpRecords(),
                        warmUpTopic);
                topics.create(warmUpTopic, WARM_UP_PARTITIONS);
                for (Acks acks : Acks.values()) {
                    produce.run(warmUpTopic, acks, options.warmUpRecords());
                }
                consume.run(warmUpTopic, WARM_UP_PARTITIONS, 2L * options.warmUpRecords());
            }

            for (int partitions : PARTITION_COUNTS) {
                String consumeTopic = null;
                for (Acks acks : Acks.values()) {
                    String topic = topicPrefix() + "-p" + partitions + "-acks" + acks.config();
                    topics.create(topic, partitions);
                    ProduceBenchmark.Result result = produce.run(topic, acks, options.records());
                    measurements.add(new Measurement(Measurement.produceWorkload(partitions, acks), cluster.name(),
                            round, result.throughput(), Optional.of(result.latency())));
                    consumeTopic = topic;
                }
                Throughput consumed = consume.run(consumeTopic, partitions, options.records());
                measurements.add(new Measurement(Measurement.consumeWorkload(partitions), cluster.name(), round,
                        consumed, Optional.empty()));
            }
        }
        return measurements;
    }

    private String topicPrefix() {
        return cluster.name() + "-r" + round;
    }
}
