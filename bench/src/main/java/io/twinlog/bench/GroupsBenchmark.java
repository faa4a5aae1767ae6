package io.twinlog.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Phase {@code groups}: the group coordinator of one single-node system (Twinlog hosts Apache Kafka's group
 * coordinator; Kafka is a KRaft combined node), both with {@code offsets.topic.replication.factor=1} and
 * {@code group.initial.rebalance.delay.ms=0} ({@link TwinlogCluster}, {@link KafkaCluster}).
 *
 * <ol>
 *   <li><b>offset commits</b>: one consumer (classic protocol) subscribes to a topic of {@link #PARTITIONS}
 *       partitions, waits until it owns all of them, then calls {@code commitSync} with an offset for every
 *       partition, {@link BenchOptions#groupCommits()} times in a row (after {@link #WARM_UP_COMMITS} not
 *       reported); commits/s and per-call latency;</li>
 *   <li><b>stable assignment</b>: {@link #CONSUMERS} consumers of a fresh group subscribe to the same topic; time
 *       from the moment they all start polling until their assignments are disjoint, cover every partition and are
 *       balanced (sizes differ by at most one, so nobody still holds partitions it is about to give up); once with
 *       {@code group.protocol=classic} and once with {@code group.protocol=consumer} (KIP-848), each
 *       {@link BenchOptions#groupRepetitions()} times after one repetition not reported; the round's figure is the
 *       median.</li>
 * </ol>
 *
 * Threading: each consumer of the stable-assignment measurement lives on its own thread (a consumer must be used
 * by one thread) and publishes its assignment after every poll into a shared {@link AssignmentBoard}; the first
 * publication that completes the assignment records the time and releases the waiting benchmark thread.
 */
final class GroupsBenchmark {
    private static final Logger log = LoggerFactory.getLogger(GroupsBenchmark.class);
    static final int PARTITIONS = 12;
    static final int CONSUMERS = 4;
    static final int WARM_UP_COMMITS = 500;
    static final List<String> PROTOCOLS = List.of("classic", "consumer");
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(20);
    private static final long TIMEOUT_MS = 60_000;
    private static final long VERIFY_TIMEOUT_MS = 10_000;


    private final ClusterUnderTest cluster;
    private final int round;
    private final BenchOptions options;
    private final List<SystemFigure> figures = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    GroupsBenchmark(ClusterUnderTest cluster, int round, BenchOptions options) {
        this.cluster = cluster;
        this.round = round;
        this.options = options;
    }

    List<SystemFigure> figures() {
        return figures;
    }

    List<String> notes() {
        return notes;
    }

    void run() throws Exception {
        String topic = cluster.name() + "-r" + round + "-groups";
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers()))) {
            new BenchTopics(admin).create(topic, PARTITIONS);
        }
        runCommits(topic);
        for (String protocol : PROTOCOLS) {
            runStableAssignment(topic, protocol);
        }
    }

    static String commitName(String what) {
        return "commitSync of " + PARTITIONS + " partitions: " + what;
    }

    static String stableName(String protocol) {
        return CONSUMERS + " consumers, " + PARTITIONS + " partitions, group.protocol=" + protocol
                + ": stable assignment";
    }

    private void runCommits(String topic) {
        String groupId = topic + "-commits";
        Properties props = groupConsumer(groupId, "classic", "bench-committer");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + TIMEOUT_MS;
            while (consumer.assignment().size() < PARTITIONS) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("[" + cluster.name() + "] Committing consumer of group " + groupId
                            + " was not assigned all " + PARTITIONS + " partitions within " + TIMEOUT_MS
                            + " ms; last assignment " + consumer.assignment());
                }
                consumer.poll(POLL_TIMEOUT);
            }
            long offset = 0;
            for (int i = 0; i < WARM_UP_COMMITS; i++) {
                consumer.commitSync(offsets(topic, ++offset));
            }
            int commits = options.groupCommits();
            LatencyRecorder latencies = new LatencyRecorder(commits);
            long start = System.nanoTime();
            for (int i = 0; i < commits; i++) {
                Map<TopicPartition, OffsetAndMetadata> toCommit = offsets(topic, ++offset);
                long before = System.nanoTime();
                consumer.commitSync(toCommit);
                latencies.record(System.nanoTime() - before);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            verifyCommitted(consumer, topic, groupId, offset);
            LatencyRecorder.LatencySummary summary = latencies.summary();
            log.info("[{}] {} commits of {} partitions in {} s: {} commits/s, p50 {} ms, p99 {} ms, max {} ms",
                    cluster.name(), commits, PARTITIONS, format("%.2f", seconds), format("%.0f", commits / seconds),
                    format("%.3f", summary.p50Ms()), format("%.3f", summary.p99Ms()), format("%.1f", summary.maxMs()));
            add(commitName("commits/s"), commits / seconds, "commits/s", true);
            add(commitName("p50"), summary.p50Ms(), "ms", false);
            add(commitName("p99"), summary.p99Ms(), "ms", false);
            add(commitName("max"), summary.maxMs(), "ms", false);
        }
    }

    /**
     * Reads the group's committed offsets back (OffsetFetch) until every partition shows the last committed offset;
     * a mismatch does not fail the phase (the figures stand) but is logged and reported as a warning with what was
     * seen first, what last, and whether and when the offsets became visible.
     */
    private void verifyCommitted(KafkaConsumer<byte[], byte[]> consumer, String topic, String groupId,
                                 long expected) {
        Set<TopicPartition> partitions = Set.copyOf(toPartitions(topic));
        long start = System.nanoTime();
        long deadline = System.currentTimeMillis() + VERIFY_TIMEOUT_MS;
        Map<TopicPartition, OffsetAndMetadata> first = null;
        Map<TopicPartition, OffsetAndMetadata> last;
        int reads = 0;
        while (true) {
            last = consumer.committed(partitions, Duration.ofMillis(VERIFY_TIMEOUT_MS));
            reads++;
            if (first == null) {
                first = last;
            }
            boolean complete = last.size() == PARTITIONS && last.values().stream()
                    .allMatch(o -> o != null && o.offset() == expected);
            if (complete && reads == 1) {
                return;
            }
            if (complete || System.currentTimeMillis() > deadline) {
                String warning = "**Warning** (" + ReportFormat.displayName(cluster.name()) + " round " + round + "): "
                        + "after the last commitSync (offset " + expected + " for all " + PARTITIONS
                        + " partitions) had returned, OffsetFetch (KafkaConsumer.committed) of group " + groupId
                        + " answered " + describe(first) + "; "
                        + (complete ? "all " + PARTITIONS + " offsets were visible after "
                                + format("%.0f", (System.nanoTime() - start) / 1e6) + " ms and " + reads + " reads"
                                : "still " + describe(last) + " after " + reads + " reads in "
                                + format("%.0f", (System.nanoTime() - start) / 1e6) + " ms");
                log.warn("[{}] {}", cluster.name(), warning);
                notes.add(warning);
                return;
            }
            consumer.poll(POLL_TIMEOUT);    // keeps the member alive; a short pause between reads
        }
    }

    /** Committed offsets in partition order; {@code -} for a partition without one. */
    private static String describe(Map<TopicPartition, OffsetAndMetadata> committed) {
        List<String> parts = new ArrayList<>();
        committed.entrySet().stream()
                .sorted((a, b) -> Integer.compare(a.getKey().partition(), b.getKey().partition()))
                .forEach(e -> parts.add(e.getKey().partition() + "=" + (e.getValue() == null ? "-"
                        : Long.toString(e.getValue().offset()))));
        return "{" + String.join(", ", parts) + "}";
    }

    private void runStableAssignment(String topic, String protocol) throws Exception {
        List<Double> timesMs = new ArrayList<>();
        for (int repetition = 0; repetition <= options.groupRepetitions(); repetition++) {
            String groupId = topic + "-" + protocol + "-" + repetition;
            double ms = timeToStableAssignment(topic, groupId, protocol);
            log.info("[{}] Group {} ({}): stable assignment after {} ms{}", cluster.name(), groupId, protocol,
                    format("%.0f", ms), repetition == 0 ? " (warm-up, not reported)" : "");
            if (repetition > 0) {
                timesMs.add(ms);
            }
        }
        double[] sorted = timesMs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        add(stableName(protocol), median(sorted), "ms", false);
        notes.add(ReportFormat.displayName(cluster.name()) + " round " + round + ", " + stableName(protocol)
                + " (ms, each repetition in order): "
                + String.join(", ", timesMs.stream().map(v -> format("%.0f", v)).toList()));
    }

    /**
     * Starts {@link #CONSUMERS} consumers of a new group on their own threads, releases them together and returns
     * the milliseconds from the release until their assignments first form a complete, balanced assignment.
     */
    private double timeToStableAssignment(String topic, String groupId, String protocol) throws Exception {
        AssignmentBoard board = new AssignmentBoard(CONSUMERS, PARTITIONS);
        CountDownLatch ready = new CountDownLatch(CONSUMERS);
        CountDownLatch go = new CountDownLatch(1);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < CONSUMERS; i++) {
            int member = i;
            Properties props = groupConsumer(groupId, protocol, "bench-" + protocol + "-" + member);
            Thread thread = new Thread(() -> {
                try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
                    consumer.subscribe(List.of(topic));
                    ready.countDown();
                    if (!go.await(TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                        throw new IllegalStateException("never released");
                    }
                    while (!stop.get()) {
                        consumer.poll(POLL_TIMEOUT);
                        board.publish(member, consumer.assignment());
                    }
                } catch (Throwable t) {
                    // broad: the member's thread must release the others; the first failure is rethrown by the run
                    failure.compareAndSet(null, t);
                    ready.countDown();
                    board.abort();
                }
            }, "bench-group-member-" + member);
            thread.setDaemon(true);
            threads.add(thread);
            thread.start();
        }
        try {
            if (!ready.await(TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("Consumers of group " + groupId + " were not created within "
                        + TIMEOUT_MS + " ms");
            }
            long start = System.nanoTime();
            go.countDown();
            long stableNanos = board.awaitStable(TIMEOUT_MS);
            if (failure.get() != null) {
                throw new IllegalStateException("A consumer of group " + groupId + " failed", failure.get());
            }
            if (stableNanos < 0) {
                throw new IllegalStateException("[" + cluster.name() + "] Group " + groupId + " (" + protocol
                        + ") did not reach a complete, balanced assignment of " + PARTITIONS + " partitions to "
                        + CONSUMERS + " consumers within " + TIMEOUT_MS + " ms; last seen " + board.describe());
            }
            return (stableNanos - start) / 1e6;
        } finally {
            stop.set(true);
            go.countDown();
            for (Thread thread : threads) {
                thread.join(TIMEOUT_MS);
                if (thread.isAlive()) {
                    log.warn("[{}] {} of group {} did not close within {} ms", cluster.name(), thread.getName(),
                            groupId, TIMEOUT_MS);
                }
            }
        }
    }

    private Properties groupConsumer(String groupId, String protocol, String clientId) {
        Properties props = ClientSettings.consumer(cluster.bootstrapServers());
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        return props;
    }

    private static Map<TopicPartition, OffsetAndMetadata> offsets(String topic, long offset) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (TopicPartition tp : toPartitions(topic)) {
            offsets.put(tp, new OffsetAndMetadata(offset));
        }
        return offsets;
    }

    private static List<TopicPartition> toPartitions(String topic) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new TopicPartition(topic, p));
        }
        return partitions;
    }

    private void add(String name, double value, String unit, boolean higherIsBetter) {
        figures.add(new SystemFigure(cluster.name(), round, name, value, unit, higherIsBetter));
    }

    static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static String format(String pattern, double value) {
        return String.format(Locale.ROOT, pattern, value);
    }

    /**
     * The latest assignment each member saw, and the first time they formed a stable assignment: pairwise
     * disjoint, covering all partitions, sizes differing by at most one. Guarded by its own monitor.
     */
    static final class AssignmentBoard {
        private final int partitions;
        private final List<Set<TopicPartition>> latest = new ArrayList<>();
        private long stableNanos = -1;
        private boolean aborted;

        AssignmentBoard(int members, int partitions) {
            this.partitions = partitions;
            for (int i = 0; i < members; i++) {
                latest.add(Set.of());
            }
        }

        synchronized void publish(int member, Set<TopicPartition> assignment) {
            long now = System.nanoTime();
            latest.set(member, Set.copyOf(assignment));
            if (stableNanos < 0 && isStable()) {
                stableNanos = now;
                notifyAll();
            }
        }

        synchronized void abort() {
            aborted = true;
            notifyAll();
        }

        /** The time it became stable, or -1 if it did not within {@code timeoutMs} or a member failed. */
        synchronized long awaitStable(long timeoutMs) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            while (stableNanos < 0 && !aborted) {
                long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (remainingMs <= 0) {
                    break;
                }
                wait(remainingMs);
            }
            return stableNanos;
        }

        synchronized String describe() {
            return latest.toString();
        }

        private boolean isStable() {
            Set<TopicPartition> union = new HashSet<>();
            int total = 0;
            int[] sizes = new int[latest.size()];
            for (int i = 0; i < latest.size(); i++) {
                union.addAll(latest.get(i));
                total += latest.get(i).size();
                sizes[i] = latest.get(i).size();
            }
            Arrays.sort(sizes);
            return union.size() == partitions && total == partitions && sizes[sizes.length - 1] - sizes[0] <= 1;
        }
    }
}
