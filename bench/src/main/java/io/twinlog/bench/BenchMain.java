package io.twinlog.bench;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Entry point. For each round, each phase ({@link Phase}: single node, replicated produce, failover, and when
 * asked for mirror and groups) and each system in turn (Twinlog, then Apache Kafka; the order is reversed every other round so neither always runs in
 * the warmer JVM), start that system's cluster in this JVM, measure, and shut it down before the next one starts;
 * then print the results as markdown and write them to the output file. The mirror phase runs its
 * {@link MirrorSetup}s instead of the systems, the order rotated by one every round. A phase that fails for one
 * system is reported and the run goes on. Exit code 0 on success, 1 if anything failed, 2 on a bad command line.
 */
public final class BenchMain {
    private static final Logger log = LoggerFactory.getLogger(BenchMain.class);

    private BenchMain() {
    }

    public static void main(String[] args) {
        int exitCode;
        try {
            exitCode = run(BenchOptions.parse(args)) ? 0 : 1;
        } catch (BenchOptions.UsageException e) {
            System.err.println(e.getMessage());
            exitCode = 2;
        } catch (Exception e) {
            // broad: whatever stops a run is reported with its stack trace and the exit code says so
            log.error("Benchmark failed", e);
            exitCode = 1;
        }
        // Some broker threads (ZooKeeper, KRaft) are not daemons; do not wait for them.
        System.exit(exitCode);
    }

    /** Returns whether every phase succeeded. */
    static boolean run(BenchOptions options) throws Exception {
        log.info("Benchmark options: {}", options);
        Payloads payloads = new Payloads(options.recordSizeBytes(), options.seed());
        Results results = new Results();
        Path ballastDirectory = TempDirectories.create("ballast");
        Optional<PageCacheBallast> ballast = options.pageCacheBallast()
                ? PageCacheBallast.create(ballastDirectory) : Optional.empty();
        try {
            runRounds(options, payloads, results, ballast);
        } finally {
            if (ballast.isPresent()) {
                ballast.get().close();
            }
            TempDirectories.deleteRecursively(ballastDirectory);
        }
        String markdown = new Report(options, results, ZonedDateTime.now()).markdown();
        System.out.println();
        System.out.println(markdown);
        write(options.output(), markdown);
        System.out.println("Written to " + options.output().toAbsolutePath().normalize());
        return results.failures.isEmpty();
    }

    private static void runRounds(BenchOptions options, Payloads payloads, Results results,
                                  Optional<PageCacheBallast> ballast) throws IOException {
        for (int round = 1; round <= options.rounds(); round++) {
            List<String> order = new ArrayList<>(options.systems());
            if (round % 2 == 0) {
                Collections.reverse(order);
            }
            for (Phase phase : Phase.values()) {
                if (!options.runs(phase)) {
                    continue;
                }
                for (String system : systemsOf(phase, options, round, order)) {
                    log.info("[{}] Round {} of {}, {}", system, round, options.rounds(), phase);
                    try {
                        results.runs.add(switch (phase) {
                            case SINGLE -> runSingle(system, round, options, payloads, results);
                            case SASL_SSL -> runSaslSsl(system, round, options, payloads, results);
                            case REPLICATED -> runReplicated(system, round, options, payloads, results);
                            case FAILOVER -> runFailover(system, round, options, payloads, results);
                            case TXN -> runTransactions(system, round, options, payloads, results);
                            case MIRROR -> runMirror(system, round, options, payloads, results);
                            case MIRROR_SCALE -> runMirrorScale(system, round, options, payloads, results);
                            case FAILBACK -> runFailback(round, options, results);
                            case GROUPS -> runGroups(system, round, options, results);
                            case FETCH_SESSIONS -> runFetchSessions(system, round, options, payloads, results);
                            case LATENCY -> runLatency(system, round, options, payloads, results);
                            case CATCH_UP -> runCatchUp(system, round, options, payloads, results);
                        });
                    } catch (Exception e) {
                        // broad: one failed round is logged and recorded; the other systems and rounds still run
                        log.error("[{}] Round {}, {} failed", system, round, phase, e);
                        results.failures.add(new Results.Failure(system, phase, round, e.toString()));
                    }
                    System.gc();    // leave the next system a clean heap
                    if (ballast.isPresent()) {
                        ballast.get().topUp();  // the closed cluster's data freed memory (PageCacheBallast)
                    }
                }
            }
        }
    }

