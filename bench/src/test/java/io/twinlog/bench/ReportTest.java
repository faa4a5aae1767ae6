package io.twinlog.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * The report renders fixed results to the text in {@code report-*.md}, byte for byte: every section, with one round
 * and one system and with three rounds of both systems. The expected files were written by the report before it was
 * split into its statistics and sections, so they pin what docs/benchmarks.md receives. Only the machine line
 * (cores, heap, Java, OS) depends on where the test runs; it is replaced before comparing.
 */
@Timeout(30)
class ReportTest {
    private static final ZonedDateTime FINISHED = ZonedDateTime.of(2026, 12, 7, 17, 0, 0, 0, ZoneOffset.UTC);

    @Test
    void threeRoundsOfBothSystemsRenderAsBefore() throws IOException {
        assertRendersAs("report-3-rounds.md", options(List.of("twinlog", "kafka"), 3),
                results(List.of("twinlog", "kafka"), 3));
    }

    @Test
    void oneRoundOfOneSystemRendersAsBefore() throws IOException {
        assertRendersAs("report-1-round.md", options(List.of("twinlog"), 1), results(List.of("twinlog"), 1));
    }

    private static void assertRendersAs(String expectedResource, BenchOptions options, Results results)
            throws IOException {
        String actual = new Report(options, results, FINISHED).markdown()
                .replaceFirst("(?m)^- Machine: .*$", "- Machine: (this machine).");
        Path written = Path.of("target", "report-actual-" + expectedResource);
        Files.createDirectories(written.getParent());
        Files.writeString(written, actual, StandardCharsets.UTF_8);
        try (InputStream in = ReportTest.class.getResourceAsStream(expectedResource)) {
            assertNotNull(in, "missing " + expectedResource + "; this run's text is in " + written);
            assertEquals(new String(in.readAllBytes(), StandardCharsets.UTF_8), actual,
                    "the report differs from " + expectedResource + "; this run's text is in " + written);
        }
    }

    private static BenchOptions options(List<String> systems, int rounds) {
        return new BenchOptions(300_000, 5, 20, 1024, systems, EnumSet.allOf(Phase.class),
                List.of(MirrorSetup.values()), 5000, 5, 1000, 10, 3, 30, 1, 1024, 10240, 6000, rounds, 42, true,
                false, Path.of("target", "unused.md"));
    }

    /** Every list the report reads, with values that differ per round and system so that medians and ratios show. */
    private static Results results(List<String> systems, int rounds) {
        Results r = new Results();
        for (int round = 1; round <= rounds; round++) {
            for (String system : systems) {
                double f = (system.equals("twinlog") ? 1.0 : 0.8) + 0.05 * round;
                r.runs.add(new Results.SystemRun(system, Phase.SINGLE, round, 1200 + round, 41.5 * f,
                        round == 2 ? Optional.empty() : Optional.of(0.3 * f)));
                r.single.add(produce("produce p=8 acks=all", system, round, f, true));
                r.single.add(produce("consume p=8", system, round, f, false));
                r.saslSsl.add(produce("produce p=1 acks=1", system, round, f * 0.7, true));
                r.replicated.add(produce("produce p=8 acks=all", system, round, f * 1.3, true));
                r.transactions.add(produce("txn p=6", system, round, f * 0.5, true));
                for (FailureMode mode : FailureMode.values()) {
                    boolean never = mode == FailureMode.CRASH && round == 2;
                    r.failovers.add(new FailoverResult(system, round, mode, system + " stops by " + mode.label(),
                            6000, 1, Optional.of(0), never ? Optional.empty() : Optional.of(2),
                            never ? Optional.empty() : Optional.of(900.0 * f), Optional.of(1100.0 * f + round),
                            never ? Optional.empty() : Optional.of(1300.0 * f), 12.5 * f, 8000, 7990, round - 1,
                            Optional.empty()));
                }
                r.groups.add(new SystemFigure(system, round, "commitSync: commits/s", 5234.5 * f, "1/s", true));
                r.groups.add(new SystemFigure(system, round, "stable assignment", 0.0, "ms", false));
                r.latency.add(new SystemFigure(system, round, "10 MiB/s: p99", 12.345 * f, "ms", false));
                r.catchUp.add(new SystemFigure(system, round, "copy: MiB/s", 432.1 * f, "MiB/s", true));
                r.fetchSessions.add(new SystemFigure(system, round, "fetches/s", 88.8 * f, "1/s", false));
            }
            for (MirrorSetup setup : MirrorSetup.values()) {
                double f = 1 + setup.ordinal() + 0.1 * round;
                r.mirror.add(new MirrorBenchmark.Figure(setup.label(), round, "bulk: MiB/s from start", 250 / f,
                        "MiB/s"));
                r.mirror.add(new MirrorBenchmark.Figure(setup.label(), round, "bulk: MiB/s from first mirrored record",
                        310 / f, "MiB/s"));
                r.mirror.add(new MirrorBenchmark.Figure(setup.label(), round, "steady: max lag", 1234.5 * f,
                        "records"));
            }
            r.mirrorScale.add(new MirrorBenchmark.Figure(MirrorScaleBenchmark.SYSTEM, round,
                    "failover 1000 partitions, source up: until all STOPPED on every broker", 800.0 + round, "ms"));
            if (systems.contains(KafkaLeaderMoveBenchmark.SYSTEM)) {
                r.mirrorScale.add(new MirrorBenchmark.Figure(KafkaLeaderMoveBenchmark.SYSTEM, round,
                        "leader move 1000 partitions: until all led by the preferred replica on every broker",
                        1500.0 - round, "ms"));
            }
            r.mirrorScale.add(new MirrorBenchmark.Figure(MirrorScaleBenchmark.SYSTEM, round, "steady: ZooKeeper "
                    + "writes/s", 3.25 * round, "1/s"));
        }
        r.failures.add(new Results.Failure("kafka", Phase.MIRROR, 1, "mm2-kafka timed out"));
        r.failures.add(new Results.Failure("kafka", Phase.TXN, 1, "commit timed out"));
        r.transactionsWarnings.add("a transactions warning");
        r.replicatedWarnings.add("a replicated warning");
        r.mirrorNotes.add("a mirror note");
        r.mirrorScaleNotes.add("a mirror-scale note");
        r.groupsNotes.add("a groups note");
        return r;
    }

    private static Measurement produce(String workload, String system, int round, double f, boolean latency) {
        Throughput throughput = new Throughput((long) (1_000_000 * f), (long) (1_000_000 * f) * 1024,
                10_000_000_000L);
        Optional<LatencyRecorder.LatencySummary> summary = latency
                ? Optional.of(new LatencyRecorder.LatencySummary(2.5 * f, 9.75 * f, 20.1 * f, 45.0 * f + round, 3.0))
                : Optional.empty();
        return new Measurement(workload, system, round, throughput, summary,
                round == 2 && !latency ? OptionalDouble.empty() : OptionalDouble.of(4.2 * f));
    }
}
