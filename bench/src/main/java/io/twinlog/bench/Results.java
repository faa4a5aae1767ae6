package io.twinlog.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Everything one benchmark run collected, for {@link Report}. */
final class Results {
    final List<Measurement> single = new ArrayList<>();
    final List<Measurement> saslSsl = new ArrayList<>();
    final List<Measurement> replicated = new ArrayList<>();
    final List<Measurement> transactions = new ArrayList<>();
    final List<String> transactionsWarnings = new ArrayList<>();
    final List<FailoverResult> failovers = new ArrayList<>();
    final List<SystemRun> runs = new ArrayList<>();
    final List<Failure> failures = new ArrayList<>();
    final List<String> replicatedWarnings = new ArrayList<>();
    final List<String> failoverWarnings = new ArrayList<>();
    final List<MirrorBenchmark.Figure> mirror = new ArrayList<>();
    final List<String> mirrorNotes = new ArrayList<>();
    final List<MirrorBenchmark.Figure> mirrorScale = new ArrayList<>();
    final List<String> mirrorScaleNotes = new ArrayList<>();
    final List<SystemFigure> groups = new ArrayList<>();
    final List<SystemFigure> fetchSessions = new ArrayList<>();
    final List<SystemFigure> latency = new ArrayList<>();
    final List<SystemFigure> catchUp = new ArrayList<>();
    final List<String> groupsNotes = new ArrayList<>();

    /**
     * One system's run of one phase in one round: start-up time of its cluster (the longest, if the phase started
     * several), wall time of its workloads, and CPU seconds other processes used meanwhile (unknown off Linux).
     */
    record SystemRun(String system, Phase phase, int round, long startupMs, double wallSeconds,
                     Optional<Double> otherProcessesCpuSeconds) {
    }

    /** A phase that failed for one system in one round; the run goes on with the next one. */
    record Failure(String system, Phase phase, int round, String message) {
    }
}
