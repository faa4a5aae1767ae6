package io.twinlog.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Replicated produce on a started three-broker cluster: for 1 and 8 partitions one producer sends with
 * {@code acks=all} (idempotence on) to a fresh topic with replication factor 3 and {@code min.insync.replicas=2}
 * for the options' {@link SteadyWindow} (a warm-up, then the measured interval), after a warm-up of the fresh
 * cluster (acks=all to an 8-partition topic for the window's warm-up time, not reported). Every record is acknowledged only once
 * all three replicas have it (both systems wait for the whole ISR, which stays at three members unless a follower
 * falls {@code replica.lag.time.max.ms} behind). Producer settings are those of the single-node benchmark.
 */
final class ReplicatedBenchmark {
    private static final Logger log = LoggerFactory.getLogger(ReplicatedBenchmark.class);
    static final int REPLICATION_FACTOR = 3;
    static final int MIN_IN_SYNC_REPLICAS = 2;
    private static final int WARM_UP_PARTITIONS = 8;

    private final ReplicatedCluster cluster;
    private final BenchOptions options;
    private final Payloads payloads;
    private final int round;
    private final List<String> warnings = new ArrayList<>();

    ReplicatedBenchmark(ReplicatedCluster cluster, int round, BenchOptions options, Payloads payloads) {
        this.cluster = cluster;
        this.round = round;
        this.options = options;
        this.payloads = payloads;
    }

    static String workload(int partitions) {
        return "produce p=" + partitions + " acks=all RF=3";
    }

    List<Measurement> run() throws Exception {
        String bootstrapServers = cluster.bootstrapServers();
        List<Measurement> measurements = new ArrayList<>();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            BenchTopics topics = new BenchTopics(admin);
            ProduceBenchmark produce = new ProduceBenchmark(bootstrapServers, payloads);
            String warmUpTopic = topicPrefix() + "-warmup";
            topics.createReplicatedBounded(warmUpTopic, WARM_UP_PARTITIONS, REPLICATION_FACTOR,
                    MIN_IN_SYNC_REPLICAS);
            produce.warmUp(warmUpTopic, options.window().warmUp());
            for (int partitions : SystemBenchmark.PARTITION_COUNTS) {
                String topic = topicPrefix() + "-p" + partitions;
                topics.createReplicatedBounded(topic, partitions, REPLICATION_FACTOR, MIN_IN_SYNC_REPLICAS);
                ProduceBenchmark.Result result = produce.run(topic, Acks.ALL, options.window());
                checkInSyncReplicas(admin, topic);
                measurements.add(new Measurement(workload(partitions), cluster.name(), round, result.throughput(),
                        Optional.of(result.latency()), result.systemCpuSeconds()));
            }
        }
        return measurements;
    }

    /** Problems seen, for the report: partitions whose ISR was not complete after a measured workload. */
    List<String> warnings() {
        return warnings;
    }

    /**
     * A shrunken ISR would make acks=all cheaper (fewer replicas to wait for), so a run where it happened is
     * flagged in the report.
     */
    private void checkInSyncReplicas(Admin admin, String topic) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
        for (TopicPartitionInfo p : d.partitions()) {
            if (p.isr().size() < REPLICATION_FACTOR) {
                String w = ReportFormat.displayName(cluster.name()) + " round " + round + ": after the workload, "
                        + topic + "-" + p.partition() + " had ISR " + p.isr().stream().map(Node::idString).toList()
                        + " of replicas " + p.replicas().stream().map(Node::idString).toList();
                log.warn("[{}] {}", cluster.name(), w);
                warnings.add(w);
            }
        }
    }

    private String topicPrefix() {
        return cluster.name() + "-r" + round + "-rep";
    }
}
