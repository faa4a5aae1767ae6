package io.twinlog.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.ToDoubleFunction;

import static io.twinlog.bench.ReportFormat.displayName;
import static io.twinlog.bench.ReportFormat.format;
import static io.twinlog.bench.ReportFormat.median;
import static io.twinlog.bench.ReportFormat.roundOrder;

/**
 * The report's throughput phases (single node, SASL_SSL, replicated, transactions): per workload and system the
 * medians over rounds, then, when both Twinlog and Kafka ran, Twinlog/Kafka ratios of those medians and, for the
 * replicated produce, whether the target was met.
 */
final class ThroughputSections {
    /**
     * Target of the replicated produce (issue 27): Twinlog's throughput at least this multiple of Kafka's and its
     * p99 latency no worse, both by the median of the per-round ratios.
     */
    static final double REPLICATED_THROUGHPUT_TARGET = 1.2;

    private final BenchOptions options;
    private final Results results;

    ThroughputSections(BenchOptions options, Results results) {
        this.options = options;
        this.results = results;
    }

    String singleSection() {
        StringBuilder out = new StringBuilder("### Single node: produce/consume\n\n");
        out.append(windowLine());
        out.append("- Both brokers with default settings (Twinlog: embedded ZooKeeper; Kafka: one KRaft combined "
                + "node via KafkaClusterTestKit), replication factor 1.\n\n");
        Map<String, Map<String, Aggregate>> byWorkload = aggregate(results.single);
        out.append(resultsTable(byWorkload).render());
        if (options.comparesBoth()) {
            out.append("\nTwinlog / Kafka (throughput above 1: Twinlog is faster; latency below 1: Twinlog is "
                    + "quicker):\n\n");
            out.append(ratioTable(byWorkload, results.single).render());
            if (options.rounds() > 1) {
                out.append("\nPer-round ratios in round order (").append(roundOrder(options)).append(").\n");
            }
        }
        return out.toString();
    }

    String saslSslSection() {
        StringBuilder out = new StringBuilder("### Single node over SASL_SSL: produce/consume\n\n");
        out.append("- As the single-node phase, with every connection (clients and the broker's own) over one "
                + "SASL_SSL listener, SASL/PLAIN over TLS (JDK TLS provider, the protocol and cipher suite both "
                + "sides negotiate by default), and Kafka's StandardAuthorizer with the clients' user a super user "
                + "(as Kafka's test kit sets SASL up). Twinlog: a keytool RSA-2048 certificate; Kafka: the "
                + "certificate of its test kit's SslManager and its JAAS users.\n\n");
        Map<String, Map<String, Aggregate>> byWorkload = aggregate(results.saslSsl);
        out.append(resultsTable(byWorkload).render());
        if (options.comparesBoth()) {
            out.append("\nTwinlog / Kafka over SASL_SSL:\n\n");
            out.append(ratioTable(byWorkload, results.saslSsl).render());
        }
        return out.toString();
    }

    String transactionsSection() {
        StringBuilder out = new StringBuilder("### Three brokers: transactions\n\n");
        out.append(String.format(Locale.ROOT, "- One transactional producer (acks=all), records without keys to %d "
                        + "partitions (replication factor %d, min.insync.replicas=%d), a commit every %d ms, each "
                        + "system's default transaction.version; %d s of warm-up, then %d s measured. Latency "
                        + "columns: commitTransaction()'s time.%n", TransactionsBenchmark.PARTITIONS,
                ReplicatedBenchmark.REPLICATION_FACTOR, ReplicatedBenchmark.MIN_IN_SYNC_REPLICAS,
                TransactionsBenchmark.TRANSACTION_MS, TransactionsBenchmark.WARM_UP_SECONDS,
                TransactionsBenchmark.MEASURED_SECONDS));
        out.append(String.format(Locale.ROOT, "- Kafka Streams exactly_once_v2 (2 stream threads, commit.interval.ms "
                        + "100): %,d records of %d B in %d partitions copied through mapValues to %d partitions; "
                        + "%d s of warm-up, then the records committed to the output over %d s (no latency).%n",
                StreamsEosBenchmark.RECORDS, StreamsEosBenchmark.VALUE_BYTES, StreamsEosBenchmark.PARTITIONS,
                StreamsEosBenchmark.PARTITIONS, StreamsEosBenchmark.WARM_UP_SECONDS,
                StreamsEosBenchmark.MEASURED_SECONDS));
        out.append("- The clusters of the replicated phase (3 brokers each, sharing the JVM and the cores with the "
                + "clients).\n\n");
        Map<String, Map<String, Aggregate>> byWorkload = aggregate(results.transactions);
        out.append(resultsTable(byWorkload).render());
        if (options.comparesBoth()) {
            out.append("\nTwinlog / Kafka:\n\n");
            out.append(ratioTable(byWorkload, results.transactions).render());
            if (options.rounds() > 1) {
                out.append("\nPer-round ratios in round order (").append(roundOrder(options)).append(").\n");
            }
        }
        if (!results.transactionsWarnings.isEmpty()) {
            out.append('\n');
            results.transactionsWarnings.forEach(w -> out.append("- **Warning**: ").append(w).append('\n'));
        }
        return out.toString();
    }

