package io.twinlog.campaign;

import java.time.Duration;
import java.time.LocalDate;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** What the campaign counted: printed after every round and at the end (docs/reliability.md's table). */
final class CampaignStats {
    int rounds;
    final Map<FaultKind, Integer> faults = new EnumMap<>(FaultKind.class);
    long acknowledged;
    long lost;
    long quarantined;
    int divergentReplicas;
    int stuckPartitions;
    /** Mirror partitions FAILED for good that the campaign restarted with --start, as an operator would. */
    int operatorRestarts;
    long failedSends;
    long consumed;

    void countFault(FaultKind kind) {
        faults.merge(kind, 1, Integer::sum);
    }

    /**
     * The totals as one row of docs/reliability.md's Results table (date, seed, duration, rounds, faults by kind,
     * acknowledged, lost, divergent replicas, stuck, result), ready to paste.
     */
    String tableRow(LocalDate date, long seed, Duration duration, String result) {
        String byKind = faults.entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
                .collect(Collectors.joining(", "));
        return "| " + date + " | " + seed + " | " + duration(duration) + " | " + rounds + " | " + byKind + " | "
                + count(acknowledged) + " | " + count(lost) + " | " + divergentReplicas + " | " + stuckPartitions
                + " | " + result + " (" + count(quarantined) + " quarantined, " + operatorRestarts
                + " operator restarts) |";
    }

    private static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    private static String duration(Duration d) {
        long s = d.toSeconds();
        return s % 3600 == 0 ? s / 3600 + " h" : s % 60 == 0 && s >= 600 ? s / 60 + " min" : s + " s";
    }

    String line() {
        return "rounds " + rounds + ", faults " + faults + ", records acknowledged " + acknowledged + ", lost " + lost
                + ", quarantined " + quarantined + ", divergent replicas " + divergentReplicas + ", stuck partitions "
                + stuckPartitions + ", operator restarts " + operatorRestarts + ", sends failed (not acknowledged) "
                + failedSends + ", consumed " + consumed;
    }
}
