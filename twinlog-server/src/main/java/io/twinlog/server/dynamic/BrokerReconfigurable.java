package io.twinlog.server.dynamic;

import io.twinlog.common.BrokerConfig;
import org.apache.kafka.common.config.ConfigException;

import java.util.Set;

/**
 * A part of the broker that takes some of its configs live (Kafka's {@code BrokerReconfigurable}, over Twinlog's
 * {@link BrokerConfig}): the request handler threads, a listener's network threads and TLS keystore, the replica
 * fetchers, the log cleaner, the log defaults.
 */
public interface BrokerReconfigurable {
    /** For the logs: "request handler threads". */
    String name();

    /** Whether a change of {@code key} (listener-prefixed or not) concerns this part. */
    boolean reconfigures(String key);

    /**
     * Whether this part wants to be reconfigured when the broker's own config node is written again with the same
     * values: a keystore file replaced in place is reloaded that way, as in Kafka.
     */
    default boolean reloadsFiles() {
        return false;
    }

    /**
     * Whether {@code next} can be applied now, checked on the admin thread before it is stored.
     *
     * @throws ConfigException with Kafka's message when it cannot
     */
    void validateReconfiguration(BrokerConfig current, BrokerConfig next);

    /** Applies {@code next}; on the broker's reconfigure thread only. A failure keeps the previous state. */
    void reconfigure(BrokerConfig previous, BrokerConfig next) throws Exception;
}
