package io.twinlog.bench;

import io.twinlog.clients.mirror.MirrorAdmin;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Phase {@code mirror}: cluster mirroring, one {@link MirrorSetup} at a time. {@code twinlog}: a Twinlog destination
 * cluster mirrors a topic of a Twinlog source cluster (Twinlog's own mirroring, {@link MirrorAdmin});
 * {@code mm2-twinlog} and {@code mm2-kafka}: Apache Kafka MirrorMaker 2 (connect-mirror 4.3.1, a separate process)
 * copies the same data between two Twinlog clusters or between two Apache Kafka 4.4.0 clusters. Every setup: one
 * single-node cluster per side, all in this JVM apart from MM2.
 *
 * <ol>
 *   <li><b>bulk</b>: a topic of {@link #PARTITIONS} partitions is pre-filled with N records, then mirroring
 *       starts; time until the destination's log end offsets reach the source's;</li>
 *   <li><b>steady lag</b>: a producer writes {@link #STEADY_RATE_RECORDS_PER_S} records/s for
 *       {@link #STEADY_SECONDS} s to the source; every second, lag = sum of (source end - destination end);</li>
 *   <li><b>failover</b> (Twinlog only): StopMirrorTopics of a 100-partition mirror topic, source up and down.</li>
 * </ol>
 */
final class MirrorBenchmark {
    private static final Logger log = LoggerFactory.getLogger(MirrorBenchmark.class);
    static final int PARTITIONS = 8;
    static final int FAILOVER_PARTITIONS = 100;
    static final int STEADY_RATE_RECORDS_PER_S = 20_480;   // 20 MiB/s of 1 KiB records
    static final int STEADY_SECONDS = 20;
    private static final long TIMEOUT_MS = 180_000;
    private static final String MIRROR = "bench";

    /** One figure of the mirror phase. */
    record Figure(String system, int round, String name, double value, String unit) {
    }

    private final int round;
    private final BenchOptions options;
    private final Payloads payloads;
    private final List<Figure> figures = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private double mirrorMakerCpuSeconds;

    MirrorBenchmark(int round, BenchOptions options, Payloads payloads) {
        this.round = round;
        this.options = options;
        this.payloads = payloads;
    }

    List<Figure> figures() {
        return figures;
    }

    List<String> notes() {
        return notes;
    }

    /** CPU time of the MirrorMaker 2 process (a child of this JVM), up to just before it was stopped; 0 if none. */
    double mirrorMakerCpuSeconds() {
        return mirrorMakerCpuSeconds;
    }

    private int records() {
        return options.records();
    }

    private void add(String system, String name, double value, String unit) {
        figures.add(new Figure(system, round, name, value, unit));
        log.info("[{}] mirror: {} = {} {}", system, name, String.format("%.1f", value), unit);
    }

    // ------------------------------------------------------------------ Twinlog

    void runTwinlog() throws Exception {
        String system = "twinlog";
        TwinlogCluster source = new TwinlogCluster(TempDirectories.create("twinlog-mirror-src"));
        TwinlogCluster destination = new TwinlogCluster(TempDirectories.create("twinlog-mirror-dst"));
        try {
            source.start();
            destination.start();
            String topic = "mirror-bulk";
            try (Admin src = admin(source.bootstrapServers()); Admin dst = admin(destination.bootstrapServers());
                 MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
                new BenchTopics(src).create(topic, PARTITIONS);
                prefill(source.bootstrapServers(), topic, records());
                Map<Integer, Long> sourceEnds = endOffsets(src, topic, PARTITIONS);
                mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", source.bootstrapServers()));
                long start = System.nanoTime();
                Map<String, ?> errors = mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of(), List.of());
                long callNanos = System.nanoTime() - start;
                if (!errors.isEmpty()) {
                    throw new IllegalStateException("startMirrorTopics failed: " + errors);
                }
                long[] firstAndLast = awaitCaughtUp(dst, topic, sourceEnds, start);
                bulkFigures(system, start, callNanos, firstAndLast);

                steadyLag(system, source.bootstrapServers(), src, topic, dst, topic,
                        () -> describeLag(mirrors, topic));

                failover(system, source, src, dst, mirrors);
            }
        } finally {
            destination.close();
            source.close();
        }
    }

    private long describeLag(MirrorAdmin mirrors, String topic) {
        try {
            MirrorAdmin.TopicDescription t = mirrors.describeClusterMirrors(List.of(MIRROR)).get(MIRROR).topics()
                    .get(topic);
            long sum = 0;
            for (MirrorAdmin.PartitionDescription p : t.partitions()) {
                if (p.lag() < 0) {
                    return -1;
                }
                sum += p.lag();
            }
            return sum;
        } catch (Exception e) {
            // broad: the lag is only reported; -1 says it could not be read
            log.debug("Could not read the mirror lag of {}", topic, e);
            return -1;
        }
    }

    private void failover(String system, TwinlogCluster source, Admin src, Admin dst, MirrorAdmin mirrors)
            throws Exception {
        String up = "mirror-fo-up";
        String down = "mirror-fo-down";
        for (String topic : List.of(up, down)) {
            new BenchTopics(src).create(topic, FAILOVER_PARTITIONS);
            prefill(source.bootstrapServers(), topic, FAILOVER_PARTITIONS * 100);
            Map<Integer, Long> ends = endOffsets(src, topic, FAILOVER_PARTITIONS);
            Map<String, ?> errors = mirrors.startMirrorTopics(MIRROR, List.of(topic), List.of(), List.of());
            if (!errors.isEmpty()) {
                throw new IllegalStateException("startMirrorTopics(" + topic + ") failed: " + errors);
            }
            awaitCaughtUp(dst, topic, ends, System.nanoTime());
            awaitStates(mirrors, topic, "MIRRORING");
        }
        stopAndMeasure(system, mirrors, up, "source up");
        log.info("[{}] mirror: stopping the source cluster", system);
        src.close(Duration.ZERO);
        source.close();
        Thread.sleep(2000);     // let the fetcher notice
        stopAndMeasure(system, mirrors, down, "source down");
    }

    private void stopAndMeasure(String system, MirrorAdmin mirrors, String topic, String label) throws Exception {
        long start = System.nanoTime();
        Map<String, ?> errors = mirrors.stopMirrorTopics(MIRROR, List.of(topic), List.of());
        long callNanos = System.nanoTime() - start;
        if (!errors.isEmpty()) {
            notes.add("Twinlog stopMirrorTopics (" + label + ") answered with errors: " + errors);
        }
        long allStoppedNanos = awaitStates(mirrors, topic, "STOPPED") - start;
        add(system, "failover " + FAILOVER_PARTITIONS + " partitions, " + label + ": StopMirrorTopics call",
                callNanos / 1e6, "ms");
        add(system, "failover " + FAILOVER_PARTITIONS + " partitions, " + label + ": until all STOPPED",
                allStoppedNanos / 1e6, "ms");
    }

    /** Polls describe until every partition of the topic is in the state; returns System.nanoTime() then. */
    private long awaitStates(MirrorAdmin mirrors, String topic, String state) throws Exception {
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        String last = "nothing";
        Exception lastError = null;
        while (System.currentTimeMillis() < deadline) {
            try {
                MirrorAdmin.TopicDescription t = mirrors.describeClusterMirrors(List.of(MIRROR)).get(MIRROR).topics()
                        .get(topic);
                if (t != null) {
                    Map<String, Integer> counts = new HashMap<>();
                    t.partitions().forEach(p -> counts.merge(p.state(), 1, Integer::sum));
                    last = counts.toString();
                    if (t.partitions().size() == FAILOVER_PARTITIONS
                            && t.partitions().stream().allMatch(p -> state.equals(p.state()))) {
                        return System.nanoTime();
                    }
                }
            } catch (Exception e) {
                // broad: the mirror is starting; each failed poll is retried until the deadline names the last
                last = e.toString();
                lastError = e;
            }
            Thread.sleep(10);
        }
        throw new IllegalStateException("Mirror topic " + topic + " did not reach " + state + " on all partitions in "
                + TIMEOUT_MS + " ms; last states " + last, lastError);
    }

    // ------------------------------------------------------------------ MirrorMaker 2

    /**
     * MirrorMaker 2 from {@code source} into {@code target} (both not started yet; closed here): the same bulk and
     * steady workloads as {@link #runTwinlog()}, with MM2's defaults apart from replication factor 1.
     */
    void runMirrorMaker(MirrorSetup setup, ClusterUnderTest source, ClusterUnderTest target) throws Exception {
        String system = setup.label();
        Path workDir = TempDirectories.create("mm2");
        Process mm2 = null;
        Path logFile = null;
        try (ClusterUnderTest sourceCluster = source; ClusterUnderTest targetCluster = target) {
            sourceCluster.start();
            targetCluster.start();
            String topic = "mirror-bulk";
            String targetTopic = MirrorMaker2.targetTopic(topic);
            try (Admin src = admin(sourceCluster.bootstrapServers());
                 Admin dst = admin(targetCluster.bootstrapServers())) {
                new BenchTopics(src).create(topic, PARTITIONS);
                prefill(sourceCluster.bootstrapServers(), topic, records());
                Map<Integer, Long> sourceEnds = endOffsets(src, topic, PARTITIONS);
                Path logDirectory = Path.of(System.getProperty("bench.mm2LogDir", "bench/results"));
                logFile = logDirectory.resolve("mm2-" + system + "-round" + round + ".log");
                long start = System.nanoTime();
                mm2 = MirrorMaker2.start(workDir, logFile, sourceCluster.bootstrapServers(),
                        targetCluster.bootstrapServers(), topic, 1);
                long[] firstAndLast = awaitCaughtUp(dst, targetTopic, sourceEnds, start, mm2);
                bulkFigures(system, start, -1, firstAndLast);
                steadyLag(system, sourceCluster.bootstrapServers(), src, topic, dst, targetTopic, () -> -1);
            } finally {
                if (mm2 != null) {
                    mirrorMakerCpuSeconds = mm2.info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(0.0);
                    add(system, "MM2 process: CPU time until stopped", mirrorMakerCpuSeconds, "s");
                }
                MirrorMaker2.stop(mm2);
                if (logFile != null && mm2 != null) {
                    notes.addAll(MirrorMakerLog.summary(setup, round, logFile));
                }
            }
        } finally {
            TempDirectories.deleteRecursively(workDir);
        }
    }

    // ------------------------------------------------------------------ shared

    private void bulkFigures(String system, long start, long callNanos, long[] firstAndLast) {
        double mib = (double) records() * payloads.recordSizeBytes() / (1 << 20);
        double total = (firstAndLast[1] - start) / 1e9;
        double copy = (firstAndLast[1] - firstAndLast[0]) / 1e9;
        if (callNanos >= 0) {
            add(system, "bulk: StartMirrorTopics call", callNanos / 1e6, "ms");
        }
        add(system, "bulk: start to first mirrored record", (firstAndLast[0] - start) / 1e6, "ms");
        add(system, "bulk: start to all records mirrored", total * 1000, "ms");
        add(system, "bulk: MiB/s from start", mib / total, "MiB/s");
        add(system, "bulk: MiB/s from first mirrored record", mib / copy, "MiB/s");
    }

    private interface LagSource {
        long lag();
    }

    /** Produces at a fixed rate to the source and samples the destination's lag once a second. */
    private void steadyLag(String system, String sourceBootstrap, Admin src, String topic, Admin dst,
                           String dstTopic, LagSource describedLag) throws Exception {
        AtomicReference<Exception> error = new AtomicReference<>();
        AtomicLong sent = new AtomicLong();
        Thread producerThread = new Thread(() -> {
            try (KafkaProducer<byte[], byte[]> producer =
                         new KafkaProducer<>(ClientSettings.producer(sourceBootstrap, Acks.ONE))) {
                producer.partitionsFor(topic);
                long begin = System.nanoTime();
                long total = (long) STEADY_RATE_RECORDS_PER_S * STEADY_SECONDS;
                for (long i = 0; i < total; i++) {
                    long due = begin + i * 1_000_000_000L / STEADY_RATE_RECORDS_PER_S;
                    long wait = due - System.nanoTime();
                    if (wait > 1_000_000) {
                        Thread.sleep(wait / 1_000_000);
                    }
                    producer.send(new ProducerRecord<>(topic, payloads.get(i)), (m, e) -> {
                        if (e != null) {
                            error.compareAndSet(null, e);
                        }
                    });
                    sent.incrementAndGet();
                }
                producer.flush();
            } catch (Exception e) {
                // broad: the producer thread's failure is handed to the run, which rethrows it
                error.compareAndSet(null, e);
            }
        }, "mirror-steady-producer");
        long begin = System.nanoTime();
        producerThread.start();
        List<Long> lags = new ArrayList<>();
        List<Long> described = new ArrayList<>();
        Thread.sleep(1000);
        while (producerThread.isAlive()) {
            Map<Integer, Long> s = endOffsets(src, topic, PARTITIONS);
            Map<Integer, Long> d = endOffsets(dst, dstTopic, PARTITIONS);
            long lag = 0;
            for (int p = 0; p < PARTITIONS; p++) {
                lag += Math.max(0, s.get(p) - d.getOrDefault(p, 0L));
            }
            lags.add(lag);
            long dl = describedLag.lag();
            if (dl >= 0) {
                described.add(dl);
            }
            long next = begin + (lags.size() + 1) * 1_000_000_000L;
            long wait = (next - System.nanoTime()) / 1_000_000;
            if (wait > 0) {
                Thread.sleep(wait);
            }
        }
        producerThread.join();
        if (error.get() != null) {
            throw new IllegalStateException("steady-state producer failed", error.get());
        }
        double seconds = (System.nanoTime() - begin) / 1e9;
        log.info("[{}] mirror: steady producer sent {} records in {} s; lag samples {}", system, sent.get(),
                String.format("%.1f", seconds), lags);
        double actualRate = sent.get() / seconds;
        add(system, "steady: producer rate", actualRate * payloads.recordSizeBytes() / (1 << 20), "MiB/s");
        add(system, "steady: samples", lags.size(), "");
        Collections.sort(lags);
        double p50 = lags.get(lags.size() / 2);
        double max = lags.get(lags.size() - 1);
        add(system, "steady: lag p50 (end offsets)", p50, "records");
        add(system, "steady: lag max (end offsets)", max, "records");
        add(system, "steady: lag p50 (end offsets), ms-equivalent", p50 * 1000 / STEADY_RATE_RECORDS_PER_S, "ms");
        add(system, "steady: lag max (end offsets), ms-equivalent", max * 1000 / STEADY_RATE_RECORDS_PER_S, "ms");
        if (!described.isEmpty()) {
            Collections.sort(described);
            add(system, "steady: lag p50 (DescribeClusterMirrors)", described.get(described.size() / 2), "records");
            add(system, "steady: lag max (DescribeClusterMirrors)", described.get(described.size() - 1), "records");
        }
        // Let the destination catch up before anything else runs.
        awaitCaughtUp(dst, dstTopic, endOffsets(src, topic, PARTITIONS), System.nanoTime());
    }

    private long[] awaitCaughtUp(Admin dst, String topic, Map<Integer, Long> sourceEnds, long start) throws Exception {
        return awaitCaughtUp(dst, topic, sourceEnds, start, null);
    }

    /** Returns {System.nanoTime() when a first record was seen, when all were}. */
    private long[] awaitCaughtUp(Admin dst, String topic, Map<Integer, Long> sourceEnds, long start, Process process)
            throws Exception {
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        long first = -1;
        long target = sourceEnds.values().stream().mapToLong(Long::longValue).sum();
        String last = "nothing";
        Exception lastError = null;
        while (System.currentTimeMillis() < deadline) {
            if (process != null && !process.isAlive()) {
                throw new IllegalStateException("MirrorMaker 2 exited with code " + process.exitValue());
            }
            try {
                if (first < 0 && !dst.listTopics().names().get(10, TimeUnit.SECONDS).contains(topic)) {
                    // Asking ListOffsets for a topic that does not exist yet makes the admin client log an ERROR.
                    last = "topic " + topic + " not created yet";
                    Thread.sleep(20);
                    continue;
                }
                Map<Integer, Long> ends = endOffsets(dst, topic, sourceEnds.size());
                long now = System.nanoTime();
                long sum = ends.values().stream().mapToLong(Long::longValue).sum();
                last = sum + " of " + target;
                if (sum > 0 && first < 0) {
                    first = now;
                }
                boolean done = true;
                for (Map.Entry<Integer, Long> e : sourceEnds.entrySet()) {
                    if (ends.getOrDefault(e.getKey(), 0L) < e.getValue()) {
                        done = false;
                        break;
                    }
                }
                if (done) {
                    return new long[] {first, now};
                }
            } catch (Exception e) {
                // broad: topic created but not all partitions hosted yet; the deadline names the last failure
                last = e.toString();
                lastError = e;
            }
            Thread.sleep(first < 0 ? 20 : 10);
        }
        throw new IllegalStateException("Destination topic " + topic + " did not catch up within " + TIMEOUT_MS
                + " ms; last " + last, lastError);
    }

    private static Map<Integer, Long> endOffsets(Admin admin, String topic, int partitions) throws Exception {
        Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            specs.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        Map<Integer, Long> out = new HashMap<>();
        admin.listOffsets(specs).all().get(10, TimeUnit.SECONDS)
                .forEach((tp, info) -> out.put(tp.partition(), info.offset()));
        return out;
    }

    private void prefill(String bootstrap, String topic, int count) {
        AtomicReference<Exception> error = new AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(ClientSettings.producer(bootstrap, Acks.ONE))) {
            producer.partitionsFor(topic);
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, payloads.get(i)), (m, e) -> {
                    if (e != null) {
                        error.compareAndSet(null, e);
                    }
                });
            }
            producer.flush();
        }
        if (error.get() != null) {
            throw new IllegalStateException("pre-filling " + topic + " failed", error.get());
        }
        log.info("Pre-filled {} with {} records", topic, count);
    }

    private static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "bench-mirror-admin");
        return Admin.create(p);
    }
}
