package io.twinlog.bench;

import kafka.cluster.Partition;
import kafka.server.BrokerServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.image.TopicImage;
import org.apache.kafka.metadata.LeaderAndIsr;
import org.apache.kafka.metadata.PartitionRegistration;
import scala.Option;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Phase {@code mirror-scale}, Apache Kafka's side of issue 27 point 7: the time Kafka 4.4 takes to move leadership of
 * as many replication-factor-3 partitions as Twinlog's failover stops mirroring, on the same disk in the same run.
 * Both pay a leader epoch per partition and the leader-epoch checkpoint of each replica.
 *
 * <ol>
 *   <li>Set-up: three brokers and one KRaft controller with {@code auto.leader.rebalance.enable=false} (so nothing
 *       but the measured election moves a leader); the same topics, partitions and records per partition as
 *       {@link MirrorScaleBenchmark}'s source, placed by Kafka.</li>
 *   <li>The preferred leaders are moved away: every partition is reassigned to the same replicas rotated by one
 *       ({@code [a, b, c]} becomes {@code [b, c, a]}); nothing is copied and the leader stays {@code a}, which is no
 *       longer the preferred one. Awaited until the reassignments are done and every broker knows the new order.</li>
 *   <li>Measured: {@code Admin.electLeaders(PREFERRED)} for all partitions (the CLI's
 *       {@code kafka-leader-election.sh --election-type preferred --all-topic-partitions}); the call, and until
 *       every broker's metadata names the preferred replica as leader and that replica's {@code Partition} is
 *       leader (polled in-process every millisecond or so, as Twinlog's brokers' images are).</li>
 * </ol>
 */
final class KafkaLeaderMoveBenchmark {
    static final String SYSTEM = "kafka";
    private static final long TIMEOUT_MS = 600_000;

    private final BenchOptions options;
    private final ScaleTopics topics;
    private final ScaleFigures figures;

    KafkaLeaderMoveBenchmark(int round, BenchOptions options, Payloads payloads) {
        this.options = options;
        this.topics = new ScaleTopics(options, payloads);
        this.figures = new ScaleFigures(SYSTEM, round);
    }

    List<MirrorBenchmark.Figure> figures() {
        return figures.list();
    }

    private int partitions() {
        return options.mirrorPartitions();
    }

    private void add(String name, double value, String unit) {
        figures.add(name, value, unit);
    }

