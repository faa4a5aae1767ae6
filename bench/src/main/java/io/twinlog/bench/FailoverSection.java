package io.twinlog.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import static io.twinlog.bench.ReportFormat.displayName;
import static io.twinlog.bench.ReportFormat.format;
import static io.twinlog.bench.ReportFormat.median;
import static io.twinlog.bench.ReportFormat.ratio;

/**
 * The report's leader failover phase: how each system's leader was stopped, per scenario and system the times until
 * the new leader was seen and acknowledged (median and range over rounds), Twinlog/Kafka of those medians, and whether
 * acknowledged records were lost.
 */
final class FailoverSection {
    private final BenchOptions options;
    private final Results results;

    FailoverSection(BenchOptions options, Results results) {
        this.options = options;
        this.results = results;
    }

    String markdown() {
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
}