    String replicatedSection() {
        StringBuilder out = new StringBuilder("### Three brokers: replicated produce\n\n");
        out.append(String.format(Locale.ROOT, "- acks=all (idempotent), topics with replication factor %d and "
                        + "min.insync.replicas=%d.%n", ReplicatedBenchmark.REPLICATION_FACTOR,
                ReplicatedBenchmark.MIN_IN_SYNC_REPLICAS));
        out.append(windowLine());
        out.append("- Twinlog: 3 brokers and one embedded ZooKeeper. Kafka: 3 brokers and 1 separate KRaft "
                + "controller via KafkaClusterTestKit. Default broker settings apart from the session timeouts (")
                .append(options.sessionTimeoutMs()).append(" ms). All nodes and the producer share the JVM and the "
                        + "cores.\n\n");
        Map<String, Map<String, Aggregate>> byWorkload = aggregate(results.replicated);
        out.append(resultsTable(byWorkload).render());
        if (options.comparesBoth()) {
            out.append("\nTwinlog / Kafka:\n\n");
            out.append(ratioTable(byWorkload, results.replicated).render());
            if (options.rounds() > 1) {
                out.append("\nPer-round ratios in round order (").append(roundOrder(options)).append(").\n");
            }
            out.append("\nTarget: throughput ratio >= ").append(format("%.1f", REPLICATED_THROUGHPUT_TARGET))
                    .append(" and p99 latency ratio <= 1: ");
            List<String> verdicts = new ArrayList<>();
            byWorkload.keySet().forEach(workload -> {
                List<Double> throughput = pairedRatios(results.replicated, workload,
                        m -> m.throughput().recordsPerSecond());
                List<Double> p99 = pairedRatios(results.replicated, workload, m -> m.latency().get().p99Ms());
                if (!throughput.isEmpty()) {
                    double r = median(throughput.stream().mapToDouble(Double::doubleValue).sorted().toArray());
                    double l = median(p99.stream().mapToDouble(Double::doubleValue).sorted().toArray());
                    verdicts.add(workload + " " + format("%.2f", r) + ", p99 " + format("%.2f", l) + " "
                            + (r >= REPLICATED_THROUGHPUT_TARGET && l <= 1 ? "(met)" : "(**not met**)"));
                }
            });
            out.append(String.join("; ", verdicts)).append(".\n");
        }
        if (results.replicatedWarnings.isEmpty()) {
            out.append("\nEvery partition still had all 3 replicas in its ISR after each measured workload.\n");
        } else {
            out.append('\n');
            results.replicatedWarnings.forEach(w -> out.append("- **Warning**: ").append(w).append('\n'));
        }
        return out.toString();
    }

