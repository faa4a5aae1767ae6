package io.twinlog.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Command-line options. Each option can also be given as a system property ({@code -Dbench.records=N}, ...);
 * a command-line argument wins.
 *
 * <pre>
 * --records N         records per measured workload (default 300000)
 * --warmup-records N  records per acks setting in each system's warm-up (default 50000; 0 disables it)
 * --record-size N     value size in bytes (default 1024)
 * --systems a,b       which systems to run, in order (default twinlog,kafka)
 * --rounds N          run every system N times, alternating the order; report medians (default 1)
 * --seed N            seed of the random payloads (default 42)
 * --output FILE       markdown results file (default bench/results/latest.md)
 * </pre>
 */
record BenchOptions(int records, int warmUpRecords, int recordSizeBytes, List<String> systems, int rounds,
                    long seed, Path output) {
    static final List<String> KNOWN_SYSTEMS = List.of("twinlog", "kafka");

    static final String USAGE = "Usage: bench/run.sh [--records N] [--warmup-records N] [--record-size N] "
            + "[--systems twinlog,kafka] [--rounds N] [--seed N] [--output FILE]";

    static BenchOptions parse(String[] args) {
        int records = Integer.parseInt(System.getProperty("bench.records", "300000"));
        int warmUpRecords = Integer.parseInt(System.getProperty("bench.warmupRecords", "50000"));
        int recordSize = Integer.parseInt(System.getProperty("bench.recordSize", "1024"));
        String systems = System.getProperty("bench.systems", String.join(",", KNOWN_SYSTEMS));
        int rounds = Integer.parseInt(System.getProperty("bench.rounds", "1"));
        long seed = Long.parseLong(System.getProperty("bench.seed", "42"));
        String output = System.getProperty("bench.output", "bench/results/latest.md");
        for (int i = 0; i < args.length; i++) {
            String name = args[i];
            if (name.equals("--help") || name.equals("-h")) {
                throw new UsageException(USAGE);
            }
            if (i + 1 >= args.length) {
                throw new UsageException("Missing value for " + name + "\n" + USAGE);
            }
            String value = args[++i];
            switch (name) {
                case "--records" -> records = Integer.parseInt(value);
                case "--warmup-records" -> warmUpRecords = Integer.parseInt(value);
                case "--record-size" -> recordSize = Integer.parseInt(value);
                case "--systems" -> systems = value;
                case "--rounds" -> rounds = Integer.parseInt(value);
                case "--seed" -> seed = Long.parseLong(value);
                case "--output" -> output = value;
                default -> throw new UsageException("Unknown option " + name + "\n" + USAGE);
            }
        }
        if (records <= 0 || warmUpRecords < 0 || recordSize <= 0 || rounds <= 0) {
            throw new UsageException("--records, --record-size and --rounds must be positive, --warmup-records not "
                    + "negative");
        }
        List<String> systemList = new ArrayList<>();
        for (String s : systems.split(",")) {
            String system = s.trim().toLowerCase(Locale.ROOT);
            if (!KNOWN_SYSTEMS.contains(system)) {
                throw new UsageException("Unknown system '" + s + "'; known: " + KNOWN_SYSTEMS);
            }
            systemList.add(system);
        }
        return new BenchOptions(records, warmUpRecords, recordSize, List.copyOf(systemList), rounds, seed,
                Path.of(output));
    }

    /** A bad command line: the message is printed without a stack trace. */
    static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }

    @Override
    public String toString() {
        return "records=" + records + ", warmUpRecords=" + warmUpRecords + ", recordSizeBytes=" + recordSizeBytes
                + ", systems=" + systems + ", rounds=" + rounds + ", seed=" + seed + ", output=" + output;
    }
}
