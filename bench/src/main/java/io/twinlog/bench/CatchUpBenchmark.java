package io.twinlog.bench;

import io.twinlog.clients.mirror.MirrorAdmin;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Phase {@code catch-up} (issue 27 point 5): how fast a copy of a large amount of existing data is made. Twinlog: a
 * destination cluster mirrors a topic that a source cluster already holds ({@code catchUpMiB} of records in
 * {@value #PARTITIONS} partitions), timed from StartMirrorTopics until every destination partition's end offset
 * reaches the source's. Kafka 4.4: the same data on one broker of a three-broker cluster (replication factor 1), then
 * every partition reassigned to that broker and a second one, timed from AlterPartitionReassignments until no
 * reassignment is left (the new follower replica caught up and joined the ISR). Each side copies the same bytes from
 * one broker to another over loopback on this disk, with its defaults (Kafka: {@code num.replica.fetchers=1}; Twinlog:
 * its mirror fetchers). Also the system's CPU seconds per GiB copied ({@link SystemCpu}).
 */
final class CatchUpBenchmark {
    private static final Logger log = LoggerFactory.getLogger(CatchUpBenchmark.class);
    static final int PARTITIONS = 8;
    private static final String TOPIC = "catch-up";
    private static final String MIRROR = "catch-up";
    private static final long TIMEOUT_MS = 1_800_000;
    private static final long POLL_MS = 20;
    private static final int KAFKA_LEADER = 0;
    private static final int KAFKA_FOLLOWER = 1;

    private final int round;
    private final BenchOptions options;
    private final Payloads payloads;

    CatchUpBenchmark(int round, BenchOptions options, Payloads payloads) {
        this.round = round;
        this.options = options;
        this.payloads = payloads;
    }

    private long records() {
        return ((long) options.catchUpMiB() << 20) / payloads.recordSizeBytes();
    }

    private double gib() {
        return (double) records() * payloads.recordSizeBytes() / (1L << 30);
    }

    List<SystemFigure> run(String system) throws Exception {
        return switch (system) {
            case "twinlog" -> runTwinlog();
            case "kafka" -> runKafka();
            default -> throw new IllegalArgumentException("Unknown system " + system);
        };
    }

    private List<SystemFigure> runTwinlog() throws Exception {
        try (TwinlogCluster source = new TwinlogCluster(TempDirectories.create("catch-up-src"));
             TwinlogCluster destination = new TwinlogCluster(TempDirectories.create("catch-up-dst"))) {
            source.start();
            destination.start();
            try (Admin src = admin(source.bootstrapServers()); Admin dst = admin(destination.bootstrapServers());
                 MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
                new BenchTopics(src).create(TOPIC, PARTITIONS);
                double fillSeconds = fill(source.bootstrapServers());
                Map<TopicPartition, Long> sourceEnds = endOffsets(src);
                mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", source.bootstrapServers()));
                SystemCpu.Snapshot cpuBefore = SystemCpu.snapshot();
                long start = System.nanoTime();
                Map<String, ?> errors = mirrors.startMirrorTopics(MIRROR, List.of(TOPIC), List.of(), List.of());
                if (!errors.isEmpty()) {
                    throw new IllegalStateException("StartMirrorTopics failed: " + errors);
                }
                awaitCondition("the destination's end offsets reach the source's", () -> {
                    if (!dst.listTopics().names().get(10, TimeUnit.SECONDS).contains(TOPIC)) {
                        return "topic not created yet";
                    }
                    return behind(sourceEnds, endOffsets(dst));
                });
                return figures("twinlog", "StartMirrorTopics until the destination caught up", fillSeconds,
                        (System.nanoTime() - start) / 1e9, SystemCpu.snapshot().systemSecondsSince(cpuBefore));
            }
        }
    }

    private List<SystemFigure> runKafka() throws Exception {
        try (KafkaReplicatedCluster cluster = new KafkaReplicatedCluster(TempDirectories.create("catch-up-kafka"),
                options.sessionTimeoutMs(), null)) {
            cluster.start();
            try (Admin admin = admin(cluster.bootstrapServers())) {
                Map<Integer, List<Integer>> onLeader = new HashMap<>();
                Map<TopicPartition, Optional<NewPartitionReassignment>> addFollower = new HashMap<>();
                for (int p = 0; p < PARTITIONS; p++) {
                    onLeader.put(p, List.of(KAFKA_LEADER));
                    addFollower.put(new TopicPartition(TOPIC, p),
                            Optional.of(new NewPartitionReassignment(List.of(KAFKA_LEADER, KAFKA_FOLLOWER))));
                }
                admin.createTopics(List.of(new NewTopic(TOPIC, onLeader))).all().get(60, TimeUnit.SECONDS);
                awaitCondition("every partition led", () -> {
                    TopicDescription d = admin.describeTopics(List.of(TOPIC)).allTopicNames()
                            .get(10, TimeUnit.SECONDS).get(TOPIC);
                    long led = d.partitions().stream().filter(p -> p.leader() != null).count();
                    return led == PARTITIONS ? null : led + " of " + PARTITIONS + " led";
                });
                double fillSeconds = fill(cluster.bootstrapServers());
                SystemCpu.Snapshot cpuBefore = SystemCpu.snapshot();
                long start = System.nanoTime();
                admin.alterPartitionReassignments(addFollower).all().get(60, TimeUnit.SECONDS);
                // the controller answers ListPartitionReassignments, any broker DescribeTopics: done when both say so
                awaitCondition("no reassignment in progress and both replicas in sync", () -> {
                    int left = admin.listPartitionReassignments().reassignments().get(10, TimeUnit.SECONDS).size();
                    if (left > 0) {
                        return left + " partitions still reassigning";
                    }
                    TopicDescription d = admin.describeTopics(List.of(TOPIC)).allTopicNames()
                            .get(10, TimeUnit.SECONDS).get(TOPIC);
                    long inSync = d.partitions().stream().filter(p -> p.isr().size() == 2).count();
                    return inSync == PARTITIONS ? null : inSync + " of " + PARTITIONS + " with both replicas in sync";
                });
                double seconds = (System.nanoTime() - start) / 1e9;
                double cpu = SystemCpu.snapshot().systemSecondsSince(cpuBefore);
                return figures("kafka", "reassignment until the new follower caught up", fillSeconds, seconds, cpu);
            }
        }
    }

    private List<SystemFigure> figures(String system, String what, double fillSeconds, double seconds, double cpu) {
        log.info("[{}] catch-up: {} GiB filled in {} s; {} in {} s ({} MiB/s), {} CPU-seconds", system,
                String.format("%.1f", gib()), String.format("%.1f", fillSeconds), what,
                String.format("%.1f", seconds), String.format("%.0f", gib() * 1024 / seconds),
                String.format("%.1f", cpu));
        return List.of(
                new SystemFigure(system, round, "catch up " + options.catchUpMiB() + " MiB: time", seconds, "s",
                        false),
                new SystemFigure(system, round, "catch up: copy rate", gib() * 1024 / seconds, "MiB/s",
                        true),
                new SystemFigure(system, round, "catch up: CPU per GiB copied", cpu / gib(), "CPU-s/GiB",
                        false),
                new SystemFigure(system, round, "fill (producer, acks=1): rate", gib() * 1024 / fillSeconds, "MiB/s",
                        true));
    }

    /** Produces {@link #records()} records round-robin into the topic; returns the seconds it took. */
    private double fill(String bootstrap) {
        long start = System.nanoTime();
        AtomicReference<Exception> error = new AtomicReference<>();
        long count = records();
        try (KafkaProducer<byte[], byte[]> producer =
                     new KafkaProducer<>(ClientSettings.producer(bootstrap, Acks.ONE))) {
            for (long i = 0; i < count && error.get() == null; i++) {
                producer.send(new ProducerRecord<>(TOPIC, (int) (i % PARTITIONS), null, payloads.get(i)), (m, e) -> {
                    if (e != null) {
                        error.compareAndSet(null, e);
                    }
                });
            }
            producer.flush();
        }
        if (error.get() != null) {
            throw new IllegalStateException("filling " + TOPIC + " failed", error.get());
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        log.info("catch-up: filled {} with {} records ({} GiB) in {} s", TOPIC, count, String.format("%.1f", gib()),
                String.format("%.1f", seconds));
        return seconds;
    }

    private static String behind(Map<TopicPartition, Long> sourceEnds, Map<TopicPartition, Long> ends) {
        long missing = 0;
        for (Map.Entry<TopicPartition, Long> e : sourceEnds.entrySet()) {
            missing += Math.max(0, e.getValue() - ends.getOrDefault(e.getKey(), 0L));
        }
        return missing == 0 ? null : missing + " records behind";
    }

    private static Map<TopicPartition, Long> endOffsets(Admin admin) throws Exception {
        Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            specs.put(new TopicPartition(TOPIC, p), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> out = new HashMap<>();
        admin.listOffsets(specs).all().get(10, TimeUnit.SECONDS).forEach((tp, info) -> out.put(tp, info.offset()));
        return out;
    }

    /** What is still missing, or null once the awaited state holds. */
    private interface Pending {
        String missing() throws Exception;
    }

    private static void awaitCondition(String what, Pending pending) throws Exception {
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        String last = "nothing yet";
        Exception lastError = null;
        while (System.currentTimeMillis() < deadline) {
            try {
                last = pending.missing();
                lastError = null;
                if (last == null) {
                    return;
                }
            } catch (Exception e) {
                last = e.toString();   // e.g. a partition not hosted yet: polled again, and the cause if it lasts
                lastError = e;
            }
            Thread.sleep(POLL_MS);
        }
        throw new IllegalStateException("Timed out after " + TIMEOUT_MS + " ms waiting until " + what + "; last: "
                + last, lastError);
    }

    private static Admin admin(String bootstrap) {
        Map<String, Object> config = new HashMap<>();
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(AdminClientConfig.CLIENT_ID_CONFIG, "bench-catch-up");
        return Admin.create(config);
    }
}