    private MarkdownTable resultsTable(Map<String, Map<String, Aggregate>> byWorkload) {
        boolean spread = options.rounds() > 1;
        boolean cpu = byWorkload.values().stream().flatMap(m -> m.values().stream())
                .anyMatch(a -> a.cpuSecondsPerGib().isPresent());
        List<String> headers = new ArrayList<>(List.of("Workload", "System", "records/s", "MiB/s", "p50 ms",
                "p99 ms", "p99.9 ms", "max ms"));
        if (cpu) {
            headers.add("CPU-s/GiB");
        }
        if (spread) {
            headers.add("spread");
        }
        MarkdownTable table = MarkdownTable.withColumns(headers.toArray(String[]::new));
        byWorkload.forEach((workload, bySystem) -> bySystem.forEach((system, a) -> {
            List<String> cells = new ArrayList<>(List.of(workload, displayName(system),
                    format("%,.0f", a.recordsPerSecond()), format("%.1f", a.mebibytesPerSecond()),
                    a.p50Ms().map(v -> format("%.1f", v)).orElse("-"),
                    a.p99Ms().map(v -> format("%.1f", v)).orElse("-"),
                    a.p999Ms().map(v -> format("%.1f", v)).orElse("-"),
                    a.maxMs().map(v -> format("%.1f", v)).orElse("-")));
            if (cpu) {
                cells.add(a.cpuSecondsPerGib().map(v -> format("%.2f", v)).orElse("-"));
            }
            if (spread) {
                cells.add(format("%.0f %%", 100 * a.recordsPerSecondSpread()));
            }
            table.row(cells.toArray(String[]::new));
        }));
        return table;
    }

    /**
     * Twinlog / Kafka per workload: with several rounds, the median of the per-round ratios (each round pairs the
     * two systems' runs, the order alternating) and their range; with one round, the ratio itself. Throughput above
     * 1, latency and CPU per GiB below 1: Twinlog is ahead.
     */
    private MarkdownTable ratioTable(Map<String, Map<String, Aggregate>> byWorkload, List<Measurement> measurements) {
        boolean perRound = options.rounds() > 1;
        List<String> headers = new ArrayList<>(List.of("Workload", "throughput"));
        if (perRound) {
            headers.add("throughput min to max");
        }
        headers.addAll(List.of("p50 latency", "p99 latency", "CPU-s/GiB"));
        if (perRound) {
            headers.add("throughput per round");
        }
        MarkdownTable table = MarkdownTable.withColumns(headers.toArray(String[]::new));
        byWorkload.forEach((workload, bySystem) -> {
            if (bySystem.get("twinlog") == null || bySystem.get("kafka") == null) {
                return;
            }
            List<Double> throughput = new ArrayList<>();
            List<Double> p50 = new ArrayList<>();
            List<Double> p99 = new ArrayList<>();
            List<Double> cpu = new ArrayList<>();
            List<String> perRoundCells = new ArrayList<>();
            for (int round = 1; round <= options.rounds(); round++) {
                Optional<Measurement> t = find(measurements, workload, "twinlog", round);
                Optional<Measurement> k = find(measurements, workload, "kafka", round);
                if (t.isEmpty() || k.isEmpty()) {
                    perRoundCells.add("-");
                    continue;
                }
                double r = t.get().throughput().recordsPerSecond() / k.get().throughput().recordsPerSecond();
                throughput.add(r);
                perRoundCells.add(format("%.2f", r));
                if (t.get().latency().isPresent() && k.get().latency().isPresent()) {
                    p50.add(t.get().latency().get().p50Ms() / k.get().latency().get().p50Ms());
                    p99.add(t.get().latency().get().p99Ms() / k.get().latency().get().p99Ms());
                }
                if (t.get().cpuSecondsPerGib().isPresent() && k.get().cpuSecondsPerGib().isPresent()) {
                    cpu.add(t.get().cpuSecondsPerGib().getAsDouble() / k.get().cpuSecondsPerGib().getAsDouble());
                }
            }
            List<String> cells = new ArrayList<>(List.of(workload, medianOf(throughput)));
            if (perRound) {
                cells.add(throughput.isEmpty() ? "-" : format("%.2f", throughput.stream().min(Double::compare).get())
                        + " to " + format("%.2f", throughput.stream().max(Double::compare).get()));
            }
            cells.addAll(List.of(medianOf(p50), medianOf(p99), medianOf(cpu)));
            if (perRound) {
                cells.add(String.join(" / ", perRoundCells));
            }
            table.row(cells.toArray(String[]::new));
        });
        return table;
    }