    private static Results.SystemRun runSingle(String system, int round, BenchOptions options, Payloads payloads,
                                               Results results) throws Exception {
        try (ClusterUnderTest cluster = createSingle(system)) {
            long startupMs = start(system, cluster::start, cluster::bootstrapServers);
            CpuAccounting.Snapshot before = CpuAccounting.snapshot();
            results.single.addAll(new SystemBenchmark(cluster, round, options, payloads).run());
            return finished(system, Phase.SINGLE, round, startupMs, before);
        }
    }

    private static Results.SystemRun runSaslSsl(String system, int round, BenchOptions options, Payloads payloads,
                                                Results results) throws Exception {
        try (ClusterUnderTest cluster = createSingle(system, true)) {
            long startupMs = start(system, cluster::start, cluster::bootstrapServers);
            CpuAccounting.Snapshot before = CpuAccounting.snapshot();
            results.saslSsl.addAll(new SystemBenchmark(cluster, round, options, payloads).run());
            return finished(system, Phase.SASL_SSL, round, startupMs, before);
        }
    }

    private static Results.SystemRun runReplicated(String system, int round, BenchOptions options, Payloads payloads,
                                                   Results results) throws Exception {
        try (ReplicatedCluster cluster = createReplicated(system, options, null)) {
            long startupMs = start(system, cluster::start, cluster::bootstrapServers);
            CpuAccounting.Snapshot before = CpuAccounting.snapshot();
            ReplicatedBenchmark benchmark = new ReplicatedBenchmark(cluster, round, options, payloads);
            results.replicated.addAll(benchmark.run());
            results.replicatedWarnings.addAll(benchmark.warnings());
            return finished(system, Phase.REPLICATED, round, startupMs, before);
        }
    }

    private static Results.SystemRun runTransactions(String system, int round, BenchOptions options,
                                                     Payloads payloads, Results results) throws Exception {
        try (ReplicatedCluster cluster = createReplicated(system, options, null)) {
            long startupMs = start(system, cluster::start, cluster::bootstrapServers);
            CpuAccounting.Snapshot before = CpuAccounting.snapshot();
            results.transactions.addAll(new TransactionsBenchmark(cluster, round, payloads).run());
            results.transactions.add(new StreamsEosBenchmark(cluster, round, results.transactionsWarnings).run());
            return finished(system, Phase.TXN, round, startupMs, before);
        }
    }

    private static Results.SystemRun runGroups(String system, int round, BenchOptions options, Results results)
            throws Exception {
        try (ClusterUnderTest cluster = createSingle(system)) {
            long startupMs = start(system, cluster::start, cluster::bootstrapServers);
            CpuAccounting.Snapshot before = CpuAccounting.snapshot();
            GroupsBenchmark benchmark = new GroupsBenchmark(cluster, round, options);
            try {
                benchmark.run();
            } finally {
                results.groups.addAll(benchmark.figures());
                results.groupsNotes.addAll(benchmark.notes());
            }
            return finished(system, Phase.GROUPS, round, startupMs, before);
        }
    }

    /** One fresh single-broker cluster with fetch sessions and one without. */
    private static Results.SystemRun runFetchSessions(String system, int round, BenchOptions options,
                                                      Payloads payloads, Results results) throws Exception {
        long startupMs = 0;
        CpuAccounting.Snapshot before = CpuAccounting.snapshot();
        for (FetchSessionsBenchmark.Sessions sessions : FetchSessionsBenchmark.Sessions.values()) {
            try (ClusterUnderTest cluster = createSingle(system, false, sessions.brokerOverrides())) {
                startupMs = Math.max(startupMs, start(system, cluster::start, cluster::bootstrapServers));
                results.fetchSessions.addAll(new FetchSessionsBenchmark(cluster, round, options, payloads)
                        .run(sessions));
            }
        }
        return finished(system, Phase.FETCH_SESSIONS, round, startupMs, before);
    }

    private static Results.SystemRun runLatency(String system, int round, BenchOptions options, Payloads payloads,
                                                Results results) throws Exception {
        try (ReplicatedCluster cluster = createReplicated(system, options, null)) {
            long startupMs = start(system, cluster::start, cluster::bootstrapServers);
            CpuAccounting.Snapshot before = CpuAccounting.snapshot();
            LoadLatencyBenchmark benchmark = new LoadLatencyBenchmark(cluster, round, options, payloads);
            results.latency.addAll(benchmark.run());
            if (cluster instanceof TwinlogReplicatedCluster) {
                // the mirror lag: this cluster is the source of a second one, through Twinlog's mirror and MM2's
                try (TwinlogReplicatedCluster destination = new TwinlogReplicatedCluster(
                        TempDirectories.create("latency-mirror-dst"), options.sessionTimeoutMs(), null)) {
                    destination.start();
                    results.latency.addAll(benchmark.runMirror(destination));
                    results.latency.addAll(benchmark.runMirrorMaker(destination));
                }
            }
            return finished(system, Phase.LATENCY, round, startupMs, before);
        }
    }

