package io.twinlog.common;

/**
 * A configuration value the broker cannot start with; the message names the key and is shown to the operator as is.
 *
 * <p>A Kafka {@link org.apache.kafka.common.config.ConfigException}, so one catch covers both Twinlog's own checks
 * and the ones Kafka's {@code ConfigDef} runs for every typed key ("Invalid value x for configuration y: why").
 */
public class ConfigException extends org.apache.kafka.common.config.ConfigException {
    public ConfigException(String message) {
        super(message);
    }
}
