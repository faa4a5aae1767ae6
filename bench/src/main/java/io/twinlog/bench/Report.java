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
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * Turns the results into one markdown section: the set-up, then per phase a results table (one row per workload
 * and system, the median over rounds) and, when both Twinlog and Kafka ran, Twinlog/Kafka ratios of those medians
 * and whether the targets were met.
 */
final class Report {
    /**
     * Target of the replicated produce (issue 27): Twinlog's throughput at least this multiple of Kafka's and its
     * p99 latency no worse, both by the median of the per-round ratios.
     */
    static final double REPLICATED_THROUGHPUT_TARGET = 1.2;

    private final BenchOptions options;
    private final Results results;
    private final ZonedDateTime finishedAt;

    Report(BenchOptions options, Results results, ZonedDateTime finishedAt) {
        this.options = options;
        this.results = results;
        this.finishedAt = finishedAt;
    }

    String markdown() {
        StringBuilder out = new StringBuilder();
        out.append("## Twinlog vs Apache Kafka 4.4.0 (")
                .append(finishedAt.format(DateTimeFormatter.ISO_LOCAL_DATE)).append(")\n\n");
        out.append(setUp()).append("\n");
        if (!results.single.isEmpty()) {
            out.append("\n").append(singleSection());
        }
        if (!results.saslSsl.isEmpty()) {
            out.append("\n").append(saslSslSection());
        }
        if (!results.replicated.isEmpty()) {
            out.append("\n").append(replicatedSection());
        }
        if (!results.transactions.isEmpty()) {
            out.append("\n").append(transactionsSection());
        }
        if (!results.failovers.isEmpty()) {
            out.append("\n").append(failoverSection());
        }
        if (!results.mirror.isEmpty() || !results.mirrorNotes.isEmpty()) {
            out.append("\n").append(mirrorSection());
        }
        if (!results.mirrorScale.isEmpty() || !results.mirrorScaleNotes.isEmpty()) {
            out.append("\n").append(mirrorScaleSection());
        }
        if (!results.groups.isEmpty() || !results.groupsNotes.isEmpty()) {
            out.append("\n").append(groupsSection());
        }
        if (!results.latency.isEmpty()) {
            out.append("\n").append(latencySection());
        }
        if (!results.catchUp.isEmpty()) {
            out.append("\n").append(catchUpSection());
        }
        if (!results.fetchSessions.isEmpty()) {
            out.append("\n").append(fetchSessionsSection());
        }
        return out.toString();
    }

