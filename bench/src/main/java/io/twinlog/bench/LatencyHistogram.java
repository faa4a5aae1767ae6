package io.twinlog.bench;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Latencies of any number of records in buckets under 1 % wide, from 1 microsecond up to about 70 minutes: a 20 s
 * window at 400,000 records/s would need 64 MiB as exact values in the heap the brokers share; this needs 26 KiB and
 * reports every percentile within 1 %. A value of {@code v} microseconds goes to a bucket by its highest set bit
 * and the 7 bits below it (128 sub-buckets per power of two), with integer arithmetic only: the producer's I/O
 * thread records every acknowledgement, and a first version that took a logarithm and a compare-and-set per record
 * cost a fifth of the samples of a profile of the client. Safe to record from any thread; {@link #summary()} after
 * all records are in.
 */
final class LatencyHistogram {
    private static final int SUB_BUCKET_BITS = 7;
    private static final int SUB_BUCKETS = 1 << SUB_BUCKET_BITS;
    /** Powers of two above the linear range that are kept: up to 2^32 microseconds. */
    private static final int EXPONENTS = 32 - SUB_BUCKET_BITS;
    private static final int BUCKETS = SUB_BUCKETS + EXPONENTS * SUB_BUCKETS;

    private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);
    private final AtomicLong total = new AtomicLong();
    private final LongAdder sumNanos = new LongAdder();
    private final AtomicLong maxNanos = new AtomicLong();

    void record(long latencyNanos) {
        counts.incrementAndGet(bucket(Math.max(0, latencyNanos / 1000)));
        total.incrementAndGet();
        sumNanos.add(latencyNanos);
        if (latencyNanos > maxNanos.get()) {
            maxNanos.accumulateAndGet(latencyNanos, Math::max);
        }
    }

    static int bucket(long micros) {
        if (micros < SUB_BUCKETS) {
            return (int) micros;
        }
        int exponent = 63 - Long.numberOfLeadingZeros(micros);      // >= SUB_BUCKET_BITS
        int shift = exponent - SUB_BUCKET_BITS;
        int sub = (int) ((micros >>> shift) & (SUB_BUCKETS - 1));
        return Math.min(BUCKETS - 1, SUB_BUCKETS + shift * SUB_BUCKETS + sub);
    }

    /** The largest value (in microseconds) that falls into {@code bucket}. */
    static long upperBoundMicros(int bucket) {
        if (bucket < SUB_BUCKETS) {
            return bucket;
        }
        int shift = (bucket - SUB_BUCKETS) / SUB_BUCKETS;
        int sub = (bucket - SUB_BUCKETS) % SUB_BUCKETS;
        return ((long) (SUB_BUCKETS + sub + 1) << shift) - 1;
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
                percentileMs(0.999, n), maxNanos.get() / 1e6, (double) sumNanos.sum() / n / 1e6);
    }

    /** Nearest rank, reported as the bucket's upper bound (so never below the true value, nor above the max). */
    private double percentileMs(double quantile, long n) {
        long rank = Math.max(1, (long) Math.ceil(quantile * n));
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += counts.get(i);
            if (seen >= rank) {
                return Math.min((upperBoundMicros(i) + 1) / 1000.0, maxNanos.get() / 1e6);
            }
        }
        return maxNanos.get() / 1e6;
    }
}
