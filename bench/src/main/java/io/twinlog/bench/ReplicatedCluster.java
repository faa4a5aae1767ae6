package io.twinlog.bench;

import java.util.List;
import java.util.Optional;

/**
 * A three-broker cluster of one system, started in this JVM on loopback, for the replicated-produce and failover
 * benchmarks. As with {@link ClusterUnderTest}, only one cluster runs at a time.
 */
interface ReplicatedCluster extends AutoCloseable {

    /** Short name used in topic names, tables and log lines, e.g. {@code twinlog}. */
    String name();

    /** Starts every node and blocks until all brokers accept client requests. */
    void start() throws Exception;

    /** {@code host:port} of every running broker, comma-separated; valid after {@link #start()}. */
    String bootstrapServers();

    /** IDs of the brokers, running or not. */
    List<Integer> brokerIds();

    /** The broker that also acts as controller, if the controller runs inside a broker (Twinlog). */
    Optional<Integer> controllerBrokerId();

    /** What {@link #stop} does for this mode, for the report. */
    String describe(FailureMode mode);

    /**
     * Stops one broker the given way; returns when the broker has stopped. The cluster must have been built for
     * this mode (see the implementations' constructors).
     */
    void stop(int brokerId, FailureMode mode) throws Exception;

    /** Stops everything and deletes the data. Idempotent. */
    @Override
    void close() throws Exception;
}
