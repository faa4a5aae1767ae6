package io.twinlog.server.metrics;

import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.PrometheusNaming;
import io.prometheus.metrics.model.snapshots.Quantiles;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import io.prometheus.metrics.model.snapshots.SummarySnapshot.SummaryDataPointSnapshot;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Metric families being assembled for one scrape: data points of the same Prometheus name are gathered into one
 * family of one type, as the text format requires. A name already taken by another type, or a series whose labels
 * repeat one already given, is left out (the first one wins) rather than producing output Prometheus rejects.
 */
final class PrometheusFamilies {
    private enum Kind { GAUGE, COUNTER, SUMMARY }

    private record Family(Kind kind, String help, List<Object> points, Set<Labels> seen) {
    }

    private final Map<String, Family> families = new LinkedHashMap<>();

    /** A Prometheus metric name from parts: lower case, characters outside [a-z0-9_:] turned into '_'. */
    static String name(String... parts) {
        return PrometheusNaming.sanitizeMetricName(String.join("_", parts).toLowerCase(Locale.ROOT)
                .replace('.', '_').replace('-', '_'));
    }

    /** Labels from (name, value) pairs in order, names made valid for Prometheus. */
    static Labels labels(Map<String, String> tags) {
        List<String> names = new ArrayList<>(tags.size());
        List<String> values = new ArrayList<>(tags.size());
        tags.forEach((k, v) -> {
            names.add(PrometheusNaming.sanitizeLabelName(k));
            values.add(v == null ? "" : v);
        });
        return Labels.of(names, values);
    }

    void gauge(String name, String help, Labels labels, double value) {
        add(Kind.GAUGE, name, help, labels, GaugeDataPointSnapshot.builder().labels(labels).value(value).build());
    }

    /** A counter; {@code name} without the {@code _total} the text format adds. */
    void counter(String name, String help, Labels labels, double value) {
        add(Kind.COUNTER, name, help, labels, CounterDataPointSnapshot.builder().labels(labels).value(value).build());
    }

    void summary(String name, String help, Labels labels, long count, double sum, Quantiles quantiles) {
        add(Kind.SUMMARY, name, help, labels, SummaryDataPointSnapshot.builder().labels(labels).count(count).sum(sum)
                .quantiles(quantiles).build());
    }

    private void add(Kind kind, String name, String help, Labels labels, Object point) {
        Family family = families.computeIfAbsent(name, n -> new Family(kind, help, new ArrayList<>(), new HashSet<>()));
        if (family.kind == kind && family.seen.add(labels)) {
            family.points.add(point);
        }
    }

    MetricSnapshots snapshots() {
        List<MetricSnapshot> out = new ArrayList<>(families.size());
        families.forEach((name, family) -> out.add(snapshot(name, family)));
        return new MetricSnapshots(out);
    }

    private static MetricSnapshot snapshot(String name, Family family) {
        switch (family.kind) {
            case GAUGE: {
                GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(family.help);
                family.points.forEach(p -> b.dataPoint((GaugeDataPointSnapshot) p));
                return b.build();
            }
            case COUNTER: {
                CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(family.help);
                family.points.forEach(p -> b.dataPoint((CounterDataPointSnapshot) p));
                return b.build();
            }
            default: {
                SummarySnapshot.Builder b = SummarySnapshot.builder().name(name).help(family.help);
                family.points.forEach(p -> b.dataPoint((SummaryDataPointSnapshot) p));
                return b.build();
            }
        }
    }
}
