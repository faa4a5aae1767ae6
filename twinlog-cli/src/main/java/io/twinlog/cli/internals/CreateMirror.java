package io.twinlog.cli.internals;

import io.twinlog.clients.mirror.MirrorAdmin;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.Map;

/**
 * {@code --create}: defines a cluster mirror on the destination cluster. The configs are sent as given; the broker
 * validates the name, the patterns and the presence of {@code bootstrap.servers}.
 */
public record CreateMirror(String mirror, Map<String, String> configs) implements MirrorAction {
    /** Config keys of a mirror definition, as the brokers read them. */
    public static final String BOOTSTRAP_SERVERS = "bootstrap.servers";
    public static final String TOPIC_INCLUDE = "mirror.topic.include";
    public static final String TOPIC_EXCLUDE = "mirror.topic.exclude";
    public static final String GROUPS_INCLUDE = "mirror.groups.include";
    public static final String GROUPS_EXCLUDE = "mirror.groups.exclude";
    public static final String GROUPS_SYNC_INTERVAL_MS = "mirror.groups.sync.interval.ms";
    public static final String REPLICATION_THROTTLED_RATE = "mirror.replication.throttled.rate";
    public static final String TOPIC_PREFIX = "mirror.topic.prefix";
    public static final String TOPIC_PREFIX_SEPARATOR = "mirror.topic.prefix.separator";

    public CreateMirror {
        configs = Map.copyOf(configs);
    }

    @Override
    public void run(MirrorAdmin admin, PrintWriter out) throws IOException {
        admin.createClusterMirror(mirror, configs);
        out.println("Created cluster mirror '" + mirror + "' from " + configs.get(BOOTSTRAP_SERVERS) + ".");
    }
}
