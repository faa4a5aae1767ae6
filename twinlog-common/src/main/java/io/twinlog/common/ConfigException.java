package io.twinlog.common;

/** A configuration value the broker cannot start with; the message names the key and is shown to the operator as is. */
public class ConfigException extends RuntimeException {
    public ConfigException(String message) {
        super(message);
    }
}
