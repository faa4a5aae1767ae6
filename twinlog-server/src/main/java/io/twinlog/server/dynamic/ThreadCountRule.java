package io.twinlog.server.dynamic;

import org.apache.kafka.common.config.ConfigException;

/**
 * Kafka's rule for changing a thread pool's size live, with Kafka's messages: at least 1, at least half and at most
 * double the current size, so one change cannot starve or flood the broker.
 */
final class ThreadCountRule {
    private ThreadCountRule() {
    }

    static void validate(String name, int current, int next) {
        String failed = String.format("Dynamic thread count update validation failed for %s=%d", name, next);
        if (next < 1) {
            throw new ConfigException(String.format("%s, value should be at least 1", failed));
        }
        if (next < current / 2) {
            throw new ConfigException(String.format("%s, value should be at least half the current value %d", failed,
                    current));
        }
        if (next > current * 2) {
            throw new ConfigException(String.format("%s, value should not be greater than double the current value %d",
                    failed, current));
        }
    }
}
