package io.twinlog.bench;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Leader failover on a started three-broker cluster. A one-partition topic (replication factor 3,
 * {@code min.insync.replicas=2}) is created on replicas [L, a, b] so that L leads; L is a broker that is not also
 * the controller (Kafka's controller is a separate node; with Twinlog, stopping the controller's broker would add a
 * controller election). One producer ({@code acks=all}, idempotent, the benchmark's client settings) sends 1 KiB
 * records at a steady {@value #RATE_PER_SECOND} records/s ({@link SteadyProducer}) and an Admin client polls
 * {@code describeTopics} every {@value #POLL_INTERVAL_MS} ms ({@link LeaderPoller}). After a second of acknowledged
 * sends, L is stopped ({@link FailureMode}), and the benchmark measures from just before the stop call:
 * <ul>
 *   <li>(a) until a poll first answers with a leader other than L;</li>
 *   <li>(b) until the first acknowledgement by the new leader: of a record whose batch carries a newer leader
 *       epoch than the records acknowledged before the stop (read back with a consumer afterwards), so neither
 *       acknowledgements the old leader still gave while being stopped nor duplicates count;</li>
 *   <li>the longest time without any acknowledgement, and how many sends failed.</li>
 * </ul>
 */
final class FailoverBenchmark {
    private static final Logger log = LoggerFactory.getLogger(FailoverBenchmark.class);
    static final int RATE_PER_SECOND = 1000;
    static final int POLL_INTERVAL_MS = 20;
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Duration AFTER_FAILOVER = Duration.ofMillis(500);

    private final ReplicatedCluster cluster;
    private final int round;
    private final int sessionTimeoutMs;
    private final Payloads payloads;
    private final List<String> warnings = new ArrayList<>();

    FailoverBenchmark(ReplicatedCluster cluster, int round, int sessionTimeoutMs, Payloads payloads) {
        this.cluster = cluster;
        this.round = round;
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.payloads = payloads;
    }

    FailoverResult run(FailureMode mode) throws Exception {
        String topic = cluster.name() + "-r" + round + "-failover-" + mode.name().toLowerCase(Locale.ROOT);
        Optional<Integer> controller = cluster.controllerBrokerId();
        List<Integer> ids = cluster.brokerIds();
        int leader = ids.stream().filter(id -> controller.map(c -> !c.equals(id)).orElse(true)).findFirst()
                .orElseThrow();
        List<Integer> replicas = new ArrayList<>(List.of(leader));
        ids.stream().filter(id -> id != leader).forEach(replicas::add);
        String bootstrapServers = cluster.bootstrapServers();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            new BenchTopics(admin).createOnReplicas(topic, replicas, ReplicatedBenchmark.MIN_IN_SYNC_REPLICAS);
        }
        log.info("[{}] Failover ({}): topic {} on replicas {}, controller {}", cluster.name(), mode.label(), topic,
                replicas, controller.map(String::valueOf).orElse("a separate node"));

        try (SteadyProducer producer = new SteadyProducer(bootstrapServers, topic, payloads);
             LeaderPoller poller = new LeaderPoller(bootstrapServers, topic)) {
            producer.start();
            if (!await(() -> producer.acked() >= RATE_PER_SECOND, TIMEOUT)) {
                throw new IllegalStateException("The producer to " + topic + " got only " + producer.acked()
                        + " acknowledgements in " + TIMEOUT.toSeconds() + " s before any failure; "
                        + producer.describe());
            }
            poller.start();
            if (!await(() -> poller.polls() >= 3 && poller.lastLeader() == leader, TIMEOUT)) {
                throw new IllegalStateException("Metadata of " + topic + " does not show broker " + leader
                        + " as leader; last seen " + poller.lastLeader());
            }

            long stopNanos = System.nanoTime();
            producer.markStop(stopNanos);
            poller.markStop(stopNanos, leader);
            cluster.stop(leader, mode);
            long stopReturnedNanos = System.nanoTime();
            double stopCallMs = (stopReturnedNanos - stopNanos) / 1e6;
            // Done once the new leader is in metadata and a record sent after that has been acknowledged.
            boolean done = await(() -> poller.newLeaderNanos() != 0
                            && producer.lastAckedSendNanos() > poller.newLeaderNanos(),
                    TIMEOUT.minusNanos(System.nanoTime() - stopNanos));
            if (done) {
                Thread.sleep(AFTER_FAILOVER.toMillis());    // the producer keeps going on the new leader
            } else {
                log.warn("[{}] Failover ({}) of {} did not complete within {} s: poller last saw leader {} "
                                + "({} polls, {} errors, last error {}); producer: {}", cluster.name(), mode.label(),
                        topic, TIMEOUT.toSeconds(), poller.lastLeader(), poller.polls(), poller.errors(),
                        poller.lastError(), producer.describe());
            }
            poller.stopPolling();
            String finalState = describeQuietly(poller.admin(), topic);
            producer.stopSending();
            long endOffset = endOffsetQuietly(poller.admin(), topic);
            if (endOffset < 0) {
                warnings.add(ReportFormat.displayName(cluster.name()) + " round " + round + ", " + mode.label()
                        + ": could not read the end offset of " + topic + " to check for lost records");
            } else if (endOffset < producer.acked()) {
                String w = ReportFormat.displayName(cluster.name()) + " round " + round + ", " + mode.label() + ": "
                        + topic + " ends at offset " + endOffset + " but " + producer.acked()
                        + " records were acknowledged: acknowledged records were lost";
                log.warn("[{}] {}", cluster.name(), w);
                warnings.add(w);
            }

            long firstNewLeaderAckNanos = firstAckByNewLeader(bootstrapServers, topic, producer);
            Optional<Double> metadataMs = sinceStop(poller.newLeaderNanos(), stopNanos);
            Optional<Double> firstAckMs = sinceStop(firstNewLeaderAckNanos, stopNanos);
            Optional<Double> maxGapMs = firstNewLeaderAckNanos == 0 ? Optional.empty()
                    : Optional.of(producer.maxGapAfterStopNanos() / 1e6);
            Optional<Integer> newLeader = poller.newLeader() < 0 ? Optional.empty() : Optional.of(poller.newLeader());
            FailoverResult result = new FailoverResult(cluster.name(), round, mode, cluster.describe(mode),
                    sessionTimeoutMs, leader, controller, newLeader, metadataMs, firstAckMs, maxGapMs, stopCallMs,
                    producer.sent(), producer.acked(), producer.failed(),
                    Optional.ofNullable(producer.firstError()).map(Throwable::toString));
            log.info("[{}] Failover ({}): broker {} stopped in {} ms; new leader {} in metadata after {} ms; first "
                            + "acknowledgement by it after {} ms; longest acknowledgement gap {} ms from {} ms; {} "
                            + "sent, {} acked, {} failed{}; end offset {}; final state {}", cluster.name(), mode.label(),
                    leader, fmt(stopCallMs), newLeader.map(String::valueOf).orElse("none"),
                    metadataMs.map(FailoverBenchmark::fmt).orElse("-"),
                    firstAckMs.map(FailoverBenchmark::fmt).orElse("-"),
                    maxGapMs.map(FailoverBenchmark::fmt).orElse("-"),
                    fmt((producer.maxGapStartNanos() - stopNanos) / 1e6),
                    result.sent(), result.acked(), result.failed(),
                    result.firstError().map(e -> " (first error: " + e + ")").orElse(""), endOffset, finalState);
            return result;
        }
    }

    /**
     * When the first acknowledgement of a record appended by the new leader arrived (0 if none did): every batch
     * carries the leader epoch it was appended in, so the records acknowledged after the stop are read back and the
     * first one in an epoch newer than that of the last record acknowledged before the stop is the new leader's.
     * Acknowledgements the old leader still gave while it was being stopped, and retried records the new leader
     * recognised as duplicates of old-epoch appends, do not count.
     */
    private long firstAckByNewLeader(String bootstrapServers, String topic, SteadyProducer producer) {
        long[][] acks = producer.acksAfterStop();
        long lastBefore = producer.lastOffsetAckedBeforeStop();
        if (acks.length == 0 || lastBefore < 0) {
            return 0;
        }
        long maxOffset = lastBefore;
        for (long[] a : acks) {
            maxOffset = Math.max(maxOffset, a[1]);
        }
        int[] epochs = new int[(int) (maxOffset - lastBefore + 1)];
        Arrays.fill(epochs, Integer.MIN_VALUE);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(ClientSettings.consumer(bootstrapServers))) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, lastBefore);
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (consumer.position(tp) <= maxOffset && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.offset() <= maxOffset) {
                        epochs[(int) (r.offset() - lastBefore)] = r.leaderEpoch().orElse(-1);
                    }
                }
            }
        }
        int oldEpoch = epochs[0];
        if (oldEpoch == Integer.MIN_VALUE || oldEpoch < 0) {
            log.warn("[{}] Could not read the leader epoch of {} at offset {}", cluster.name(), tp, lastBefore);
            return 0;
        }
        for (long[] a : acks) {
            int epoch = epochs[(int) (a[1] - lastBefore)];
            if (epoch > oldEpoch) {
                return a[0];
            }
        }
        return 0;
    }

    private static Optional<Double> sinceStop(long nanos, long stopNanos) {
        return nanos == 0 ? Optional.empty() : Optional.of((nanos - stopNanos) / 1e6);
    }

    private static String fmt(double ms) {
        return String.format(Locale.ROOT, "%.0f", ms);
    }

    /** Problems seen, for the report (acknowledged records missing after the failover). */
    List<String> warnings() {
        return warnings;
    }

    /** The partition's high watermark (ListOffsets latest, read_uncommitted), or -1 if it cannot be read. */
    private static long endOffsetQuietly(Admin admin, String topic) {
        TopicPartition tp = new TopicPartition(topic, 0);
        try {
            return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(10, TimeUnit.SECONDS)
                    .offset();
        } catch (Exception e) {
            // broad: the end offset is only reported; -1 says it could not be read
            log.warn("Could not read the end offset of {}", tp, e);
            return -1;
        }
    }

    private static String describeQuietly(Admin admin, String topic) {
        try {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(5, TimeUnit.SECONDS)
                    .get(topic);
            TopicPartitionInfo p = d.partitions().get(0);
            return "leader " + (p.leader() == null ? "none" : p.leader().idString()) + ", replicas "
                    + p.replicas().stream().map(Node::idString).toList() + ", ISR "
                    + p.isr().stream().map(Node::idString).toList();
        } catch (Exception e) {
            // broad: a description for the report only; the failure is named in it
            log.debug("Could not describe {}", topic, e);
            return "unknown (" + e + ")";
        }
    }

    private static boolean await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }
}
