package io.twinlog.cli.internals;

import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The options of {@code --create} (and {@code --alter}, which takes the same), as picocli fills them in, and the
 * mirror configs the settings among them stand for.
 */
public final class CreateOptions {
    @Option(names = "--source-bootstrap-server", paramLabel = "HOST:PORT[,...]", order = 31,
            description = "Brokers of the source cluster as the destination brokers reach them (the mirror's "
                    + "bootstrap.servers).")
    String sourceBootstrapServer;

    @Option(names = "--source-config", paramLabel = "KEY=VALUE", order = 32, description = "A Kafka client "
            + "config for connections to the source, e.g. security.protocol=SASL_SSL; repeatable.")
    List<String> sourceConfigs = new ArrayList<>();

    @Option(names = "--source-config-file", paramLabel = "FILE", order = 33, description = "A properties file "
            + "of such configs; --source-config and the other options of --create override it.")
    Path sourceConfigFile;

    @Option(names = "--include", paramLabel = "REGEX[,REGEX...]", split = ",", hideParamSyntax = true, order = 34,
            description = "Source topics the mirror covers (mirror.topic.include).")
    List<String> include = new ArrayList<>();

    @Option(names = "--exclude", paramLabel = "REGEX[,REGEX...]", split = ",", hideParamSyntax = true, order = 35,
            description = "Source topics it never covers (mirror.topic.exclude).")
    List<String> exclude = new ArrayList<>();

    @Option(names = "--groups-include", paramLabel = "REGEX[,REGEX...]", split = ",", hideParamSyntax = true,
            order = 36, description = "Consumer groups whose offsets are synced from the source "
            + "(mirror.groups.include; default every group, '' turns the sync off).")
    List<String> groupsInclude;

    @Option(names = "--groups-exclude", paramLabel = "REGEX[,REGEX...]", split = ",", hideParamSyntax = true,
            order = 37, description = "Consumer groups never synced (mirror.groups.exclude).")
    List<String> groupsExclude;

    @Option(names = "--groups-sync-interval-ms", paramLabel = "MS", order = 38, description = "How often group "
            + "offsets are synced (mirror.groups.sync.interval.ms; default 30000).")
    Long groupsSyncIntervalMs;

    @Option(names = "--replication-throttled-rate", paramLabel = "BYTES_PER_SEC", order = 39, description =
            "The most bytes per second each destination broker's fetchers of the mirror take from the source "
            + "(mirror.replication.throttled.rate; default unlimited; changed live with --alter).")
    Long replicationThrottledRate;

    @Option(names = "--topic-prefix", paramLabel = "PREFIX", order = 40, description = "Mirror source topic T as "
            + "PREFIX.T here (mirror.topic.prefix; e.g. the source's region, for an active-active pair); only while "
            + "no topic of the mirror mirrors.")
    String topicPrefix;

    @Option(names = "--topic-prefix-separator", paramLabel = "SEP", order = 41, description = "What joins the "
            + "prefix and the source topic's name (mirror.topic.prefix.separator; default '.').")
    String topicPrefixSeparator;

    /**
     * The mirror settings given (group sync, bandwidth cap, topic prefix), as mirror configs ({@code --groups-include ''} as an
     * empty value).
     */
    Map<String, String> settingConfigs() {
        Map<String, String> out = new LinkedHashMap<>();
        if (groupsInclude != null) {
            out.put(CreateMirror.GROUPS_INCLUDE, joined(groupsInclude));
        }
        if (groupsExclude != null) {
            out.put(CreateMirror.GROUPS_EXCLUDE, joined(groupsExclude));
        }
        if (groupsSyncIntervalMs != null) {
            if (groupsSyncIntervalMs <= 0) {
                throw CommandException.usage("--groups-sync-interval-ms must be positive, but got "
                        + groupsSyncIntervalMs);
            }
            out.put(CreateMirror.GROUPS_SYNC_INTERVAL_MS, Long.toString(groupsSyncIntervalMs));
        }
        if (replicationThrottledRate != null) {
            if (replicationThrottledRate <= 0) {
                throw CommandException.usage("--replication-throttled-rate must be positive, but got "
                        + replicationThrottledRate);
            }
            out.put(CreateMirror.REPLICATION_THROTTLED_RATE, Long.toString(replicationThrottledRate));
        }
        if (topicPrefix != null) {
            out.put(CreateMirror.TOPIC_PREFIX, topicPrefix.trim());
        }
        if (topicPrefixSeparator != null) {
            out.put(CreateMirror.TOPIC_PREFIX_SEPARATOR, topicPrefixSeparator.trim());
        }
        return out;
    }

    private static String joined(List<String> patterns) {
        return String.join(",", patterns.stream().map(String::trim).filter(p -> !p.isEmpty()).toList());
    }

    Optional<String> firstGiven() {
        if (sourceBootstrapServer != null) {
            return Optional.of("--source-bootstrap-server");
        }
        if (!sourceConfigs.isEmpty()) {
            return Optional.of("--source-config");
        }
        if (sourceConfigFile != null) {
            return Optional.of("--source-config-file");
        }
        if (!include.isEmpty()) {
            return Optional.of("--include");
        }
        if (!exclude.isEmpty()) {
            return Optional.of("--exclude");
        }
        if (groupsInclude != null) {
            return Optional.of("--groups-include");
        }
        if (groupsExclude != null) {
            return Optional.of("--groups-exclude");
        }
        if (groupsSyncIntervalMs != null) {
            return Optional.of("--groups-sync-interval-ms");
        }
        if (replicationThrottledRate != null) {
            return Optional.of("--replication-throttled-rate");
        }
        if (topicPrefix != null) {
            return Optional.of("--topic-prefix");
        }
        return topicPrefixSeparator == null ? Optional.empty() : Optional.of("--topic-prefix-separator");
    }
}