    void run() throws Exception {
        try (KafkaReplicatedCluster cluster = new KafkaReplicatedCluster(TempDirectories.create("leader-move"),
                options.sessionTimeoutMs(), null, Map.of("auto.leader.rebalance.enable", "false"))) {
            cluster.start();
            Map<String, Object> config = new HashMap<>();
            config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
            config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "300000");
            config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "120000");
            try (Admin admin = Admin.create(config)) {
                createAndFill(admin, cluster.bootstrapServers());
                Map<TopicPartition, List<Integer>> preferred = movePreferredAway(admin, cluster);
                elect(admin, cluster, preferred);
            }
        }
    }

    private void createAndFill(Admin admin, String bootstrap) throws Exception {
        long start = System.nanoTime();
        topics.create(admin);
        topics.awaitPartitions(admin, "all partitions led with a full ISR",
                p -> p.leader() != null && p.isr().size() == p.replicas().size());
        topics.produce(bootstrap, (long) partitions() * MirrorScaleBenchmark.RECORDS_PER_PARTITION, 0);
        add("set-up: " + partitions() + " partitions created and filled", (System.nanoTime() - start) / 1e6, "ms");
    }

    /**
     * Reassigns every partition to its replicas rotated by one and waits until that is done everywhere with the
     * leaders unmoved; returns the new replica lists (the first is the preferred leader).
     */
    private Map<TopicPartition, List<Integer>> movePreferredAway(Admin admin, KafkaReplicatedCluster cluster)
            throws Exception {
        Map<TopicPartition, List<Integer>> rotated = new HashMap<>();
        Map<TopicPartition, Optional<NewPartitionReassignment>> reassignments = new HashMap<>();
        topics.describe(admin).forEach((tp, info) -> {
            List<Integer> replicas = new ArrayList<>(info.replicas().stream().map(Node::id).toList());
            replicas.add(replicas.remove(0));
            rotated.put(tp, replicas);
            reassignments.put(tp, Optional.of(new NewPartitionReassignment(replicas)));
        });
        admin.alterPartitionReassignments(reassignments).all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        while (!admin.listPartitionReassignments().reassignments().get(TIMEOUT_MS, TimeUnit.MILLISECONDS).isEmpty()) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("Reassignments still in progress after " + TIMEOUT_MS + " ms");
            }
            Thread.sleep(10);
        }
        awaitBrokers(cluster, rotated, "every broker knows the rotated replicas", (broker, tp, replicas) -> {
            TopicImage topic = broker.metadataCache().currentImage().topics().getTopic(tp.topic());
            PartitionRegistration registration = topic == null ? null : topic.partitions().get(tp.partition());
            return registration != null
                    && Arrays.equals(registration.replicas, replicas.stream().mapToInt(Integer::intValue).toArray());
        });
        long notPreferred = topics.describe(admin).entrySet().stream()
                .filter(e -> e.getValue().leader().id() != rotated.get(e.getKey()).get(0)).count();
        if (notPreferred != partitions()) {
            throw new IllegalStateException("Only " + notPreferred + " of " + partitions()
                    + " partitions are led by a replica other than the preferred one after the reassignment");
        }
        return rotated;
    }

    private void elect(Admin admin, KafkaReplicatedCluster cluster, Map<TopicPartition, List<Integer>> preferred)
            throws Exception {
        long start = System.nanoTime();
        admin.electLeaders(ElectionType.PREFERRED, Set.copyOf(preferred.keySet())).all()
                .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        long callNanos = System.nanoTime() - start;
        long doneNanos = awaitBrokers(cluster, preferred, "every partition led by its preferred replica",
                (broker, tp, replicas) -> {
                    int leader = replicas.get(0);
                    Optional<LeaderAndIsr> state = broker.metadataCache().getLeaderAndIsr(tp.topic(),
                            tp.partition());
                    if (state.isEmpty() || state.get().leader() != leader) {
                        return false;
                    }
                    if (broker.config().brokerId() != leader) {
                        return true;
                    }
                    Option<Partition> partition = broker.replicaManager().onlinePartition(tp);
                    return partition.isDefined() && partition.get().isLeader()
                            && partition.get().getLeaderEpoch() == state.get().leaderEpoch();
                }) - start;
        add("leader move " + partitions() + " partitions: electLeaders(PREFERRED) call", callNanos / 1e6, "ms");
        add("leader move " + partitions() + " partitions: until all led by the preferred replica on every broker",
                doneNanos / 1e6, "ms");
    }

    /** What one broker must show for one partition with the given replicas. */
    private interface BrokerCheck {
        boolean holds(BrokerServer broker, TopicPartition partition, List<Integer> replicas);
    }

    /** Polls every broker until the check holds for every partition; returns the nanoTime it first did. */
    private static long awaitBrokers(KafkaReplicatedCluster cluster, Map<TopicPartition, List<Integer>> partitions,
                                     String what, BrokerCheck check) throws InterruptedException {
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        Map<Integer, Long> pending = new HashMap<>();
        while (true) {
            pending.clear();
            for (BrokerServer broker : cluster.brokers().values()) {
                long missing = partitions.entrySet().stream()
                        .filter(e -> !check.holds(broker, e.getKey(), e.getValue())).count();
                if (missing > 0) {
                    pending.put(broker.config().brokerId(), missing);
                }
            }
            if (pending.isEmpty()) {
                return System.nanoTime();
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("Timed out after " + TIMEOUT_MS + " ms waiting until " + what
                        + "; partitions still missing per broker: " + pending);
            }
            Thread.sleep(1);
        }
    }
}
