package io.twinlog.bench;

/** How many records and value bytes moved in how long. MiB = 2^20 bytes (as Kafka's perf tools print "MB"). */
record Throughput(long records, long valueBytes, long elapsedNanos) {

    double seconds() {
        return elapsedNanos / 1e9;
    }

    double recordsPerSecond() {
        return records / seconds();
    }

    double mebibytesPerSecond() {
        return valueBytes / (1024.0 * 1024.0) / seconds();
    }
}
