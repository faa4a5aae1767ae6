package io.twinlog.bench;

import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.ToDoubleFunction;

/**
 * Turns the measurements into one markdown section: the set-up, a results table (one row per workload and system,
 * the median over rounds) and, when both Twinlog and Kafka ran, a table of Twinlog/Kafka ratios of those medians.
 */
final class Report {
    private final BenchOptions options;
    private final List<SystemRun> runs;
    private final List<Measurement> measurements;
    private final ZonedDateTime finishedAt;

    Report(BenchOptions options, List<SystemRun> runs, List<Measurement> measurements, ZonedDateTime finishedAt) {
        this.options = options;
        this.runs = runs;
        this.measurements = measurements;
        this.finishedAt = finishedAt;
    }

    String markdown() {
        Map<String, Map<String, Aggregate>> byWorkload = aggregate();
        StringBuilder out = new StringBuilder();
        out.append("## Twinlog vs Apache Kafka 4.4.0: single-node produce/consume (")
                .append(finishedAt.format(DateTimeFormatter.ISO_LOCAL_DATE)).append(")\n\n");
        out.append(setUp()).append("\n\n");
        out.append(resultsTable(byWorkload).render());
        if (options.systems().contains("twinlog") && options.systems().contains("kafka")) {
            out.append("\n### Twinlog / Kafka\n\n");
            out.append("Throughput ratio above 1: Twinlog is faster. Latency ratio below 1: Twinlog is quicker.\n\n");
            out.append(ratioTable(byWorkload, "twinlog", "kafka").render());
        }
        return out.toString();
    }

