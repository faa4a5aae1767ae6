package io.twinlog.bench;

import java.util.Optional;
import java.util.OptionalDouble;

/**
 * One result: a workload (e.g. {@code produce p=8 acks=all}) run against one system in one round (counted from 1).
 * Produce results carry send latencies; consume results do not. {@code systemCpuSeconds}: CPU the system under
 * test spent in the measured interval ({@link SystemCpu}), where the workload measured it.
 */
record Measurement(String workload, String system, int round, Throughput throughput,
                   Optional<LatencyRecorder.LatencySummary> latency, OptionalDouble systemCpuSeconds) {

    Measurement(String workload, String system, int round, Throughput throughput,
                Optional<LatencyRecorder.LatencySummary> latency) {
        this(workload, system, round, throughput, latency, OptionalDouble.empty());
    }

    /** CPU seconds the system spent per GiB of values moved, if measured. */
    OptionalDouble cpuSecondsPerGib() {
        if (systemCpuSeconds.isEmpty() || throughput.valueBytes() == 0) {
            return OptionalDouble.empty();
        }
        return OptionalDouble.of(systemCpuSeconds.getAsDouble() / (throughput.valueBytes() / (double) (1L << 30)));
    }

    static String produceWorkload(int partitions, Acks acks) {
        return "produce p=" + partitions + " acks=" + acks.config();
    }

    static String consumeWorkload(int partitions) {
        return "consume p=" + partitions;
    }
}
