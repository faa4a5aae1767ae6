package io.twinlog.cli.internals;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The configs of a new mirror, from the options of {@code --create}. Later sources win, as in Kafka's tools where a
 * dedicated option overrides a property file: {@code --source-config-file}, then each {@code --source-config}, then
 * {@code --source-bootstrap-server}, {@code --include} and {@code --exclude}.
 */
public final class SourceConfigs {
    private SourceConfigs() {
    }

    public static Map<String, String> build(Optional<Path> configFile, List<String> keyValues,
                                            Optional<String> sourceBootstrap, List<String> include,
                                            List<String> exclude) {
        return build(configFile, keyValues, sourceBootstrap, include, exclude, true);
    }

    /** @param requireBootstrap true for --create; --alter changes only what it is given */
    public static Map<String, String> build(Optional<Path> configFile, List<String> keyValues,
                                            Optional<String> sourceBootstrap, List<String> include,
                                            List<String> exclude, boolean requireBootstrap) {
        Map<String, String> configs = new LinkedHashMap<>();
        configFile.ifPresent(file -> configs.putAll(PropertiesFiles.read("--source-config-file", file)));
        for (String keyValue : keyValues) {
            int eq = keyValue.indexOf('=');
            if (eq <= 0) {
                throw CommandException.usage("Invalid --source-config '" + keyValue + "': expected KEY=VALUE");
            }
            configs.put(keyValue.substring(0, eq).trim(), keyValue.substring(eq + 1));
        }
        sourceBootstrap.ifPresent(b -> configs.put(CreateMirror.BOOTSTRAP_SERVERS, b));
        if (!configs.containsKey(CreateMirror.BOOTSTRAP_SERVERS) && !requireBootstrap) {
            patterns(include).ifPresent(p -> configs.put(CreateMirror.TOPIC_INCLUDE, p));
            patterns(exclude).ifPresent(p -> configs.put(CreateMirror.TOPIC_EXCLUDE, p));
            return configs;
        }
        if (!configs.containsKey(CreateMirror.BOOTSTRAP_SERVERS)) {
            throw CommandException.usage("--create needs --source-bootstrap-server (or bootstrap.servers in "
                    + "--source-config or --source-config-file)");
        }
        configs.put(CreateMirror.BOOTSTRAP_SERVERS, BootstrapServers.validate(
                sourceBootstrap.isPresent() ? "--source-bootstrap-server" : CreateMirror.BOOTSTRAP_SERVERS,
                configs.get(CreateMirror.BOOTSTRAP_SERVERS), false));
        patterns(include).ifPresent(p -> configs.put(CreateMirror.TOPIC_INCLUDE, p));
        patterns(exclude).ifPresent(p -> configs.put(CreateMirror.TOPIC_EXCLUDE, p));
        return configs;
    }

    private static Optional<String> patterns(List<String> patterns) {
        List<String> given = patterns.stream().map(String::trim).filter(p -> !p.isEmpty()).toList();
        return given.isEmpty() ? Optional.empty() : Optional.of(String.join(",", given));
    }
}