    private String setUp() {
        Runtime rt = Runtime.getRuntime();
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "- %,d records of %,d B random values per workload; warm-up of %,d "
                        + "records per acks setting per system (not reported); payload seed %d.%n",
                options.records(), options.recordSizeBytes(), options.warmUpRecords(), options.seed()));
        if (options.rounds() > 1) {
            s.append(String.format(Locale.ROOT, "- %d rounds, system order alternating; every figure is the median "
                    + "over rounds (max ms: the largest); spread = (max - min) / median of records/s.%n",
                    options.rounds()));
        }
        s.append(String.format(Locale.ROOT, "- Producer: linger.ms=%d, batch.size=%d, compression none, no keys; "
                        + "acks=1 without idempotence, acks=all with idempotence. Consumer: assign() + "
                        + "seekToBeginning, no group.id, client defaults otherwise (kafka-clients 4.4.0).%n",
                ClientSettings.LINGER_MS, ClientSettings.BATCH_SIZE_BYTES));
        s.append("- One JVM, one system at a time, broker and clients in the same process on loopback; both brokers "
                + "with default settings (Twinlog: embedded ZooKeeper; Kafka: KRaft combined node via "
                + "KafkaClusterTestKit).\n");
        s.append(String.format(Locale.ROOT, "- Machine: %d cores, max heap %d MiB, Java %s, %s %s. Twinlog %s.%n",
                rt.availableProcessors(), rt.maxMemory() >> 20, System.getProperty("java.version"),
                System.getProperty("os.name"), System.getProperty("os.arch"),
                System.getProperty("bench.gitRevision", "revision unknown")));
        s.append("- Per system run: start-up time; duration of the workloads; CPU used by other processes meanwhile "
                + "(out of cores x duration; more than a few percent makes the run unreliable): ");
        for (int i = 0; i < runs.size(); i++) {
            SystemRun run = runs.get(i);
            s.append(i == 0 ? "" : "; ").append(displayName(run.system()))
                    .append(options.rounds() > 1 ? " (round " + run.round() + ")" : "").append(' ')
                    .append(run.startupMs()).append(" ms, ").append(format("%.1f", run.wallSeconds())).append(" s, ")
                    .append(run.otherProcessesCpuSeconds().map(c -> format("%.1f", c) + " CPU-s").orElse("unknown"));
        }
        s.append('.');
        return s.toString();
    }

    private MarkdownTable resultsTable(Map<String, Map<String, Aggregate>> byWorkload) {
        boolean spread = options.rounds() > 1;
        List<String> headers = new ArrayList<>(List.of("Workload", "System", "records/s", "MiB/s", "p50 ms",
                "p99 ms", "max ms"));
        if (spread) {
            headers.add("spread");
        }
        MarkdownTable table = MarkdownTable.withColumns(headers.toArray(String[]::new));
        byWorkload.forEach((workload, bySystem) -> bySystem.forEach((system, a) -> {
            List<String> cells = new ArrayList<>(List.of(workload, displayName(system),
                    format("%,.0f", a.recordsPerSecond()), format("%.1f", a.mebibytesPerSecond()),
                    a.p50Ms().map(v -> format("%.1f", v)).orElse("-"),
                    a.p99Ms().map(v -> format("%.1f", v)).orElse("-"),
                    a.maxMs().map(v -> format("%.1f", v)).orElse("-")));
            if (spread) {
                cells.add(format("%.0f %%", 100 * a.recordsPerSecondSpread()));
            }
            table.row(cells.toArray(String[]::new));
        }));
        return table;
    }

    private static MarkdownTable ratioTable(Map<String, Map<String, Aggregate>> byWorkload, String numerator,
                                            String denominator) {
        MarkdownTable table = MarkdownTable.withColumns("Workload", "throughput", "p50 latency", "p99 latency");
        byWorkload.forEach((workload, bySystem) -> {
            Aggregate a = bySystem.get(numerator);
            Aggregate b = bySystem.get(denominator);
            if (a == null || b == null) {
                return;
            }
            String latency50 = "-";
            String latency99 = "-";
            if (a.p50Ms().isPresent() && b.p50Ms().isPresent()) {
                latency50 = ratio(a.p50Ms().get(), b.p50Ms().get());
                latency99 = ratio(a.p99Ms().get(), b.p99Ms().get());
            }
            table.row(workload, ratio(a.recordsPerSecond(), b.recordsPerSecond()), latency50, latency99);
        });
        return table;
    }

    /** Workloads in the order first measured; within each, systems in the order given on the command line. */
    private Map<String, Map<String, Aggregate>> aggregate() {
        Map<String, Map<String, List<Measurement>>> grouped = new LinkedHashMap<>();
        for (Measurement m : measurements) {
            Map<String, List<Measurement>> bySystem = grouped.computeIfAbsent(m.workload(), w -> {
                Map<String, List<Measurement>> systems = new LinkedHashMap<>();
                options.systems().forEach(system -> systems.put(system, new ArrayList<>()));
                return systems;
            });
            bySystem.get(m.system()).add(m);
        }
        Map<String, Map<String, Aggregate>> out = new LinkedHashMap<>();
        grouped.forEach((workload, bySystem) -> {
            Map<String, Aggregate> aggregates = new LinkedHashMap<>();
            bySystem.forEach((system, list) -> {
                if (!list.isEmpty()) {
                    aggregates.put(system, Aggregate.of(list));
                }
            });
            out.put(workload, aggregates);
        });
        return out;
    }

    private static String ratio(double a, double b) {
        return b == 0 ? "n/a" : format("%.2f", a / b);
    }

    private static String format(String pattern, double value) {
        return String.format(Locale.ROOT, pattern, value);
    }

    static String displayName(String system) {
        return switch (system) {
            case "twinlog" -> "Twinlog";
            case "kafka" -> "Kafka";
            default -> system;
        };
    }

    /**
     * One system's run in one round: start-up time, wall time of its workloads, and CPU seconds other processes
     * used meanwhile (unknown off Linux).
     */
    record SystemRun(String system, int round, long startupMs, double wallSeconds,
                     Optional<Double> otherProcessesCpuSeconds) {
    }

    /** Medians over rounds of one workload on one system (max latency: the largest seen). */
    private record Aggregate(double recordsPerSecond, double mebibytesPerSecond, double recordsPerSecondSpread,
                             Optional<Double> p50Ms, Optional<Double> p99Ms, Optional<Double> maxMs) {

        static Aggregate of(List<Measurement> rounds) {
            double[] rates = values(rounds, m -> m.throughput().recordsPerSecond());
            double medianRate = median(rates);
            double spread = (rates[rates.length - 1] - rates[0]) / medianRate;
            boolean hasLatency = rounds.stream().allMatch(m -> m.latency().isPresent());
            return new Aggregate(medianRate, median(values(rounds, m -> m.throughput().mebibytesPerSecond())), spread,
                    hasLatency ? Optional.of(median(values(rounds, m -> m.latency().get().p50Ms()))) : Optional.empty(),
                    hasLatency ? Optional.of(median(values(rounds, m -> m.latency().get().p99Ms()))) : Optional.empty(),
                    hasLatency ? Optional.of(max(values(rounds, m -> m.latency().get().maxMs()))) : Optional.empty());
        }

        /** The values, sorted ascending. */
        private static double[] values(List<Measurement> rounds, ToDoubleFunction<Measurement> metric) {
            double[] values = rounds.stream().mapToDouble(metric).toArray();
            Arrays.sort(values);
            return values;
        }

        private static double median(double[] sorted) {
            int n = sorted.length;
            return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        }

        private static double max(double[] sorted) {
            return sorted[sorted.length - 1];
        }
    }
}
