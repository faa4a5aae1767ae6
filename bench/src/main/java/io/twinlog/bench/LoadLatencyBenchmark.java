package io.twinlog.bench;

import io.twinlog.clients.mirror.MirrorAdmin;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;

/**
 * Latency at a fixed load, the figure a disaster-recovery user asks first (issue 27 point 4a): three brokers per
 * system, one topic of {@value #PARTITIONS} partitions (replication factor 3, min.insync.replicas 2), a producer
 * (acks=all, idempotent, the benchmark's client settings) paced to a fixed rate of 1 KiB records round-robin over the
 * partitions, and a consumer (assign(), from the end, no group) polling them all. Each record carries, in its first 8
 * bytes, the producer's {@link System#nanoTime()} when it was handed to {@code send()}; the consumer records the time
 * from there to its {@code poll()} returning it, for every record sent in the measured interval. Clients and brokers
 * share this JVM, so both ends read one clock. Rates: {@link #RATES_MIB_PER_S} MiB/s, each on a fresh topic after the
 * window's warm-up.
 */
final class LoadLatencyBenchmark {
    private static final Logger log = LoggerFactory.getLogger(LoadLatencyBenchmark.class);
    static final int PARTITIONS = 24;
    static final int REPLICATION_FACTOR = 3;
    static final int MIN_INSYNC_REPLICAS = 2;
    static final int[] RATES_MIB_PER_S = {10, 50};
    private static final String MIRROR = "lag";
    /** How long the consumer may take, after the window, to receive the last records sent in it. */
    private static final long DRAIN_TIMEOUT_NANOS = 60_000_000_000L;

    private final ReplicatedCluster cluster;
    private final int round;
    private final BenchOptions options;
    private final Payloads payloads;

    LoadLatencyBenchmark(ReplicatedCluster cluster, int round, BenchOptions options, Payloads payloads) {
        this.cluster = cluster;
        this.round = round;
        this.options = options;
        this.payloads = payloads;
    }

    List<SystemFigure> run() throws Exception {
        List<SystemFigure> figures = new ArrayList<>();
        for (int rate : RATES_MIB_PER_S) {
            String topic = cluster.name() + "-r" + round + "-latency-" + rate;
            try (Admin admin = admin(cluster.bootstrapServers())) {
                new BenchTopics(admin).createReplicatedBounded(topic, PARTITIONS, REPLICATION_FACTOR,
                        MIN_INSYNC_REPLICAS);
            }
            figures.addAll(measure(cluster.bootstrapServers(), cluster.bootstrapServers(), topic, topic, rate, null));
        }
        return figures;
    }

