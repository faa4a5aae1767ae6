package io.twinlog.bench;

import java.time.Duration;

/**
 * How a throughput workload is timed: the load runs for {@code warmUp} (JIT, page cache, the producer's pipeline
 * filling up; nothing is counted), then for {@code measured}, the interval whose records, latencies and CPU are
 * reported. A workload of a fixed record count is over in under a second on this machine and measures mostly
 * warm-up; a fixed interval of steady state does not.
 */
record SteadyWindow(Duration warmUp, Duration measured) {

    static SteadyWindow ofSeconds(int warmUpSeconds, int measuredSeconds) {
        return new SteadyWindow(Duration.ofSeconds(warmUpSeconds), Duration.ofSeconds(measuredSeconds));
    }

    /** The two instants (System.nanoTime) that bound the measured interval of a workload started at {@code startNanos}. */
    Bounds from(long startNanos) {
        long begin = startNanos + warmUp.toNanos();
        return new Bounds(begin, begin + measured.toNanos());
    }

    record Bounds(long beginNanos, long endNanos) {
        boolean contains(long nanos) {
            return nanos >= beginNanos && nanos < endNanos;
        }

        long lengthNanos() {
            return endNanos - beginNanos;
        }
    }
}