    private static Results.SystemRun runCatchUp(String system, int round, BenchOptions options, Payloads payloads,
                                                Results results) throws Exception {
        CpuAccounting.Snapshot before = CpuAccounting.snapshot();
        results.catchUp.addAll(new CatchUpBenchmark(round, options, payloads).run(system));
        return finished(system, Phase.CATCH_UP, round, 0, before);
    }

    /** One fresh cluster per failure mode, so every measurement starts from three healthy brokers. */
    private static Results.SystemRun runFailover(String system, int round, BenchOptions options, Payloads payloads,
                                                 Results results) throws Exception {
        long startupMs = 0;
        CpuAccounting.Snapshot before = CpuAccounting.snapshot();
        for (FailureMode mode : failureModes(system)) {
            try (ReplicatedCluster cluster = createReplicated(system, options, mode)) {
                startupMs = Math.max(startupMs, start(system, cluster::start, cluster::bootstrapServers));
                FailoverBenchmark benchmark = new FailoverBenchmark(cluster, round, options.sessionTimeoutMs(),
                        payloads);
                results.failovers.add(benchmark.run(mode));
                results.failoverWarnings.addAll(benchmark.warnings());
            }
        }
        return finished(system, Phase.FAILOVER, round, startupMs, before);
    }

    /** What a phase runs in a round: the systems, the mirror setups, or Twinlog alone (failback). */
    private static List<String> systemsOf(Phase phase, BenchOptions options, int round, List<String> order) {
        return switch (phase) {
            case MIRROR -> mirrorOrder(options, round);
            case MIRROR_SCALE -> order.contains(KafkaLeaderMoveBenchmark.SYSTEM) ? order
                    : List.of(MirrorScaleBenchmark.SYSTEM);
            case FAILBACK -> List.of(FailbackBenchmark.SYSTEM);
            default -> order;
        };
    }

    /** Twinlog's mirroring at scale, or Kafka's leadership move of as many partitions (issue 27 point 7). */
    private static Results.SystemRun runMirrorScale(String system, int round, BenchOptions options,
                                                    Payloads payloads, Results results) throws Exception {
        CpuAccounting.Snapshot before = CpuAccounting.snapshot();
        if (system.equals(KafkaLeaderMoveBenchmark.SYSTEM)) {
            KafkaLeaderMoveBenchmark benchmark = new KafkaLeaderMoveBenchmark(round, options, payloads);
            try {
                benchmark.run();
            } finally {
                results.mirrorScale.addAll(benchmark.figures());
            }
            return finished(system, Phase.MIRROR_SCALE, round, 0, before);
        }
        MirrorScaleBenchmark benchmark = new MirrorScaleBenchmark(round, options, payloads);
        try {
            benchmark.run();
        } finally {
            results.mirrorScale.addAll(benchmark.figures());
            results.mirrorScaleNotes.addAll(benchmark.notes());
        }
        return finished(MirrorScaleBenchmark.SYSTEM, Phase.MIRROR_SCALE, round, 0, before);
    }

    /** The failback phase; its figures join the mirror-scale section of the report. */
    private static Results.SystemRun runFailback(int round, BenchOptions options, Results results) throws Exception {
        CpuAccounting.Snapshot before = CpuAccounting.snapshot();
        FailbackBenchmark benchmark = new FailbackBenchmark(round, options);
        try {
            benchmark.run();
        } finally {
            results.mirrorScale.addAll(benchmark.figures());
            results.mirrorScaleNotes.addAll(benchmark.notes());
        }
        return finished(FailbackBenchmark.SYSTEM, Phase.FAILBACK, round, 0, before);
    }

    /** The mirror setups of a round: the selected order rotated left by round - 1. */
    static List<String> mirrorOrder(BenchOptions options, int round) {
        List<String> labels = new ArrayList<>();
        options.mirrorSetups().forEach(s -> labels.add(s.label()));
        Collections.rotate(labels, -(round - 1));
        return labels;
    }

