package io.twinlog.bench;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Records one latency per record, exactly (no bucketing), up to a fixed capacity. {@link #record(long)} is safe
 * from any thread (producer callbacks run on the producer's I/O thread, or on the sending thread when a send fails
 * at once); {@link #summary()} must be called after all records are in.
 */
final class LatencyRecorder {
    private final long[] latenciesNanos;
    private final AtomicInteger count = new AtomicInteger();

    LatencyRecorder(int capacity) {
        this.latenciesNanos = new long[capacity];
    }

    void record(long latencyNanos) {
        int index = count.getAndIncrement();
        if (index < latenciesNanos.length) {
            latenciesNanos[index] = latencyNanos;
        }
    }

    LatencySummary summary() {
        int n = Math.min(count.get(), latenciesNanos.length);
        if (n == 0) {
            throw new IllegalStateException("No latencies were recorded");
        }
        long[] sorted = Arrays.copyOf(latenciesNanos, n);
        Arrays.sort(sorted);
        double sum = 0;
        for (long v : sorted) {
            sum += v;
        }
        return new LatencySummary(millis(percentile(sorted, 0.50)), millis(percentile(sorted, 0.99)),
                millis(percentile(sorted, 0.999)), millis(sorted[n - 1]), sum / n / 1e6);
    }

    /** Nearest-rank percentile. */
    private static long percentile(long[] sorted, double quantile) {
        int rank = (int) Math.ceil(quantile * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }

    private static double millis(long nanos) {
        return nanos / 1e6;
    }

    record LatencySummary(double p50Ms, double p99Ms, double p999Ms, double maxMs, double meanMs) {
    }
}
