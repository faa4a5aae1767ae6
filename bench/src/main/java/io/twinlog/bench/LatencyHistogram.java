package io.twinlog.bench;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Latencies of any number of records in logarithmic buckets 1 % wide, from 1 microsecond up to 1000 s: a 20 s window
 * at 400,000 records/s would need 64 MiB as exact values in the heap the brokers share; this needs 17 KiB and
 * reports every percentile within 1 %. Safe to record from any thread; {@link #summary()} after all records are in.
 */
final class LatencyHistogram {
    private static final double GROWTH = 1.01;
    private static final double LOG_GROWTH = Math.log(GROWTH);
    private static final int BUCKETS = (int) Math.ceil(Math.log(1e9) / LOG_GROWTH) + 1;

    private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);
    private final AtomicLong total = new AtomicLong();
    private final AtomicLong sumNanos = new AtomicLong();
    private final AtomicLong maxNanos = new AtomicLong();

    void record(long latencyNanos) {
        long micros = Math.max(1, latencyNanos / 1000);
        int bucket = (int) Math.min(BUCKETS - 1, Math.floor(Math.log(micros) / LOG_GROWTH));
        counts.incrementAndGet(bucket);
        total.incrementAndGet();
        sumNanos.addAndGet(latencyNanos);
        maxNanos.accumulateAndGet(latencyNanos, Math::max);
    }

    long count() {
        return total.get();
    }

    LatencyRecorder.LatencySummary summary() {
        long n = total.get();
        if (n == 0) {
            throw new IllegalStateException("No latencies were recorded");
        }
        return new LatencyRecorder.LatencySummary(percentileMs(0.50, n), percentileMs(0.99, n),
                percentileMs(0.999, n), maxNanos.get() / 1e6, (double) sumNanos.get() / n / 1e6);
    }

    /** Nearest rank, reported as the bucket's upper bound (so never below the true value). */
    private double percentileMs(double quantile, long n) {
        long rank = Math.max(1, (long) Math.ceil(quantile * n));
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += counts.get(i);
            if (seen >= rank) {
                return Math.min(Math.pow(GROWTH, i + 1) / 1000.0, maxNanos.get() / 1e6);
            }
        }
        return maxNanos.get() / 1e6;
    }
}