    /** One {@link MirrorSetup} ({@code system} is its label): Twinlog's mirroring or MirrorMaker 2. */
    private static Results.SystemRun runMirror(String system, int round, BenchOptions options, Payloads payloads,
                                               Results results) throws Exception {
        CpuAccounting.Snapshot before = CpuAccounting.snapshot();
        MirrorSetup setup = MirrorSetup.parse(system)
                .orElseThrow(() -> new IllegalArgumentException("Unknown mirror setup " + system));
        MirrorBenchmark benchmark = new MirrorBenchmark(round, options, payloads);
        try {
            switch (setup) {
                case TWINLOG -> benchmark.runTwinlog();
                case MM2_TWINLOG -> benchmark.runMirrorMaker(setup,
                        new TwinlogCluster(TempDirectories.create("mm2-twinlog-src")),
                        new TwinlogCluster(TempDirectories.create("mm2-twinlog-dst")));
                case MM2_KAFKA -> benchmark.runMirrorMaker(setup,
                        new KafkaCluster(TempDirectories.create("mm2-kafka-src")),
                        new KafkaCluster(TempDirectories.create("mm2-kafka-dst")));
            }
        } finally {
            results.mirror.addAll(benchmark.figures());
            results.mirrorNotes.addAll(benchmark.notes());
        }
        // MM2 is a process of its own: its CPU is part of the setup under test, not "other processes".
        return finished(system, Phase.MIRROR, round, 0, before, benchmark.mirrorMakerCpuSeconds());
    }

    private interface Starter {
        void start() throws Exception;
    }

    private interface Bootstrap {
        String get();
    }

    private static long start(String system, Starter starter, Bootstrap bootstrap) throws Exception {
        long startNanos = System.nanoTime();
        starter.start();
        long startupMs = (System.nanoTime() - startNanos) / 1_000_000;
        log.info("[{}] Started in {} ms at {}", system, startupMs, bootstrap.get());
        return startupMs;
    }

    private static Results.SystemRun finished(String system, Phase phase, int round, long startupMs,
                                              CpuAccounting.Snapshot before) {
        return finished(system, phase, round, startupMs, before, 0);
    }

    /** {@code childCpuSeconds}: CPU of processes this run started for the system under test (MirrorMaker 2). */
    private static Results.SystemRun finished(String system, Phase phase, int round, long startupMs,
                                              CpuAccounting.Snapshot before, double childCpuSeconds) {
        CpuAccounting.Snapshot after = CpuAccounting.snapshot();
        Results.SystemRun run = new Results.SystemRun(system, phase, round, startupMs, after.wallSecondsSince(before),
                after.otherProcessesCpuSecondsSince(before).map(c -> Math.max(0, c - childCpuSeconds)));
        log.info("[{}] {} done in {} s; other processes used {} CPU-seconds meanwhile; shutting down", system, phase,
                String.format("%.1f", run.wallSeconds()),
                run.otherProcessesCpuSeconds().map(c -> String.format("%.1f", c)).orElse("an unknown number of"));
        return run;
    }

    private static ClusterUnderTest createSingle(String system) {
        return createSingle(system, false);
    }

    private static ClusterUnderTest createSingle(String system, boolean saslSsl) {
        return createSingle(system, saslSsl, Map.of());
    }

    private static ClusterUnderTest createSingle(String system, boolean saslSsl, Map<String, String> overrides) {
        return switch (system) {
            case "twinlog" -> new TwinlogCluster(TempDirectories.create(system), saslSsl, overrides);
            case "kafka" -> new KafkaCluster(TempDirectories.create(system), saslSsl, overrides);
            default -> throw new IllegalArgumentException("Unknown system " + system);
        };
    }

    private static ReplicatedCluster createReplicated(String system, BenchOptions options, FailureMode mode) {
        return switch (system) {
            case "twinlog" -> new TwinlogReplicatedCluster(TempDirectories.create(system + "-3"),
                    options.sessionTimeoutMs(), mode);
            case "kafka" -> new KafkaReplicatedCluster(TempDirectories.create(system + "-3"),
                    options.sessionTimeoutMs(), mode);
            default -> throw new IllegalArgumentException("Unknown system " + system);
        };
    }

    static List<FailureMode> failureModes(String system) {
        return switch (system) {
            case "twinlog" -> TwinlogReplicatedCluster.FAILURE_MODES;
            case "kafka" -> KafkaReplicatedCluster.FAILURE_MODES;
            default -> throw new IllegalArgumentException("Unknown system " + system);
        };
    }

    private static void write(Path output, String markdown) throws IOException {
        Path parent = output.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(output, markdown, StandardCharsets.UTF_8);
    }
}
