package io.twinlog.common;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

import java.util.List;

/**
 * {@link ConfigDef.Validator}s for the broker keys whose values have a structure of their own: listener lists and
 * the broker address overrides. Each parses the value the way {@link BrokerConfig} later does, so a value that
 * passes validation cannot fail at use.
 */
final class BrokerConfigValidators {
    private BrokerConfigValidators() {
    }

    /** A list of {@code NAME://host:port} endpoints, at least one; null passes when the key has no default. */
    static ConfigDef.Validator endpoints() {
        return ConfigDef.LambdaValidator.with((name, value) -> {
            if (value != null) {
                Endpoint.parseList(String.join(",", strings(value)), name);
            }
        }, () -> "a comma-separated list of NAME://host:port");
    }

    /** {@code id=host:port,...}: broker id to the address to use for it; empty for none. */
    static ConfigDef.Validator brokerEndpointOverrides() {
        return ConfigDef.LambdaValidator.with((name, value) -> {
            for (String entry : strings(value)) {
                parseOverride(name, entry);
            }
        }, () -> "a comma-separated list of broker.id=host:port");
    }

    /** {@code http://host:port} ({@link HttpListener}); null passes (the server is off). */
    static ConfigDef.Validator httpListener() {
        return ConfigDef.LambdaValidator.with((name, value) -> {
            if (value != null && !String.valueOf(value).isBlank()) {
                HttpListener.parse(name, String.valueOf(value));
            }
        }, () -> "http://host:port, or empty for none");
    }

    /** At least one non-blank entry; null passes when the key has no default (another key then applies). */
    static ConfigDef.Validator nonEmptyList() {
        return ConfigDef.LambdaValidator.with((name, value) -> {
            if (value != null && strings(value).stream().allMatch(String::isBlank)) {
                throw new ConfigException(name, value, "must name at least one entry");
            }
        }, () -> "a non-empty comma-separated list");
    }

    /**
     * A socket buffer size: -1 (the OS default) or a positive number of bytes. Kafka takes any int here and fails
     * later, when the socket refuses it; Twinlog says so when the config is read.
     */
    static ConfigDef.Validator socketBufferBytes() {
        return ConfigDef.LambdaValidator.with((name, value) -> {
            int bytes = (Integer) value;
            if (bytes != -1 && bytes < 1) {
                throw new ConfigException(name, value, "must be -1 (the OS default) or a positive number of bytes");
            }
        }, () -> "-1 (the OS default) or a positive number of bytes");
    }

    /** One {@code id=host:port} entry of an override list, parsed; the validator and the accessor share it. */
    static OverrideEntry parseOverride(String name, String entry) {
        int eq = entry.indexOf('=');
        if (eq <= 0) {
            throw new ConfigException(name, entry, "expected broker.id=host:port");
        }
        int id;
        try {
            id = Integer.parseInt(entry.substring(0, eq).trim());
        } catch (NumberFormatException e) {
            throw new ConfigException(name, entry, "the broker id is not an integer");
        }
        return new OverrideEntry(id, Endpoint.parse("PLAINTEXT://" + entry.substring(eq + 1).trim(), name));
    }

    record OverrideEntry(int brokerId, Endpoint endpoint) {
    }

    @SuppressWarnings("unchecked")
    private static List<String> strings(Object value) {
        return value == null ? List.of() : (List<String>) value;
    }
}
