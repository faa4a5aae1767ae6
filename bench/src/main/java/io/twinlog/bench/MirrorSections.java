package io.twinlog.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import static io.twinlog.bench.ReportFormat.format;
import static io.twinlog.bench.ReportFormat.median;
import static io.twinlog.bench.ReportFormat.mirrorDisplayName;
import static io.twinlog.bench.ReportFormat.roundOrder;

/**
 * The report's mirroring phases: Twinlog's mirroring against MirrorMaker 2 (per figure and setup), and mirroring at
 * scale against Kafka's preferred-leader election.
 */
final class MirrorSections {
    private final BenchOptions options;
    private final Results results;

    MirrorSections(BenchOptions options, Results results) {
        this.options = options;
        this.results = results;
    }

    /**
     * Figures of the mirror phase: per figure and setup the median over rounds, min to max and every round's value;
     * then the Twinlog / MM2 ratios of the bulk throughput, of the medians and per round.
     */
    String mirrorSection() {
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
    String mirrorScaleSection() {
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
                out.append("- ").append(roundOrder(options)).append(".\n");
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
}
