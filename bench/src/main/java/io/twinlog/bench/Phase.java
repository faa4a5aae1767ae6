package io.twinlog.bench;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/** The parts of the benchmark, in the order they run within a round. */
enum Phase {
    /** One broker per system: produce (acks=1, acks=all) and consume, 1 and 8 partitions. */
    SINGLE("single"),
    /**
     * As {@link #SINGLE} with every connection over SASL_SSL (SASL/PLAIN over TLS), not in the default set: the cost
     * of security in each system (issue 13, point 9).
     */
    SASL_SSL("sasl-ssl"),
    /** Three brokers per system: produce with acks=all to topics with replication factor 3. */
    REPLICATED("replicated"),
    /** Three brokers per system: time for a partition to get a new leader after its leader is stopped. */
    FAILOVER("failover"),
    /**
     * Transactions (not in the default set): one transactional producer committing every 100 ms on three brokers per
     * system; see {@link TransactionsBenchmark}.
     */
    TXN("txn"),
    /**
     * Cluster mirroring (not in the default set): Twinlog's own mirroring between two Twinlog clusters against
     * Apache Kafka MirrorMaker 2 between two Twinlog clusters and between two Kafka clusters; runs the
     * {@link MirrorSetup}s instead of the systems; see {@link MirrorBenchmark}.
     */
    MIRROR("mirror"),
    /**
     * Mirroring at scale (not in the default set): many mirror partitions on 3+3 Twinlog brokers; ZooKeeper writes
     * and metadata rebuilds in steady state, describe, failover of all; see {@link MirrorScaleBenchmark}. Kafka's
     * side is a preferred-leader election of as many partitions on 3 brokers, against which the failover is
     * compared; see {@link KafkaLeaderMoveBenchmark}.
     */
    MIRROR_SCALE("mirror-scale"),
    /**
     * Consumer groups (not in the default set): offset commit throughput and latency, and time for a group to reach
     * a stable assignment with the classic and the KIP-848 protocol, on one broker per system; see
     * {@link GroupsBenchmark}.
     */
    GROUPS("groups"),
    /**
     * Incremental fetch sessions (not in the default set): a consumer of 1,000 partitions with little traffic, on
     * one broker per system with sessions and without; see {@link FetchSessionsBenchmark}.
     */
    FETCH_SESSIONS("fetch-sessions"),
    /**
     * Latency at a fixed load (not in the default set): produce-to-consume latency at 10 and 50 MiB/s into 24
     * partitions of replication factor 3, on three brokers per system; see {@link LoadLatencyBenchmark}.
     */
    LATENCY("latency"),
    /**
     * Copying existing data (not in the default set): Twinlog's mirror catching up a topic the source already holds
     * against a new Kafka follower replica catching up the same data; see {@link CatchUpBenchmark}.
     */
    CATCH_UP("catch-up"),
    /**
     * Failback cost (not in the default set, Twinlog only): a large shared prefix, a 1,000-record divergent tail on
     * each side, the failback's time and bytes fetched, and --verify; see {@link FailbackBenchmark}.
     */
    FAILBACK("failback");

    private final String label;

    Phase(String label) {
        this.label = label;
    }

    String label() {
        return label;
    }

    static Optional<Phase> parse(String label) {
        String l = label.toLowerCase(Locale.ROOT);
        return Arrays.stream(values()).filter(p -> p.label.equals(l)).findFirst();
    }

    @Override
    public String toString() {
        return label;
    }
}
