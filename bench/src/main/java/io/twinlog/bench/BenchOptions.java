package io.twinlog.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Command-line options. Each option can also be given as a system property ({@code -Dbench.records=N}, ...);
 * a command-line argument wins.
 *
 * <pre>
 * --quick                  the headline ratios in under 10 minutes: phases single (without the acks=1 workloads)
 *                          and replicated, 3 rounds, 2 s of warm-up and 5 s measured per workload (later options
 *                          still override these)
 * --warmup-seconds N       warm-up of each throughput workload (single, sasl-ssl, replicated), not measured
 *                          (default 5)
 * --measure-seconds N      measured interval of each throughput workload (default 20)
 * --records N              records prefilled per topic in the mirror phase (default 300000)
 * --record-size N          value size in bytes (default 1024)
 * --systems a,b            which systems to run, in order (default twinlog,kafka)
 * --phases a,b,c           which parts to run: single, sasl-ssl, replicated, failover, txn, mirror, mirror-scale,
 *                          groups, fetch-sessions, latency, failback
 *                          (default single,replicated,failover)
 * --mirror-setups a,b,c    what the mirror phase runs ({@link MirrorSetup}): twinlog, mm2-twinlog, mm2-kafka
 *                          (default all three; --systems does not apply to the mirror phase)
 * --group-commits N        commitSync calls measured in the groups phase (default 5000)
 * --group-repetitions N    stable-assignment measurements per protocol and round in the groups phase (default 5)
 * --mirror-partitions N   mirror partitions in the mirror-scale phase (default 1000)
 * --mirror-topic-partitions N  partitions per topic there; must divide --mirror-partitions (default 10)
 * --mirror-replication-factor N  replication factor of the mirror-scale topics (default 3)
 * --mirror-steady-seconds N  length of the mirror-scale steady-state window (default 30)
 * --mirror-replica-fetchers N  num.replica.fetchers of the mirror-scale brokers (default 1, Kafka's default)
 * --failback-prefix-mib N  size of the shared prefix in the failback phase (default 1024)
 * --catch-up-mib N         data copied in the catch-up phase (default 10240, 10 GiB)
 * --session-timeout-ms N   Twinlog zookeeper.session.timeout.ms and Kafka broker.session.timeout.ms of the
 *                          3-broker clusters (default 6000)
 * --rounds N               run everything N times, alternating the order of the systems; report medians (default 5)
 * --seed N                 seed of the random payloads (default 42)
 * --page-cache-ballast B   true: hold a clean file in the page cache for the run ({@link PageCacheBallast}),
 *                          false: leave free memory free (default true)
 * --output FILE            markdown results file (default bench/results/latest.md)
 * </pre>
 */
record BenchOptions(int records, int warmUpSeconds, int measuredSeconds, int recordSizeBytes, List<String> systems,
                    Set<Phase> phases, List<MirrorSetup> mirrorSetups, int groupCommits, int groupRepetitions,
                    int mirrorPartitions, int mirrorTopicPartitions, int mirrorReplicationFactor,
                    int mirrorSteadySeconds, int mirrorReplicaFetchers, int failbackPrefixMiB, int catchUpMiB,
                    int sessionTimeoutMs,
                    int rounds, long seed, boolean pageCacheBallast, boolean quick, Path output) {
    static final List<String> KNOWN_SYSTEMS = List.of("twinlog", "kafka");

    static final String USAGE = "Usage: bench/run.sh [--quick] [--warmup-seconds N] [--measure-seconds N] [--records N] "
            + "[--record-size N] [--systems twinlog,kafka] [--phases single,sasl-ssl,replicated,failover,txn,mirror,mirror-scale,groups,fetch-sessions,latency,catch-up,failback] "
            + "[--mirror-setups twinlog,mm2-twinlog,mm2-kafka] [--group-commits N] [--group-repetitions N] "
            + "[--mirror-partitions N] [--mirror-topic-partitions N] [--mirror-replication-factor N] "
            + "[--mirror-steady-seconds N] [--mirror-replica-fetchers N] [--failback-prefix-mib N] [--catch-up-mib N] "
            + "[--session-timeout-ms N] [--rounds N] [--seed N] [--page-cache-ballast true|false] "
            + "[--output FILE]";

    static BenchOptions parse(String[] args) {
        int records = Integer.parseInt(System.getProperty("bench.records", "300000"));
        int warmUpSeconds = Integer.parseInt(System.getProperty("bench.warmupSeconds", "5"));
        int measuredSeconds = Integer.parseInt(System.getProperty("bench.measureSeconds", "20"));
        int recordSize = Integer.parseInt(System.getProperty("bench.recordSize", "1024"));
        String systems = System.getProperty("bench.systems", String.join(",", KNOWN_SYSTEMS));
        String phases = System.getProperty("bench.phases", "single,replicated,failover");
        String mirrorSetups = System.getProperty("bench.mirrorSetups", "twinlog,mm2-twinlog,mm2-kafka");
        int groupCommits = Integer.parseInt(System.getProperty("bench.groupCommits", "5000"));
        int groupRepetitions = Integer.parseInt(System.getProperty("bench.groupRepetitions", "5"));
        int mirrorPartitions = Integer.parseInt(System.getProperty("bench.mirrorPartitions", "1000"));
        int mirrorTopicPartitions = Integer.parseInt(System.getProperty("bench.mirrorTopicPartitions", "10"));
        int mirrorReplicationFactor = Integer.parseInt(System.getProperty("bench.mirrorReplicationFactor", "3"));
        int mirrorSteadySeconds = Integer.parseInt(System.getProperty("bench.mirrorSteadySeconds", "30"));
        int mirrorReplicaFetchers = Integer.parseInt(System.getProperty("bench.mirrorReplicaFetchers", "1"));
        int failbackPrefixMiB = Integer.parseInt(System.getProperty("bench.failbackPrefixMiB", "1024"));
        int catchUpMiB = Integer.parseInt(System.getProperty("bench.catchUpMiB", "10240"));
        int sessionTimeoutMs = Integer.parseInt(System.getProperty("bench.sessionTimeoutMs", "6000"));
        int rounds = Integer.parseInt(System.getProperty("bench.rounds", "5"));
        long seed = Long.parseLong(System.getProperty("bench.seed", "42"));
        String output = System.getProperty("bench.output", "bench/results/latest.md");
        String ballast = System.getProperty("bench.pageCacheBallast", "true");
        boolean quick = false;
        for (int i = 0; i < args.length; i++) {
            String name = args[i];
            if (name.equals("--help") || name.equals("-h")) {
                throw new UsageException(USAGE);
            }
            if (name.equals("--quick")) {
                quick = true;
                phases = "single,replicated";
                rounds = 3;
                warmUpSeconds = 2;
                measuredSeconds = 5;
                continue;
            }
            if (i + 1 >= args.length) {
                throw new UsageException("Missing value for " + name + "\n" + USAGE);
            }
            String value = args[++i];
            switch (name) {
                case "--records" -> records = Integer.parseInt(value);
                case "--warmup-seconds" -> warmUpSeconds = Integer.parseInt(value);
                case "--measure-seconds" -> measuredSeconds = Integer.parseInt(value);
                case "--record-size" -> recordSize = Integer.parseInt(value);
                case "--systems" -> systems = value;
                case "--phases" -> phases = value;
                case "--mirror-setups" -> mirrorSetups = value;
                case "--group-commits" -> groupCommits = Integer.parseInt(value);
                case "--group-repetitions" -> groupRepetitions = Integer.parseInt(value);
                case "--mirror-partitions" -> mirrorPartitions = Integer.parseInt(value);
                case "--mirror-topic-partitions" -> mirrorTopicPartitions = Integer.parseInt(value);
                case "--mirror-replication-factor" -> mirrorReplicationFactor = Integer.parseInt(value);
                case "--mirror-steady-seconds" -> mirrorSteadySeconds = Integer.parseInt(value);
                case "--mirror-replica-fetchers" -> mirrorReplicaFetchers = Integer.parseInt(value);
                case "--failback-prefix-mib" -> failbackPrefixMiB = Integer.parseInt(value);
                case "--catch-up-mib" -> catchUpMiB = Integer.parseInt(value);
                case "--session-timeout-ms" -> sessionTimeoutMs = Integer.parseInt(value);
                case "--rounds" -> rounds = Integer.parseInt(value);
                case "--seed" -> seed = Long.parseLong(value);
                case "--output" -> output = value;
                case "--page-cache-ballast" -> ballast = value;
                default -> throw new UsageException("Unknown option " + name + "\n" + USAGE);
            }
        }
        if (records <= 0 || measuredSeconds <= 0 || warmUpSeconds < 0 || recordSize <= 0 || rounds <= 0) {
            throw new UsageException("--records, --measure-seconds, --record-size and --rounds must be positive, "
                    + "--warmup-seconds not negative");
        }
        if (groupCommits <= 0 || groupRepetitions <= 0) {
            throw new UsageException("--group-commits and --group-repetitions must be positive");
        }
        if (mirrorPartitions <= 0 || mirrorTopicPartitions <= 0 || mirrorPartitions % mirrorTopicPartitions != 0) {
            throw new UsageException("--mirror-partitions must be a positive multiple of --mirror-topic-partitions");
        }
        if (mirrorReplicationFactor < 1 || mirrorReplicationFactor > TwinlogReplicatedCluster.BROKERS
                || mirrorSteadySeconds <= 0 || mirrorReplicaFetchers <= 0) {
            throw new UsageException("--mirror-replication-factor must be between 1 and "
                    + TwinlogReplicatedCluster.BROKERS + ", --mirror-steady-seconds and --mirror-replica-fetchers "
                    + "positive");
        }
        if (failbackPrefixMiB <= 0 || catchUpMiB <= 0) {
            throw new UsageException("--failback-prefix-mib and --catch-up-mib must be positive");
        }
        if (sessionTimeoutMs < 1000 || sessionTimeoutMs > 60_000) {
            throw new UsageException("--session-timeout-ms must be between 1000 and 60000");
        }
        if (!ballast.equals("true") && !ballast.equals("false")) {
            throw new UsageException("--page-cache-ballast must be true or false");
        }
        List<String> systemList = new ArrayList<>();
        for (String s : systems.split(",")) {
            String system = s.trim().toLowerCase(Locale.ROOT);
            if (!KNOWN_SYSTEMS.contains(system)) {
                throw new UsageException("Unknown system '" + s + "'; known: " + KNOWN_SYSTEMS);
            }
            systemList.add(system);
        }
        Set<Phase> phaseSet = EnumSet.noneOf(Phase.class);
        for (String p : phases.split(",")) {
            phaseSet.add(Phase.parse(p.trim()).orElseThrow(() -> new UsageException("Unknown phase '" + p
                    + "'; known: single, sasl-ssl, replicated, failover, txn, mirror, mirror-scale, groups, fetch-sessions, latency, catch-up, failback")));
        }
        List<MirrorSetup> setupList = new ArrayList<>();
        for (String m : mirrorSetups.split(",")) {
            MirrorSetup setup = MirrorSetup.parse(m.trim()).orElseThrow(() -> new UsageException("Unknown mirror "
                    + "setup '" + m + "'; known: twinlog, mm2-twinlog, mm2-kafka"));
            if (!setupList.contains(setup)) {
                setupList.add(setup);
            }
        }
        return new BenchOptions(records, warmUpSeconds, measuredSeconds, recordSize, List.copyOf(systemList),
                Set.copyOf(phaseSet), List.copyOf(setupList), groupCommits, groupRepetitions, mirrorPartitions,
                mirrorTopicPartitions, mirrorReplicationFactor, mirrorSteadySeconds, mirrorReplicaFetchers,
                failbackPrefixMiB, catchUpMiB, sessionTimeoutMs, rounds, seed, Boolean.parseBoolean(ballast), quick,
                Path.of(output));
    }

    /** The producer acknowledgement settings of the single-node phase: acks=all alone with --quick. */
    List<Acks> singleNodeAcks() {
        return quick ? List.of(Acks.ALL) : List.of(Acks.values());
    }

    /** How each throughput workload is timed. */
    SteadyWindow window() {
        return SteadyWindow.ofSeconds(warmUpSeconds, measuredSeconds);
    }

    boolean runs(Phase phase) {
        return phases.contains(phase);
    }

    boolean comparesBoth() {
        return systems.contains("twinlog") && systems.contains("kafka");
    }

    /** A bad command line: the message is printed without a stack trace. */
    static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }

    @Override
    public String toString() {
        return "warmUpSeconds=" + warmUpSeconds + ", measuredSeconds=" + measuredSeconds + ", records=" + records
                + ", recordSizeBytes=" + recordSizeBytes + ", systems=" + systems + ", phases="
                + EnumSet.copyOf(phases) + ", mirrorSetups=" + mirrorSetups + ", groupCommits=" + groupCommits + ", groupRepetitions="
                + groupRepetitions + ", mirrorPartitions=" + mirrorPartitions + ", mirrorTopicPartitions="
                + mirrorTopicPartitions + ", mirrorReplicationFactor=" + mirrorReplicationFactor
                + ", mirrorSteadySeconds=" + mirrorSteadySeconds + ", mirrorReplicaFetchers="
                + mirrorReplicaFetchers + ", failbackPrefixMiB=" + failbackPrefixMiB + ", sessionTimeoutMs="
                + sessionTimeoutMs + ", rounds=" + rounds + ", pageCacheBallast=" + pageCacheBallast + ", quick=" + quick
                + ", seed=" + seed + ", output=" + output;
    }
}
