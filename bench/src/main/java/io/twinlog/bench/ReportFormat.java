package io.twinlog.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** How the report writes numbers and names: fixed decimals in the root locale, medians, systems' display names. */
final class ReportFormat {
    private ReportFormat() {
    }

    static String mirrorDisplayName(String label) {
        return MirrorSetup.parse(label).map(MirrorSetup::displayName).orElse(label);
    }

    static String format(String pattern, double value) {
        return String.format(Locale.ROOT, pattern, value);
    }

    static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** The mirror phase's "systems" are {@link MirrorSetup} labels. */
    static String displayName(Phase phase, String system) {
        return phase == Phase.MIRROR ? mirrorDisplayName(system) : displayName(system);
    }

    static String displayName(String system) {
        return switch (system) {
            case "twinlog" -> "Twinlog";
            case "kafka" -> "Kafka";
            default -> system;
        };
    }

    static String ratio(double a, double b) {
        return b == 0 ? "n/a" : format("%.2f", a / b);
    }

    /** Which system ran first in each round (the order alternates), for reading per-round ratios. */
    static String roundOrder(BenchOptions options) {
        List<String> parts = new ArrayList<>();
        for (int round = 1; round <= options.rounds(); round++) {
            String first = round % 2 == 1 ? options.systems().get(0)
                    : options.systems().get(options.systems().size() - 1);
            parts.add("round " + round + ": " + displayName(first) + " first");
        }
        return String.join(", ", parts);
    }
}
