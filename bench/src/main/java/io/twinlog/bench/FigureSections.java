package io.twinlog.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import static io.twinlog.bench.ReportFormat.displayName;
import static io.twinlog.bench.ReportFormat.format;
import static io.twinlog.bench.ReportFormat.median;
import static io.twinlog.bench.ReportFormat.ratio;
import static io.twinlog.bench.ReportFormat.roundOrder;

/**
 * The report's phases of named figures (consumer groups, latency at a fixed load, catching up, fetch sessions): per
 * figure and system the median over rounds, its range and every round, then Twinlog/Kafka of the medians.
 */
final class FigureSections {
    private final BenchOptions options;
    private final Results results;

    FigureSections(BenchOptions options, Results results) {
        this.options = options;
        this.results = results;
    }

    /**
     * Figures of the groups phase: per figure and system the median over rounds, min to max and every round's value;
     * then Twinlog / Kafka of the medians and per round.
     */
    String groupsSection() {
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
            out.append("- ").append(roundOrder(options)).append(".\n");
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
            out.append("- ").append(roundOrder(options)).append(".\n");
        }
        out.append('\n').append(figureTables(figures));
        return out.toString();
    }

    String catchUpSection() {
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

    String latencySection() {
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

    String fetchSessionsSection() {
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
}
