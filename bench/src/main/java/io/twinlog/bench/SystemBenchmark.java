package io.twinlog.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Runs every workload against one started system, in a fixed order, each for the options' {@link SteadyWindow}
 * (a warm-up, then the measured interval), after a warm-up of the fresh cluster (acks=all to an 8-partition topic
 * for the window's warm-up time: the first workload after a cluster start ran at half speed without it, as the
 * JIT recompiled code both systems share): for 1 and 8 partitions, produce with {@code acks=1} to a fresh topic,
 * produce with {@code acks=all} to another fresh topic, and consume the {@code acks=all} topic. Topic names start
 * with the system's name and the round so no two brokers in this JVM share per-topic metric names; their size is
 * bounded ({@link BenchTopics#boundedSize}) so that the logs stay in memory.
 */
final class SystemBenchmark {
    static final List<Integer> PARTITION_COUNTS = List.of(1, 8);
    private static final Duration CONSUME_STALL_TIMEOUT = Duration.ofSeconds(30);
    private static final int WARM_UP_PARTITIONS = 8;

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
            SteadyWindow window = options.window();
            String warmUpTopic = topicPrefix() + "-warmup";
            topics.createBounded(warmUpTopic, WARM_UP_PARTITIONS);
            produce.warmUp(warmUpTopic, window.warmUp());
            for (int partitions : PARTITION_COUNTS) {
                String consumeTopic = null;
                for (Acks acks : options.singleNodeAcks()) {
                    String topic = topicPrefix() + "-p" + partitions + "-acks" + acks.config();
                    topics.createBounded(topic, partitions);
                    ProduceBenchmark.Result result = produce.run(topic, acks, window);
                    measurements.add(new Measurement(Measurement.produceWorkload(partitions, acks), cluster.name(),
                            round, result.throughput(), Optional.of(result.latency()), result.systemCpuSeconds()));
                    consumeTopic = topic;
                }
                ConsumeBenchmark.Measured consumed = consume.run(consumeTopic, partitions, window);
                measurements.add(new Measurement(Measurement.consumeWorkload(partitions), cluster.name(), round,
                        consumed.throughput(), Optional.empty(), consumed.systemCpuSeconds()));
            }
        }
        return measurements;
    }

    private String topicPrefix() {
        return cluster.name() + "-r" + round;
    }
}