    private String setUp() {
        Runtime rt = Runtime.getRuntime();
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "- Machine: %d cores, max heap %d MiB, Java %s, %s %s. Twinlog %s.%n",
                rt.availableProcessors(), rt.maxMemory() >> 20, System.getProperty("java.version"),
                System.getProperty("os.name"), System.getProperty("os.arch"),
                System.getProperty("bench.gitRevision", "revision unknown")));
        s.append("- One JVM, one system at a time, brokers and clients in the same process on loopback.\n");
        s.append(String.format(Locale.ROOT, "- Producer: linger.ms=%d, batch.size=%d, compression none, no keys, "
                        + "values of %,d B from %d seeded random payloads (seed %d); acks=1 without idempotence, "
                        + "acks=all with idempotence. Consumer: assign() + seekToBeginning, no group.id. Client "
                        + "defaults otherwise (kafka-clients 4.4.0).%n",
                ClientSettings.LINGER_MS, ClientSettings.BATCH_SIZE_BYTES, options.recordSizeBytes(), 1024,
                options.seed()));
        if (options.rounds() > 1) {
            s.append(String.format(Locale.ROOT, "- %d rounds, system order alternating; every figure is the median "
                    + "over rounds (max ms: the largest); spread = (max - min) / median of records/s.%n",
                    options.rounds()));
        }
        s.append("- Per system and phase: start-up time of the cluster; duration of the phase; CPU used by other "
                + "processes meanwhile (out of cores x duration; more than a few percent makes the run unreliable): ");
        for (int i = 0; i < results.runs.size(); i++) {
            Results.SystemRun run = results.runs.get(i);
            s.append(i == 0 ? "" : "; ").append(displayName(run.phase(), run.system())).append(' ').append(run.phase())
                    .append(options.rounds() > 1 ? " (round " + run.round() + ")" : "").append(' ')
                    .append(run.startupMs()).append(" ms, ").append(format("%.1f", run.wallSeconds())).append(" s, ")
                    .append(run.otherProcessesCpuSeconds().map(c -> format("%.1f", c) + " CPU-s").orElse("unknown"));
        }
        s.append(".\n");
        for (Results.Failure f : results.failures) {
            s.append("- **FAILED**: ").append(displayName(f.phase(), f.system())).append(' ').append(f.phase())
                    .append(" (round ").append(f.round()).append("): ").append(f.message()).append('\n');
        }
        return s.toString();
    }

    private String singleSection() {
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
                out.append("\nPer-round ratios in round order (").append(roundOrder()).append(").\n");
            }
        }
        return out.toString();
    }

    private String saslSslSection() {
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

    private String transactionsSection() {
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
                out.append("\nPer-round ratios in round order (").append(roundOrder()).append(").\n");
            }
        }
        if (!results.transactionsWarnings.isEmpty()) {
            out.append('\n');
            results.transactionsWarnings.forEach(w -> out.append("- **Warning**: ").append(w).append('\n'));
        }
        return out.toString();
    }

    private String replicatedSection() {
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
                out.append("\nPer-round ratios in round order (").append(roundOrder()).append(").\n");
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

    private String failoverSection() {
        StringBuilder out = new StringBuilder("### Leader failover\n\n");
        out.append(String.format(Locale.ROOT, "- One partition, replication factor 3, min.insync.replicas=2, led by a "
                + "broker that is not the controller. A producer (acks=all, idempotent, the settings above) sends "
                + "%d records/s; an Admin client polls describeTopics every %d ms. Times are from just before the "
                + "stop call.%n", FailoverBenchmark.RATE_PER_SECOND, FailoverBenchmark.POLL_INTERVAL_MS));
        out.append("- *metadata*: until a poll first shows another leader. *first ack*: until the first "
                + "acknowledgement by the new leader (of a record whose batch carries the new leader epoch, read back "
                + "afterwards; acknowledgements the old leader still gave while being stopped do not count). *longest "
                + "gap*: longest time without any acknowledgement. *stop call*: duration of the stop call itself. "
                + "Target: metadata and first ack within the session timeout + 1 s = ")
                .append(format("%.0f", options.sessionTimeoutMs() + 1000.0)).append(" ms.\n");
        out.append("- How the leader was stopped:\n");
        Map<String, String> methods = new LinkedHashMap<>();
        for (FailoverResult r : results.failovers) {
            methods.putIfAbsent(displayName(r.system()) + ", " + r.mode().label(), r.stopMethod());
        }
        methods.forEach((k, v) -> out.append("  - ").append(k).append(": ").append(v).append('\n'));
        out.append('\n');

        boolean many = options.rounds() > 1;
        MarkdownTable table = MarkdownTable.withColumns("Scenario", "System", "metadata ms", "first ack ms",
                "longest gap ms", "stop call ms", "failed sends", "target met");
        Map<FailureMode, Map<String, List<FailoverResult>>> grouped = groupFailovers();
        grouped.forEach((mode, bySystem) -> bySystem.forEach((system, list) -> table.row(
                mode.label(), displayName(system),
                stat(list, FailoverResult::metadataMs, many), stat(list, FailoverResult::firstAckMs, many),
                stat(list, FailoverResult::maxAckGapMs, many), stat(list, r -> Optional.of(r.stopCallMs()), many),
                Long.toString(list.stream().mapToLong(FailoverResult::failed).sum()),
                verdict(list))));
        out.append(table.render());
        if (many) {
            out.append("\nCells: median (min to max) over ").append(options.rounds())
                    .append(" rounds; failed sends: total over the rounds.\n");
        }
        if (options.comparesBoth()) {
            MarkdownTable ratios = MarkdownTable.withColumns("Scenario", "metadata", "first ack", "longest gap");
            grouped.forEach((mode, bySystem) -> {
                List<FailoverResult> t = bySystem.get("twinlog");
                List<FailoverResult> k = bySystem.get("kafka");
                if (t != null && k != null) {
                    ratios.row(mode.label(), medianRatio(t, k, FailoverResult::metadataMs),
                            medianRatio(t, k, FailoverResult::firstAckMs),
                            medianRatio(t, k, FailoverResult::maxAckGapMs));
                }
            });
            out.append("\nTwinlog / Kafka (below 1: Twinlog fails over faster):\n\n").append(ratios.render());
        }
        if (results.failoverWarnings.isEmpty()) {
            out.append("\nAfter every failover the partition's high watermark covered all acknowledged records "
                    + "(none lost).\n");
        } else {
            out.append('\n');
            results.failoverWarnings.forEach(w -> out.append("- **Warning**: ").append(w).append('\n'));
        }
        return out.toString();
    }

    private Map<FailureMode, Map<String, List<FailoverResult>>> groupFailovers() {
        Map<FailureMode, Map<String, List<FailoverResult>>> grouped = new LinkedHashMap<>();
        for (FailureMode mode : FailureMode.values()) {
            for (String system : options.systems()) {
                List<FailoverResult> list = results.failovers.stream()
                        .filter(r -> r.mode() == mode && r.system().equals(system)).toList();
                if (!list.isEmpty()) {
                    grouped.computeIfAbsent(mode, m -> new LinkedHashMap<>()).put(system, list);
                }
            }
        }
        return grouped;
    }

    private static String stat(List<FailoverResult> list, Function<FailoverResult, Optional<Double>> metric,
                               boolean many) {
        long missing = list.stream().filter(r -> metric.apply(r).isEmpty()).count();
        double[] values = list.stream().map(metric).flatMap(Optional::stream).mapToDouble(Double::doubleValue)
                .sorted().toArray();
        if (values.length == 0) {
            return "none in " + FailoverBenchmark.TIMEOUT.toSeconds() + " s";
        }
        String s = format("%.0f", median(values));
        if (many) {
            s += " (" + format("%.0f", values[0]) + " to " + format("%.0f", values[values.length - 1]) + ")";
        }
        if (missing > 0) {
            s += ", " + missing + " never";
        }
        return s;
    }

    private static String verdict(List<FailoverResult> list) {
        long met = list.stream().filter(FailoverResult::meetsTarget).count();
        return met == list.size() ? "yes" : (met == 0 ? "**no**" : "**" + met + " of " + list.size() + "**");
    }

    private static String medianRatio(List<FailoverResult> a, List<FailoverResult> b,
                                      Function<FailoverResult, Optional<Double>> metric) {
        double[] va = a.stream().map(metric).flatMap(Optional::stream).mapToDouble(Double::doubleValue).sorted()
                .toArray();
        double[] vb = b.stream().map(metric).flatMap(Optional::stream).mapToDouble(Double::doubleValue).sorted()
                .toArray();
        if (va.length == 0 || vb.length == 0) {
            return "n/a";
        }
        return ratio(median(va), median(vb));
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

    /** Which system ran first in each round (the order alternates), for reading per-round ratios. */
    private String roundOrder() {
        List<String> parts = new ArrayList<>();
        for (int round = 1; round <= options.rounds(); round++) {
            String first = round % 2 == 1 ? options.systems().get(0)
                    : options.systems().get(options.systems().size() - 1);
            parts.add("round " + round + ": " + displayName(first) + " first");
        }
        return String.join(", ", parts);
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

    private static String ratio(double a, double b) {
        return b == 0 ? "n/a" : format("%.2f", a / b);
    }

    /**
     * Figures of the mirror phase: per figure and setup the median over rounds, min to max and every round's value;
     * then the Twinlog / MM2 ratios of the bulk throughput, of the medians and per round.
     */
    private String mirrorSection() {
        StringBuilder out = new StringBuilder("### Cluster mirroring\n\n");
        out.append(String.format(Locale.ROOT, "- Setups: *Twinlog*: Twinlog mirroring (MirrorAdmin) from a 1-broker "
                + "Twinlog source into a 1-broker Twinlog destination. *MM2*: Apache Kafka MirrorMaker 2 "
                + "(connect-mirror 4.3.1, separate JVM, -Xmx1g, defaults apart from replication factor 1 for its "
                + "internal topics, so tasks.max=1, exactly-once off) from a 1-broker Twinlog cluster into another "
                + "one, and from a 1-node Kafka 4.4.0 cluster into another one.%n"
                + "- bulk: %d partitions pre-filled with %,d records of %,d B; timed from StartMirrorTopics "
                + "(Twinlog) or from launching the MM2 process until the destination's end offsets reach the "
                + "source's (polled with ListOffsets every 10 to 20 ms).%n"
                + "- steady: a producer (acks=1) writes %,d records/s to the source for %d s; once a second lag = "
                + "sum over partitions of (source end offset - destination end offset); ms-equivalent = lag / rate.%n"
                + "- failover (Twinlog only): a %d-partition mirror topic; StopMirrorTopics call and time until "
                + "DescribeClusterMirrors shows all partitions STOPPED, with the source up and after stopping it.%n",
                MirrorBenchmark.PARTITIONS, options.records(), options.recordSizeBytes(),
                MirrorBenchmark.STEADY_RATE_RECORDS_PER_S, MirrorBenchmark.STEADY_SECONDS,
                MirrorBenchmark.FAILOVER_PARTITIONS));
        List<String> order = new ArrayList<>();
        for (int round = 1; round <= options.rounds(); round++) {
            List<String> names = new ArrayList<>();
            BenchMain.mirrorOrder(options, round).forEach(label -> names.add(mirrorDisplayName(label)));
            order.add("round " + round + ": " + String.join(", ", names));
        }
        out.append("- Order of the setups: ").append(String.join("; ", order)).append(".\n\n");

        Map<String, Map<String, Map<Integer, Double>>> byName = figuresByName(results.mirror);
        List<String> setups = new ArrayList<>();
        options.mirrorSetups().forEach(setup -> setups.add(setup.label()));
        out.append(figureTable(results.mirror, setups, "Setup").render());

        for (MirrorSetup mm2 : List.of(MirrorSetup.MM2_TWINLOG, MirrorSetup.MM2_KAFKA)) {
            for (String name : List.of("bulk: MiB/s from start", "bulk: MiB/s from first mirrored record")) {
                Map<Integer, Double> twinlog = byName.getOrDefault(name, Map.of())
                        .get(MirrorSetup.TWINLOG.label());
                Map<Integer, Double> other = byName.getOrDefault(name, Map.of()).get(mm2.label());
                if (twinlog == null || other == null) {
                    continue;
                }
                double t = median(twinlog.values().stream().mapToDouble(Double::doubleValue).sorted().toArray());
                double m = median(other.values().stream().mapToDouble(Double::doubleValue).sorted().toArray());
                List<String> perRound = new ArrayList<>();
                twinlog.forEach((round, value) -> {
                    Double o = other.get(round);
                    if (o != null) {
                        perRound.add("r" + round + " " + format("%.1f", value / o) + "x");
                    }
                });
                out.append("\n- Twinlog / ").append(mm2.displayName()).append(", ").append(name).append(": **")
                        .append(format("%.1f", t / m)).append("x** (ratio of the medians; per round: ")
                        .append(String.join(", ", perRound)).append("; target >= 2x)");
            }
        }
        out.append("\n");
        for (String note : results.mirrorNotes) {
            out.append("- Note: ").append(note).append('\n');
        }
        return out.toString();
    }

    /** Figure name → system → round → value, in the order the figures were first recorded. */
    private static Map<String, Map<String, Map<Integer, Double>>> figuresByName(List<MirrorBenchmark.Figure> figures) {
        Map<String, Map<String, Map<Integer, Double>>> byName = new LinkedHashMap<>();
        for (MirrorBenchmark.Figure f : figures) {
            byName.computeIfAbsent(f.name(), k -> new LinkedHashMap<>())
                    .computeIfAbsent(f.system(), k -> new TreeMap<>()).put(f.round(), f.value());
        }
        return byName;
    }

    /** One row per figure and system (in {@code systems}' order): median over rounds, min to max, every round. */
    private static MarkdownTable figureTable(List<MirrorBenchmark.Figure> figures, List<String> systems,
                                             String systemColumn) {
        Map<String, String> units = new LinkedHashMap<>();
        figures.forEach(f -> units.put(f.name(), f.unit()));
        MarkdownTable table = MarkdownTable.withColumns("Figure", systemColumn, "median", "unit", "min to max",
                "per round");
        figuresByName(figures).forEach((name, bySystem) -> systems.forEach(system -> {
            Map<Integer, Double> perRound = bySystem.get(system);
            if (perRound == null) {
                return;
            }
            double[] sorted = perRound.values().stream().mapToDouble(Double::doubleValue).sorted().toArray();
            List<String> values = new ArrayList<>();
            perRound.forEach((round, value) -> values.add("r" + round + " " + format("%,.1f", value)));
            table.row(name, mirrorDisplayName(system), format("%,.1f", median(sorted)), units.get(name),
                    format("%,.1f", sorted[0]) + " to " + format("%,.1f", sorted[sorted.length - 1]),
                    String.join(", ", values));
        }));
        return table;
    }

    /**
     * Figures of the mirror-scale phase (Twinlog, and Kafka's leader move), then the per-broker and per-subtree
     * notes.
     */
    private String mirrorScaleSection() {
        StringBuilder out = new StringBuilder("### Cluster mirroring at scale\n\n");
        out.append(String.format(Locale.ROOT, "- Two Twinlog clusters of 3 brokers, each with its embedded "
                + "ZooKeeper, in this JVM, `num.replica.fetchers=%d`. %,d mirror partitions (%,d topics x %d, "
                + "replication factor %d), %d records each before mirroring starts; one cluster mirror mirrors them "
                + "all (`scale-.*`).%n"
                + "- steady: for %d s a producer writes %,d records/s round-robin over all source partitions. "
                + "ZooKeeper write transactions/s = zxid delta (`srvr`) / time; metadata rebuilds, their build "
                + "time, listener time and partition records applied come from each broker's MetadataWatcher and "
                + "PartitionApplier (the busiest broker of each side in the table, every broker in the notes).%n"
                + "- describe: DescribeClusterMirrors of the mirror (all partitions), %d times.%n"
                + "- failover: StopMirrorTopics with the pattern `.*` (the CLI's `--remove --topic '.*'`); the call, "
                + "and until every destination broker's image shows every partition STOPPED. Source down: on fresh "
                + "clusters, the whole source cluster closed (and its shutdown's writes flushed with `sync`, as "
                + "another machine's would not touch this disk) %d ms before the call.%n%n",
                options.mirrorReplicaFetchers(), options.mirrorPartitions(),
                options.mirrorPartitions() / options.mirrorTopicPartitions(),
                options.mirrorTopicPartitions(), options.mirrorReplicationFactor(),
                MirrorScaleBenchmark.RECORDS_PER_PARTITION, options.mirrorSteadySeconds(),
                MirrorScaleBenchmark.STEADY_RECORDS_PER_S, MirrorScaleBenchmark.DESCRIBES,
                MirrorScaleBenchmark.SOURCE_DOWN_SETTLE_MS));
        boolean kafka = results.mirrorScale.stream().anyMatch(f -> f.system().equals(KafkaLeaderMoveBenchmark.SYSTEM));
        if (kafka) {
            out.append(String.format(Locale.ROOT, "- Kafka (issue 27 point 7): three brokers and one KRaft "
                    + "controller in this JVM, auto.leader.rebalance.enable=false; the same topics and records, "
                    + "placed by Kafka. Every partition reassigned to its replicas rotated by one (nothing copied, "
                    + "the leader no longer the preferred replica), then `Admin.electLeaders(PREFERRED)` of all "
                    + "(`kafka-leader-election.sh --election-type preferred`); the call, and until every broker's "
                    + "metadata names the preferred replica and that replica's partition is leader at the new "
                    + "epoch.%n"));
            if (options.rounds() > 1) {
                out.append("- ").append(roundOrder()).append(".\n");
            }
            out.append('\n');
        }
        out.append(figureTable(results.mirrorScale,
                List.of(MirrorScaleBenchmark.SYSTEM, KafkaLeaderMoveBenchmark.SYSTEM), "System").render());
        out.append('\n');
        if (kafka) {
            out.append(failoverAgainstElection()).append('\n');
        }
        for (String note : results.mirrorScaleNotes) {
            out.append("- Note: ").append(note).append('\n');
        }
        return out.toString();
    }

    /**
     * Twinlog's failover (source up) against Kafka's preferred election, until done on every broker: the ratio of the
     * medians and per round (Kafka / Twinlog, so above 1 means Twinlog is faster).
     */
    private String failoverAgainstElection() {
        String twinlog = "failover " + options.mirrorPartitions() + " partitions, source up: until all STOPPED on "
                + "every broker";
        String kafka = "leader move " + options.mirrorPartitions() + " partitions: until all led by the preferred "
                + "replica on every broker";
        Map<String, Map<String, Map<Integer, Double>>> byName = figuresByName(results.mirrorScale);
        Map<Integer, Double> t = byName.getOrDefault(twinlog, Map.of()).get(MirrorScaleBenchmark.SYSTEM);
        Map<Integer, Double> k = byName.getOrDefault(kafka, Map.of()).get(KafkaLeaderMoveBenchmark.SYSTEM);
        if (t == null || k == null) {
            return "- Failover against Kafka's election: not both measured.\n";
        }
        double ratio = median(k.values().stream().mapToDouble(Double::doubleValue).sorted().toArray())
                / median(t.values().stream().mapToDouble(Double::doubleValue).sorted().toArray());
        List<String> perRound = new ArrayList<>();
        t.forEach((round, value) -> {
            Double other = k.get(round);
            if (other != null) {
                perRound.add("r" + round + " " + format("%.2f", other / value));
            }
        });
        return "- **Failover against Kafka's preferred election** (Kafka's time / Twinlog's, until done on every "
                + "broker; above 1 is Twinlog faster): " + format("%.2f", ratio) + " of the medians; per round "
                + String.join(", ", perRound) + ".\n";
    }

    /**
     * Figures of the groups phase: per figure and system the median over rounds, min to max and every round's value;
     * then Twinlog / Kafka of the medians and per round.
     */
    private String groupsSection() {
        StringBuilder out = new StringBuilder("### Consumer groups\n\n");
        out.append(String.format(Locale.ROOT, "- One broker per system (Twinlog: embedded ZooKeeper, Apache Kafka's "
                + "group coordinator inside; Kafka: one KRaft combined node), both with "
                + "offsets.topic.replication.factor=1 and group.initial.rebalance.delay.ms=0; a topic of %d "
                + "partitions.%n"
                + "- commitSync: one consumer (group.protocol=classic) subscribed to the topic and owning all %d "
                + "partitions calls commitSync with an offset for each, %,d times in a row after %d not reported; "
                + "commits/s over the loop, latency per call.%n"
                + "- stable assignment: %d consumers of a fresh group subscribe to the topic on their own threads "
                + "and are released together; time until their assignments (read after every poll) are disjoint, "
                + "cover all partitions and are balanced. Per protocol %d repetitions after 1 not reported; the "
                + "round's figure is their median. Client defaults otherwise (kafka-clients 4.4.0).%n",
                GroupsBenchmark.PARTITIONS, GroupsBenchmark.PARTITIONS, options.groupCommits(),
                GroupsBenchmark.WARM_UP_COMMITS, GroupsBenchmark.CONSUMERS, options.groupRepetitions()));
        if (options.rounds() > 1) {
            out.append("- ").append(roundOrder()).append(".\n");
        }
        out.append('\n');
        out.append(figureTables(results.groups));
        out.append('\n');
        for (String note : results.groupsNotes) {
            out.append("- ").append(note).append('\n');
        }
        return out.toString();
    }

    /** A section of named figures: its heading, what was run, the round order and the tables. */
    private String namedFiguresSection(String title, String description, List<SystemFigure> figures) {
        StringBuilder out = new StringBuilder("### ").append(title).append("\n\n").append(description);
        if (options.rounds() > 1) {
            out.append("- ").append(roundOrder()).append(".\n");
        }
        out.append('\n').append(figureTables(figures));
        return out.toString();
    }

    private String catchUpSection() {
        String description = String.format(Locale.ROOT, "- %,d MiB of %d B records in %d partitions are written "
                        + "first (acks=1), then copied to a second broker. Twinlog: two single-broker clusters in this "
                        + "JVM; StartMirrorTopics on the destination, timed until every destination partition's end "
                        + "offset reaches the source's. Kafka: three brokers and a KRaft controller in this JVM, the "
                        + "topic on broker 0 (replication factor 1), then AlterPartitionReassignments to [0, 1], "
                        + "timed until no reassignment is left (the new follower caught up and joined the ISR). Both "
                        + "with their defaults; CPU: the system's CPU seconds during the copy (both brokers) per GiB "
                        + "copied.%n", options.catchUpMiB(), options.recordSizeBytes(), CatchUpBenchmark.PARTITIONS);
        return namedFiguresSection("Catching up existing data", description, results.catchUp);
    }

    private String latencySection() {
        String description = String.format(Locale.ROOT, "- Three brokers per system; per rate a fresh topic of %d "
                        + "partitions, replication factor %d, min.insync.replicas %d. A producer (acks=all, "
                        + "idempotent) paced to the rate, records of %d B round-robin over the partitions; a consumer "
                        + "(assign(), from the end, no group) of all of them. Latency: from the record handed to "
                        + "send() (its send time in its first 8 bytes) to the consumer's poll() returning it, every "
                        + "record sent in the measured interval (%d s after %d s of warm-up); one clock, clients and "
                        + "brokers in one JVM.%n", LoadLatencyBenchmark.PARTITIONS,
                LoadLatencyBenchmark.REPLICATION_FACTOR, LoadLatencyBenchmark.MIN_INSYNC_REPLICAS,
                options.recordSizeBytes(), options.measuredSeconds(), options.warmUpSeconds());
        return namedFiguresSection("Latency at a fixed load", description, results.latency);
    }

    private String fetchSessionsSection() {
        String description = String.format(Locale.ROOT, "- One broker per system, once with the default %s and "
                        + "once with 0 (no sessions). One consumer (assign(), no group) of %,d partitions of one "
                        + "topic; a producer writes %d records/s of %d B round-robin over them. %d s of warm-up, then "
                        + "%d s measured: the consumer's fetch requests per second, bytes sent per request and "
                        + "received per response (its network client's totals), and the system's CPU per second.%n",
                FetchSessionsBenchmark.SLOTS_CONFIG, FetchSessionsBenchmark.PARTITIONS,
                FetchSessionsBenchmark.RECORDS_PER_SECOND, options.recordSizeBytes(), options.warmUpSeconds(),
                options.measuredSeconds());
        return namedFiguresSection("Incremental fetch sessions", description, results.fetchSessions);
    }

    /**
     * Named figures per system: median over rounds, min to max, spread and every round; then, when both systems
     * ran, Twinlog / Kafka of the medians and per round.
     */
    private String figureTables(List<SystemFigure> figures) {
        StringBuilder out = new StringBuilder();
        Map<String, Map<String, Map<Integer, Double>>> byName = new LinkedHashMap<>();
        Map<String, SystemFigure> kinds = new LinkedHashMap<>();
        for (SystemFigure f : figures) {
            byName.computeIfAbsent(f.name(), k -> new LinkedHashMap<>())
                    .computeIfAbsent(f.system(), k -> new TreeMap<>()).put(f.round(), f.value());
            kinds.putIfAbsent(f.name(), f);
        }
        MarkdownTable table = MarkdownTable.withColumns("Figure", "System", "median", "unit", "min to max",
                "spread", "per round");
        byName.forEach((name, bySystem) -> options.systems().forEach(system -> {
            Map<Integer, Double> perRound = bySystem.get(system);
            if (perRound == null) {
                return;
            }
            double[] sorted = perRound.values().stream().mapToDouble(Double::doubleValue).sorted().toArray();
            double median = median(sorted);
            List<String> values = new ArrayList<>();
            perRound.forEach((round, value) -> values.add("r" + round + " " + groupsValue(value)));
            table.row(name, displayName(system), groupsValue(median), kinds.get(name).unit(),
                    groupsValue(sorted[0]) + " to " + groupsValue(sorted[sorted.length - 1]),
                    median == 0 ? "-" : format("%.0f %%", 100 * (sorted[sorted.length - 1] - sorted[0]) / median),
                    String.join(", ", values));
        }));
        out.append(table.render());
        if (options.comparesBoth()) {
            MarkdownTable ratios = MarkdownTable.withColumns("Figure", "Twinlog / Kafka", "per round",
                    "Twinlog better if");
            byName.forEach((name, bySystem) -> {
                Map<Integer, Double> t = bySystem.get("twinlog");
                Map<Integer, Double> k = bySystem.get("kafka");
                if (t == null || k == null) {
                    return;
                }
                List<String> perRound = new ArrayList<>();
                t.forEach((round, value) -> {
                    Double other = k.get(round);
                    perRound.add(other == null ? "-" : ratio(value, other));
                });
                ratios.row(name, ratio(median(t.values().stream().mapToDouble(Double::doubleValue).sorted().toArray()),
                                median(k.values().stream().mapToDouble(Double::doubleValue).sorted().toArray())),
                        String.join(" / ", perRound), kinds.get(name).higherIsBetter() ? "above 1" : "below 1");
            });
            out.append("\nTwinlog / Kafka (ratio of the medians; per round in round order):\n\n")
                    .append(ratios.render());
        }
        return out.toString();
    }

    private static String groupsValue(double value) {
        return value >= 100 ? format("%,.0f", value) : format("%.2f", value);
    }

    private static String mirrorDisplayName(String label) {
        return MirrorSetup.parse(label).map(MirrorSetup::displayName).orElse(label);
    }

    private static String format(String pattern, double value) {
        return String.format(Locale.ROOT, pattern, value);
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** The mirror phase's "systems" are {@link MirrorSetup} labels. */
    private static String displayName(Phase phase, String system) {
        return phase == Phase.MIRROR ? mirrorDisplayName(system) : displayName(system);
    }

    static String displayName(String system) {
        return switch (system) {
            case "twinlog" -> "Twinlog";
            case "kafka" -> "Kafka";
            default -> system;
        };
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
