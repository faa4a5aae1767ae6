package io.twinlog.bench;

import java.util.Optional;

/**
 * One result: a workload (e.g. {@code produce p=8 acks=all}) run against one system in one round (counted from 1).
 * Produce results carry send latencies; consume results do not.
 */
record Measurement(String workload, String system, int round, Throughput throughput,
                   Optional<LatencyRecorder.LatencySummary> latency) {

    static String produceWorkload(int partitions, Acks acks) {
        return "produce p=" + partitions + " acks=" + acks.config();
    }

    static String consumeWorkload(int partitions) {
        return "consume p=" + partitions;
    }
}
