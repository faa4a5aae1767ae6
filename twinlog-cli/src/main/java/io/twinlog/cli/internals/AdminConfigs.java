package io.twinlog.cli.internals;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The client configs of the command's connection to the destination cluster, as Kafka's tools build them: the
 * {@code --command-config} file (security.protocol, ssl.*, sasl.*, any admin client config), then
 * {@code --bootstrap-server}, which always wins, and {@code --timeout-ms} when given.
 */
public final class AdminConfigs {
    static final String BOOTSTRAP_SERVERS = "bootstrap.servers";
    public static final String REQUEST_TIMEOUT_MS = "request.timeout.ms";
    public static final String DEFAULT_API_TIMEOUT_MS = "default.api.timeout.ms";
    /** The command's own default for both timeouts when neither the file nor --timeout-ms sets them. */
    public static final int DEFAULT_TIMEOUT_MS = 30_000;

    private AdminConfigs() {
    }

    /** @param bootstrapServer the validated --bootstrap-server list */
    public static Map<String, Object> build(Optional<Path> commandConfig, String bootstrapServer,
                                            OptionalInt timeoutMs) {
        Map<String, Object> configs = new HashMap<>();
        commandConfig.ifPresent(file -> configs.putAll(PropertiesFiles.read("--command-config", file)));
        configs.put(BOOTSTRAP_SERVERS, bootstrapServer);
        if (timeoutMs.isPresent()) {
            configs.put(REQUEST_TIMEOUT_MS, timeoutMs.getAsInt());
            configs.put(DEFAULT_API_TIMEOUT_MS, timeoutMs.getAsInt());
        } else {
            configs.putIfAbsent(REQUEST_TIMEOUT_MS, DEFAULT_TIMEOUT_MS);
            configs.putIfAbsent(DEFAULT_API_TIMEOUT_MS, DEFAULT_TIMEOUT_MS);
        }
        return configs;
    }
}