    /** The median of some ratios, formatted; "-" when there are none. */
    private static String medianOf(List<Double> ratios) {
        if (ratios.isEmpty()) {
            return "-";
        }
        double[] sorted = ratios.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return format("%.2f", median(sorted));
    }

    private static Optional<Measurement> find(List<Measurement> measurements, String workload, String system,
                                              int round) {
        return measurements.stream().filter(m -> m.workload().equals(workload) && m.system().equals(system)
                && m.round() == round).findFirst();
    }

    /** "- N s of warm-up, then M s measured ..." for the throughput phases. */
    private String windowLine() {
        return String.format(Locale.ROOT, "- Each workload: %d s of warm-up (not reported), then %d s measured: "
                + "records acknowledged (produce) or returned by poll() (consume) in that interval. CPU-s/GiB: CPU "
                + "seconds the system's threads (this JVM's CPU minus the benchmark's client threads') spent per GiB "
                + "of values in the interval. Topics bounded to 512 MiB (segments of 64 MiB, retention checked every "
                + "2 s) so that the logs stay in memory.%n", options.warmUpSeconds(), options.measuredSeconds());
    }

    /** Twinlog / Kafka of one metric, one ratio per round in which both systems ran the workload. */
    private List<Double> pairedRatios(List<Measurement> measurements, String workload,
                                      ToDoubleFunction<Measurement> metric) {
        List<Double> ratios = new ArrayList<>();
        for (int round = 1; round <= options.rounds(); round++) {
            Optional<Measurement> t = find(measurements, workload, "twinlog", round);
            Optional<Measurement> k = find(measurements, workload, "kafka", round);
            if (t.isPresent() && k.isPresent()) {
                ratios.add(metric.applyAsDouble(t.get()) / metric.applyAsDouble(k.get()));
            }
        }
        return ratios;
    }

    /** Workloads in the order first measured; within each, systems in the order given on the command line. */
    private Map<String, Map<String, Aggregate>> aggregate(List<Measurement> measurements) {
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

    /** Medians over rounds of one workload on one system (max latency: the largest seen). */
    private record Aggregate(double recordsPerSecond, double mebibytesPerSecond, double recordsPerSecondSpread,
                             Optional<Double> p50Ms, Optional<Double> p99Ms, Optional<Double> p999Ms,
                             Optional<Double> maxMs, Optional<Double> cpuSecondsPerGib) {

        static Aggregate of(List<Measurement> rounds) {
            double[] rates = values(rounds, m -> m.throughput().recordsPerSecond());
            double medianRate = median(rates);
            double spread = (rates[rates.length - 1] - rates[0]) / medianRate;
            boolean hasLatency = rounds.stream().allMatch(m -> m.latency().isPresent());
            boolean hasCpu = rounds.stream().allMatch(m -> m.cpuSecondsPerGib().isPresent());
            return new Aggregate(medianRate, median(values(rounds, m -> m.throughput().mebibytesPerSecond())), spread,
                    hasLatency ? Optional.of(median(values(rounds, m -> m.latency().get().p50Ms()))) : Optional.empty(),
                    hasLatency ? Optional.of(median(values(rounds, m -> m.latency().get().p99Ms()))) : Optional.empty(),
                    hasLatency ? Optional.of(median(values(rounds, m -> m.latency().get().p999Ms())))
                            : Optional.empty(),
                    hasLatency ? Optional.of(max(values(rounds, m -> m.latency().get().maxMs()))) : Optional.empty(),
                    hasCpu ? Optional.of(median(values(rounds, m -> m.cpuSecondsPerGib().getAsDouble())))
                            : Optional.empty());
        }

        /** The values, sorted ascending. */
        private static double[] values(List<Measurement> rounds, ToDoubleFunction<Measurement> metric) {
            double[] values = rounds.stream().mapToDouble(metric).toArray();
            Arrays.sort(values);
            return values;
        }

        private static double max(double[] sorted) {
            return sorted[sorted.length - 1];
        }
    }
}