    /**
     * Mirror lag at the same rates (issue 27 point 4b), Twinlog's own mirroring: a second three-broker cluster
     * mirrors a topic of the same shape whose source stamps each batch with its append time
     * ({@code message.timestamp.type=LogAppendTime}); the mirror copies batches as they are, so a record's timestamp
     * on the destination is the source leader's append time. Measured per record: from send() to the destination
     * consumer's poll(), and (to the millisecond, the timestamp's unit) from the source leader's append to it.
     */
    List<SystemFigure> runMirror(TwinlogReplicatedCluster destination) throws Exception {
        List<SystemFigure> figures = new ArrayList<>();
        try (MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
            mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", cluster.bootstrapServers()));
            for (int rate : RATES_MIB_PER_S) {
                String topic = cluster.name() + "-r" + round + "-mirror-lag-" + rate;
                try (Admin admin = admin(cluster.bootstrapServers())) {
                    new BenchTopics(admin).createReplicatedBounded(topic, PARTITIONS, REPLICATION_FACTOR,
                            MIN_INSYNC_REPLICAS, Map.of("message.timestamp.type", "LogAppendTime"));
                }
                Map<String, ?> errors = mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of(), List.of());
                if (!errors.isEmpty()) {
                    throw new IllegalStateException("StartMirrorTopics of " + topic + " failed: " + errors);
                }
                awaitMirroring(mirrors, topic);
                figures.addAll(measure(cluster.bootstrapServers(), destination.bootstrapServers(), topic, topic, rate,
                        "mirror: "));
            }
        }
        return figures;
    }

    /**
     * The same mirror lag with Apache Kafka MirrorMaker 2 between the same two clusters (issue 27 point 4b's
     * comparison): one MM2 process (its defaults, replication factor 3) for topics of both rates, created before it
     * starts (MM2 looks for new topics every 10 minutes). MM2 writes each record with its source timestamp, the
     * source leader's append time here, to {@code A.<topic>}.
     */
    List<SystemFigure> runMirrorMaker(TwinlogReplicatedCluster destination) throws Exception {
        List<SystemFigure> figures = new ArrayList<>();
        String prefix = cluster.name() + "-r" + round + "-mm2-lag-";
        try (Admin admin = admin(cluster.bootstrapServers())) {
            for (int rate : RATES_MIB_PER_S) {
                new BenchTopics(admin).createReplicatedBounded(prefix + rate, PARTITIONS, REPLICATION_FACTOR,
                        MIN_INSYNC_REPLICAS, Map.of("message.timestamp.type", "LogAppendTime"));
            }
        }
        Path workDir = TempDirectories.create("latency-mm2");
        Path logFile = Path.of(System.getProperty("bench.mm2LogDir", "bench/results"))
                .resolve("mm2-latency-round" + round + ".log");
        Process mm2 = MirrorMaker2.start(workDir, logFile, cluster.bootstrapServers(),
                destination.bootstrapServers(), prefix + ".*", REPLICATION_FACTOR);
        try (Admin dst = admin(destination.bootstrapServers())) {
            for (int rate : RATES_MIB_PER_S) {
                String target = MirrorMaker2.targetTopic(prefix + rate);
                awaitTopic(dst, target, mm2);
                awaitCopying(prefix + rate, dst, target, mm2);
                figures.addAll(measure(cluster.bootstrapServers(), destination.bootstrapServers(), prefix + rate,
                        target, rate, "MirrorMaker 2: "));
            }
        } finally {
            MirrorMaker2.stop(mm2);
            TempDirectories.deleteRecursively(workDir);
        }
        return figures;
    }

    /** Waits until MM2 has created {@code topic} on the destination with all partitions led. */
    private static void awaitTopic(Admin dst, String topic, Process mm2) throws Exception {
        long deadline = System.nanoTime() + DRAIN_TIMEOUT_NANOS;
        while (System.nanoTime() < deadline) {
            if (!mm2.isAlive()) {
                throw new IllegalStateException("MirrorMaker 2 exited with " + mm2.exitValue());
            }
            try {
                TopicDescription d = dst.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
                if (d.partitions().size() == PARTITIONS && d.partitions().stream().allMatch(p -> p.leader() != null)) {
                    return;
                }
            } catch (ExecutionException notYet) {
                // not created yet
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("MirrorMaker 2 did not create " + topic + " on the destination");
    }

    /**
     * Sends one record to every source partition and waits until MM2 has copied them all: its tasks run and its
     * consumers are positioned, so the measured interval does not start with MM2's start-up backlog.
     */
    private void awaitCopying(String topic, Admin dst, String target, Process mm2) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(ClientSettings.producer(
                cluster.bootstrapServers(), Acks.ALL))) {
            for (int p = 0; p < PARTITIONS; p++) {
                producer.send(new ProducerRecord<>(topic, p, null, payloads.get(p))).get();
            }
        }
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        IntStream.range(0, PARTITIONS).forEach(p -> latest.put(new TopicPartition(target, p), OffsetSpec.latest()));
        long deadline = System.nanoTime() + DRAIN_TIMEOUT_NANOS;
        while (System.nanoTime() < deadline) {
            if (!mm2.isAlive()) {
                throw new IllegalStateException("MirrorMaker 2 exited with " + mm2.exitValue());
            }
            if (dst.listOffsets(latest).all().get().values().stream().allMatch(o -> o.offset() >= 1)) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("MirrorMaker 2 did not copy " + topic + " to " + target);
    }

    private static void awaitMirroring(MirrorAdmin mirrors, String topic) throws Exception {
        long deadline = System.nanoTime() + DRAIN_TIMEOUT_NANOS;
        while (System.nanoTime() < deadline) {
            MirrorAdmin.TopicDescription t = mirrors.describeClusterMirrors(List.of(MIRROR)).get(MIRROR).topics()
                    .get(topic);
            if (t != null && t.partitions().size() == PARTITIONS
                    && t.partitions().stream().allMatch(p -> p.state().equals("MIRRORING"))) {
                return;
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("Mirror topic " + topic + " did not reach MIRRORING");
    }

    /**
     * Produces to {@code topic} on {@code produceBootstrap} at the rate and consumes {@code consumeTopic} on
     * {@code consumeBootstrap} (the same cluster and topic, or a mirror's destination, where MirrorMaker 2 renames
     * it), recording each record sent in the measured interval; {@code mirrorLabel} prefixes a mirror's figures (null:
     * one cluster).
     */
    private List<SystemFigure> measure(String produceBootstrap, String consumeBootstrap, String topic,
                                       String consumeTopic, int mibPerSecond, String mirrorLabel) throws Exception {
        boolean mirrored = mirrorLabel != null;
        long recordsPerSecond = (long) mibPerSecond * (1 << 20) / options.recordSizeBytes();
        List<TopicPartition> assignment = IntStream.range(0, PARTITIONS)
                .mapToObj(p -> new TopicPartition(consumeTopic, p)).toList();
        LatencyHistogram latencies = new LatencyHistogram();
        LatencyHistogram fromAppend = new LatencyHistogram();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(ClientSettings.consumer(consumeBootstrap))) {
            consumer.assign(assignment);
            consumer.seekToEnd(assignment);
            assignment.forEach(consumer::position); // the end is fixed before the first record is sent
            SteadyWindow.Bounds bounds = options.window().from(System.nanoTime());
            PacedProducer producer = new PacedProducer(produceBootstrap, topic, recordsPerSecond, bounds);
            Thread producerThread = new Thread(producer, "bench-latency-producer");
            producerThread.start();
            long received = 0;
            long drainDeadline = Long.MAX_VALUE;
            while (true) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    long now = System.nanoTime();
                    long sentAt = ByteBuffer.wrap(r.value()).getLong();
                    if (sentAt >= bounds.beginNanos() && sentAt < bounds.endNanos()) {
                        latencies.record(now - sentAt);
                        if (mirrored) {
                            fromAppend.record((System.currentTimeMillis() - r.timestamp()) * 1_000_000L);
                        }
                        received++;
                    }
                }
                if (producer.error.get() != null) {
                    throw new IllegalStateException("A send to " + topic + " failed", producer.error.get());
                }
                if (!producerThread.isAlive()) {
                    if (received >= producer.sentInWindow.get()) {
                        break;
                    }
                    drainDeadline = Math.min(drainDeadline, System.nanoTime() + DRAIN_TIMEOUT_NANOS);
                    if (System.nanoTime() > drainDeadline) {
                        throw new IllegalStateException("The consumer of " + topic + " received " + received
                                + " of the " + producer.sentInWindow.get() + " records sent in the measured interval");
                    }
                }
            }
            producerThread.join();
            double seconds = bounds.lengthNanos() / 1e9;
            double achieved = producer.sentInWindow.get() * (double) options.recordSizeBytes() / (1 << 20) / seconds;
            String at = " at " + mibPerSecond + " MiB/s";
            String prefix = mirrored ? mirrorLabel : "";
            String what = mirrored ? prefix + "produce to consume on the destination" : "produce to consume";
            List<SystemFigure> figures = new ArrayList<>();
            figures.add(figure(prefix + "rate sent" + at, achieved, "MiB/s", true));
            figures.addAll(percentiles(what, at, latencies.summary()));
            figures.addAll(percentiles(prefix + "produce acknowledged", at, producer.acknowledged.summary()));
            if (mirrored) {
                figures.addAll(percentiles(prefix + "source append to consume on the destination", at,
                        fromAppend.summary()));
            }
            log.info("[{}] latency{}: {} records in the window, {}", cluster.name(), at, received, figures);
            return figures;
        }
    }

    private List<SystemFigure> percentiles(String what, String at, LatencyRecorder.LatencySummary s) {
        return List.of(
                figure(what + " p50" + at, s.p50Ms(), "ms", false),
                figure(what + " p99" + at, s.p99Ms(), "ms", false),
                figure(what + " p99.9" + at, s.p999Ms(), "ms", false),
                figure(what + " max" + at, s.maxMs(), "ms", false));
    }

    private static Admin admin(String bootstrap) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    private SystemFigure figure(String name, double value, String unit, boolean higherIsBetter) {
        return new SystemFigure(cluster.name(), round, name, value, unit, higherIsBetter);
    }

    /**
     * Sends records due by now (the rate from the window's start), each stamped with its send time, until the window
     * ends; a millisecond's sleep when ahead. Counts the records sent within the measured interval.
     */
    private final class PacedProducer implements Runnable {
        private final String bootstrap;
        private final String topic;
        private final long recordsPerSecond;
        private final SteadyWindow.Bounds bounds;
        final AtomicLong sentInWindow = new AtomicLong();
        /** From send() to the acknowledgement (acks=all), records sent in the measured interval. */
        final LatencyHistogram acknowledged = new LatencyHistogram();
        final AtomicReference<Exception> error = new AtomicReference<>();

        PacedProducer(String bootstrap, String topic, long recordsPerSecond, SteadyWindow.Bounds bounds) {
            this.bootstrap = bootstrap;
            this.topic = topic;
            this.recordsPerSecond = recordsPerSecond;
            this.bounds = bounds;
        }

        @Override
        public void run() {
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(ClientSettings.producer(bootstrap,
                    Acks.ALL))) {
                producer.partitionsFor(topic);
                long start = System.nanoTime();
                long sent = 0;
                while (true) {
                    long now = System.nanoTime();
                    if (now >= bounds.endNanos()) {
                        break;
                    }
                    long due = (now - start) * recordsPerSecond / 1_000_000_000L;
                    if (sent >= due) {
                        Thread.sleep(1); // pacing the load, not waiting for state
                        continue;
                    }
                    for (; sent < due; sent++) {
                        byte[] value = payloads.get(sent).clone();
                        long sendNanos = System.nanoTime();
                        ByteBuffer.wrap(value).putLong(sendNanos);
                        boolean inWindow = sendNanos >= bounds.beginNanos() && sendNanos < bounds.endNanos();
                        producer.send(new ProducerRecord<>(topic, (int) (sent % PARTITIONS), null, value),
                                (metadata, e) -> {
                                    if (e != null) {
                                        error.compareAndSet(null, e);
                                    } else if (inWindow) {
                                        acknowledged.record(System.nanoTime() - sendNanos);
                                    }
                                });
                        if (inWindow) {
                            sentInWindow.incrementAndGet();
                        }
                    }
                }
                producer.flush();
            } catch (Exception e) {
                // broad: the producer thread's failure is handed to the run, which rethrows it
                error.compareAndSet(null, e);
            }
        }
    }
}
