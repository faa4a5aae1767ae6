package io.twinlog.bench;

import java.util.Map;

/**
 * One single-node system the benchmark measures, started in this JVM on loopback. The benchmark starts one system,
 * measures it, and closes it before starting the next, so two systems never compete for the two cores.
 */
public interface ClusterUnderTest extends AutoCloseable {

    /** Short name used in topic names, tables and log lines, e.g. {@code twinlog}. */
    String name();

    /** Starts the system and blocks until it accepts client requests. */
    void start() throws Exception;

    /** {@code host:port} of the node; valid after {@link #start()}. */
    String bootstrapServers();

    /** What a client needs to connect besides the address: nothing, or TLS and SASL settings. */
    default Map<String, Object> clientSecurity() {
        return Map.of();
    }

    /** Stops the system and deletes its data. Idempotent. */
    @Override
    void close() throws Exception;
}
