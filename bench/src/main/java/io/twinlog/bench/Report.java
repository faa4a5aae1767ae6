package io.twinlog.bench;

import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

import static io.twinlog.bench.ReportFormat.displayName;
import static io.twinlog.bench.ReportFormat.format;

/**
 * Turns the results into one markdown section: the set-up, then per phase a results table (one row per workload
 * and system, the median over rounds) and, when both Twinlog and Kafka ran, Twinlog/Kafka ratios of those medians
 * and whether the targets were met. Each kind of phase renders in its own class ({@link ThroughputSections},
 * {@link FailoverSection}, {@link MirrorSections}, {@link FigureSections}); this one writes the set-up and puts the
 * sections in order.
 */
final class Report {
    private final BenchOptions options;
    private final Results results;
    private final ZonedDateTime finishedAt;

    Report(BenchOptions options, Results results, ZonedDateTime finishedAt) {
        this.options = options;
        this.results = results;
        this.finishedAt = finishedAt;
    }

    String markdown() {
        ThroughputSections throughput = new ThroughputSections(options, results);
        MirrorSections mirroring = new MirrorSections(options, results);
        FigureSections figures = new FigureSections(options, results);
        StringBuilder out = new StringBuilder();
        out.append("## Twinlog vs Apache Kafka 4.4.0 (")
                .append(finishedAt.format(DateTimeFormatter.ISO_LOCAL_DATE)).append(")\n\n");
        out.append(setUp()).append("\n");
        if (!results.single.isEmpty()) {
            out.append("\n").append(throughput.singleSection());
        }
        if (!results.saslSsl.isEmpty()) {
            out.append("\n").append(throughput.saslSslSection());
        }
        if (!results.replicated.isEmpty()) {
            out.append("\n").append(throughput.replicatedSection());
        }
        if (!results.transactions.isEmpty()) {
            out.append("\n").append(throughput.transactionsSection());
        }
        if (!results.failovers.isEmpty()) {
            out.append("\n").append(new FailoverSection(options, results).markdown());
        }
        if (!results.mirror.isEmpty() || !results.mirrorNotes.isEmpty()) {
            out.append("\n").append(mirroring.mirrorSection());
        }
        if (!results.mirrorScale.isEmpty() || !results.mirrorScaleNotes.isEmpty()) {
            out.append("\n").append(mirroring.mirrorScaleSection());
        }
        if (!results.groups.isEmpty() || !results.groupsNotes.isEmpty()) {
            out.append("\n").append(figures.groupsSection());
        }
        if (!results.latency.isEmpty()) {
            out.append("\n").append(figures.latencySection());
        }
        if (!results.catchUp.isEmpty()) {
            out.append("\n").append(figures.catchUpSection());
        }
        if (!results.fetchSessions.isEmpty()) {
            out.append("\n").append(figures.fetchSessionsSection());
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
}
