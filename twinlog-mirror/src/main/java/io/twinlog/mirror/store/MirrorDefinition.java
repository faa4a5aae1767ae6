package io.twinlog.mirror.store;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.twinlog.controller.zk.Json;
import io.twinlog.mirror.acl.AclSyncRule;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A cluster mirror as defined on the destination cluster: its name, how to reach the source (bootstrap servers
 * and any Kafka client configs, security settings included), which source topics it covers (include/exclude
 * regexes), and the source cluster ID recorded at first contact.
 *
 * <p>Config keys starting with {@code mirror.} are the mirror's own settings; every other key is a client config
 * for connections to the source. Consumer group offset sync is set by {@value #GROUPS_INCLUDE} (default
 * {@value #DEFAULT_GROUPS_INCLUDE}: every group; an empty value turns the sync off), {@value #GROUPS_EXCLUDE} (default
 * none) and {@value #GROUPS_SYNC_INTERVAL_MS} (default {@value #DEFAULT_GROUPS_SYNC_INTERVAL_MS}). Immutable.
 */
public record MirrorDefinition(String name, Map<String, String> configs, Optional<String> sourceClusterId,
                               State state, Optional<String> stateReason) {

    /** A mirror as a whole: mirroring, or stopped for good with a reason (its source is now another cluster). */
    public enum State {
        ACTIVE,
        FAILED
    }

    public static final String BOOTSTRAP_SERVERS = "bootstrap.servers";
    public static final String TOPIC_INCLUDE = "mirror.topic.include";
    public static final String TOPIC_EXCLUDE = "mirror.topic.exclude";
    /** Consumer groups whose offsets are synced (KIP-1279's name and default). */
    public static final String GROUPS_INCLUDE = "mirror.groups.include";
    public static final String GROUPS_EXCLUDE = "mirror.groups.exclude";
    public static final String GROUPS_SYNC_INTERVAL_MS = "mirror.groups.sync.interval.ms";
    /** Source ACLs copied to the destination (KIP-1279 rules; empty, the default: none). */
    public static final String ACLS_INCLUDE = "mirror.acls.include";
    public static final String DEFAULT_GROUPS_INCLUDE = ".*";
    public static final long DEFAULT_GROUPS_SYNC_INTERVAL_MS = 30_000;
    /** How often the controller broker follows the source's topics, partitions and configs. */
    public static final String METADATA_REFRESH_INTERVAL_MS = "mirror.metadata.refresh.interval.ms";
    public static final long DEFAULT_METADATA_REFRESH_INTERVAL_MS = 30_000;
    /**
     * The mirror's own numeric settings, typed and bounded with Kafka's {@link ConfigDef}: checked at create and
     * alter (INVALID_CONFIG with the reason), so a running mirror never meets a value it cannot use.
     */
    /**
     * Bytes per second each destination broker's fetchers of the mirror may take from the source, named after Kafka's
     * {@code follower.replication.throttled.rate}; unlimited by default.
     */
    public static final String REPLICATION_THROTTLED_RATE = "mirror.replication.throttled.rate";
    /**
     * Mirrors source topic T as {@code <prefix><separator>T} (named after Cluster Linking's {@code cluster.link.prefix}
     * and MirrorMaker 2's {@code replication.policy.separator}); unset or empty, the default: T as T.
     */
    public static final String TOPIC_PREFIX = "mirror.topic.prefix";
    public static final String TOPIC_PREFIX_SEPARATOR = "mirror.topic.prefix.separator";
    public static final String DEFAULT_TOPIC_PREFIX_SEPARATOR = ".";
    /** Kafka's longest topic name ({@code Topic.MAX_NAME_LENGTH}). */
    static final int MAX_TOPIC_NAME_LENGTH = 249;
    private static final Pattern TOPIC_NAME_CHARS = Pattern.compile("[a-zA-Z0-9._-]*");
    private static final ConfigDef SETTINGS = new ConfigDef()
            .define(REPLICATION_THROTTLED_RATE, ConfigDef.Type.LONG, Long.MAX_VALUE, ConfigDef.Range.atLeast(1),
                    ConfigDef.Importance.MEDIUM, "The most bytes per second the mirror's fetchers on one destination "
                            + "broker take from the source, all source brokers together (a mirror led by N brokers "
                            + "may take N times this); changed live. Unlimited by default.")
            .define(GROUPS_SYNC_INTERVAL_MS, ConfigDef.Type.LONG, DEFAULT_GROUPS_SYNC_INTERVAL_MS,
                    ConfigDef.Range.atLeast(1), ConfigDef.Importance.MEDIUM,
                    "How often consumer group offsets are copied from the source, in milliseconds.")
            .define(METADATA_REFRESH_INTERVAL_MS, ConfigDef.Type.LONG, DEFAULT_METADATA_REFRESH_INTERVAL_MS,
                    ConfigDef.Range.atLeast(1), ConfigDef.Importance.MEDIUM,
                    "How often source topics, partition counts and topic configs are followed, in milliseconds.");
    private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9._-]{1,249}");
    private static final List<String> SENSITIVE_MARKERS = List.of("password", "jaas", "secret", "credential",
            "token", "key.pem", "keystore.key");

    public MirrorDefinition {
        configs = Map.copyOf(configs);
    }

    public String sourceBootstrap() {
        return configs.getOrDefault(BOOTSTRAP_SERVERS, "");
    }

    /** Client configs for connections to the source (everything that is not a {@code mirror.} setting). */
    public Map<String, String> sourceClientConfigs() {
        Map<String, String> out = new TreeMap<>();
        configs.forEach((k, v) -> {
            if (!k.startsWith("mirror.")) {
                out.put(k, v);
            }
        });
        return out;
    }

    public List<String> includePatterns() {
        return split(configs.get(TOPIC_INCLUDE));
    }

    public List<String> excludePatterns() {
        return split(configs.get(TOPIC_EXCLUDE));
    }

    /** Groups whose offsets are synced; empty when {@value #GROUPS_INCLUDE} is set to an empty value. */
    public List<String> groupIncludePatterns() {
        return split(configs.getOrDefault(GROUPS_INCLUDE, DEFAULT_GROUPS_INCLUDE));
    }

    public List<String> groupExcludePatterns() {
        return split(configs.get(GROUPS_EXCLUDE));
    }

    /** How often group offsets are synced; the value was checked by {@link #validateSettings()} when it was set. */
    public long groupsSyncIntervalMs() {
        return (Long) settings().get(GROUPS_SYNC_INTERVAL_MS);
    }

    /** The mirror's bandwidth cap per destination broker, in bytes per second ({@code Long.MAX_VALUE}: none). */
    public long replicationThrottledRate() {
        return (Long) settings().get(REPLICATION_THROTTLED_RATE);
    }

    /** How often the source's metadata is followed; checked by {@link #validateSettings()} when it was set. */
    public long metadataRefreshIntervalMs() {
        return (Long) settings().get(METADATA_REFRESH_INTERVAL_MS);
    }

    /** The prefix of this mirror's topic names, {@code <prefix><separator>}; empty when topics keep their names. */
    public String topicNamePrefix() {
        String prefix = configs.getOrDefault(TOPIC_PREFIX, "").trim();
        return prefix.isEmpty() ? "" : prefix + configs.getOrDefault(TOPIC_PREFIX_SEPARATOR,
                DEFAULT_TOPIC_PREFIX_SEPARATOR).trim();
    }

    /**
     * The name source topic {@code sourceTopic} gets on this cluster when this mirror starts it (a failback into a
     * local topic with the source topic's ID keeps that topic's name instead; {@code MirrorTopicStarter}).
     */
    public String destinationTopic(String sourceTopic) {
        return topicNamePrefix() + sourceTopic;
    }

    /** Whether the prefix settings of {@code other} name topics as this definition's do. */
    public boolean sameTopicNames(MirrorDefinition other) {
        return topicNamePrefix().equals(other.topicNamePrefix());
    }

    /** Empty if the prefix and separator are legal in topic names and leave room for one; else why not. */
    private Optional<String> validateTopicPrefix() {
        String prefix = configs.getOrDefault(TOPIC_PREFIX, "").trim();
        String separator = configs.getOrDefault(TOPIC_PREFIX_SEPARATOR, DEFAULT_TOPIC_PREFIX_SEPARATOR).trim();
        if (!TOPIC_NAME_CHARS.matcher(prefix).matches() || !TOPIC_NAME_CHARS.matcher(separator).matches()) {
            return Optional.of("Invalid " + TOPIC_PREFIX + " '" + prefix + "' or " + TOPIC_PREFIX_SEPARATOR + " '"
                    + separator + "': topic names use only [a-zA-Z0-9._-]");
        }
        if (prefix.equals(".") || prefix.equals("..")) {
            return Optional.of("Invalid " + TOPIC_PREFIX + " '" + prefix + "': not a topic name");
        }
        if (topicNamePrefix().length() >= MAX_TOPIC_NAME_LENGTH) {
            return Optional.of(TOPIC_PREFIX + " with its separator is " + topicNamePrefix().length()
                    + " characters: no topic name fits in the " + MAX_TOPIC_NAME_LENGTH + " Kafka allows");
        }
        return Optional.empty();
    }

    /** Why {@code sourceTopic} cannot be mirrored under this mirror's prefix (its name too long), if it cannot. */
    public Optional<String> destinationNameRefused(String sourceTopic) {
        String name = destinationTopic(sourceTopic);
        return name.length() <= MAX_TOPIC_NAME_LENGTH ? Optional.empty() : Optional.of("Topic '" + sourceTopic
                + "' would be mirrored as '" + name + "', " + name.length() + " characters: longer than the "
                + MAX_TOPIC_NAME_LENGTH + " Kafka allows (" + TOPIC_PREFIX + ")");
    }

    private Map<String, Object> settings() {
        Map<String, String> own = new HashMap<>();
        for (String key : SETTINGS.names()) {
            String value = configs.get(key);
            if (value != null) {
                own.put(key, value.trim());
            }
        }
        return SETTINGS.parse(own);
    }

    /** Every regular expression of the definition: topic and group include and exclude patterns. */
    public List<String> allPatterns() {
        List<String> out = new ArrayList<>(includePatterns());
        out.addAll(excludePatterns());
        out.addAll(groupIncludePatterns());
        out.addAll(groupExcludePatterns());
        return out;
    }

    /** The rules selecting the source ACLs to copy; empty (no ACL sync) unless {@value #ACLS_INCLUDE} is set. */
    public List<AclSyncRule> aclSyncRules() {
        return AclSyncRule.parse(ACLS_INCLUDE, configs.get(ACLS_INCLUDE));
    }

    /** Empty if the mirror's own settings (intervals, ACL sync rules) are valid; else why not (for INVALID_CONFIG). */
    public Optional<String> validateSettings() {
        try {
            settings();
            aclSyncRules();
            return validateTopicPrefix();
        } catch (ConfigException e) {
            return Optional.of(e.getMessage());
        }
    }

    public MirrorDefinition withSourceClusterId(String id) {
        return new MirrorDefinition(name, configs, Optional.of(id), state, stateReason);
    }

    public MirrorDefinition withState(State newState, Optional<String> reason) {
        return new MirrorDefinition(name, configs, sourceClusterId, newState, reason);
    }

    /** Whether a config's value must never be shown back (passwords, JAAS configs, keys). */
    public static boolean isSensitive(String key) {
        String k = key.toLowerCase(Locale.ROOT);
        return SENSITIVE_MARKERS.stream().anyMatch(k::contains);
    }

    /** Empty if valid; else why the name is not (letters, digits, '.', '_', '-'; 1 to 249 characters). */
    public static Optional<String> validateName(String name) {
        if (name == null || !NAME.matcher(name).matches() || name.equals(".") || name.equals("..")) {
            return Optional.of("Invalid cluster mirror name '" + name + "': use 1 to 249 of [a-zA-Z0-9._-]"
                    + " other than '.' or '..'");
        }
        return Optional.empty();
    }

    /** Empty if every pattern compiles; else the first error. */
    public static Optional<String> validatePatterns(List<String> patterns) {
        for (String p : patterns) {
            try {
                Pattern.compile(p);
            } catch (PatternSyntaxException e) {
                return Optional.of("Invalid regular expression '" + p + "': " + e.getDescription());
            }
        }
        return Optional.empty();
    }

    /**
     * The definition as stored at {@code /mirrors/<name>} (the name is the node's):
     * {@code {"version":1,"configs":{...sorted...},"sourceClusterId":"...","state":"ACTIVE","stateReason":"..."}},
     * where {@code sourceClusterId} and {@code stateReason} are absent until known. With
     * {@code password.encoder.secret}, secret configs are in {@code encryptedConfigs} instead of {@code configs}.
     */
    @JsonPropertyOrder({"version", "configs", "encryptedConfigs", "sourceClusterId", "state", "stateReason"})
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Document(@JsonProperty("version") int version, @JsonProperty("configs") Map<String, String> configs,
                           @JsonProperty("encryptedConfigs") Map<String, String> encryptedConfigs,
                           @JsonProperty("sourceClusterId") String sourceClusterId,
                           @JsonProperty("state") State state, @JsonProperty("stateReason") String stateReason) {
    }

    public Document toJson() {
        return toJson(Optional.empty());
    }

    /**
     * The stored form; with a codec, the secret configs ({@link #isSensitive}) are written encrypted, in
     * {@code encryptedConfigs}, and never in clear.
     */
    public Document toJson(Optional<SecretCodec> codec) {
        Map<String, String> clear = new TreeMap<>(configs);
        Map<String, String> encrypted = null;
        if (codec.isPresent()) {
            encrypted = new TreeMap<>();
            for (String key : configs.keySet()) {
                if (isSensitive(key)) {
                    encrypted.put(key, codec.get().encrypt(clear.remove(key)));
                }
            }
            encrypted = encrypted.isEmpty() ? null : encrypted;
        }
        return new Document(1, clear, encrypted, sourceClusterId.orElse(null), state, stateReason.orElse(null));
    }

    /** @param path where the definition was read, for the error if it is corrupt */
    public static MirrorDefinition fromJson(String name, byte[] data, String path) {
        return fromJson(name, data, path, Optional.empty());
    }

    /**
     * @param codec decrypts the secret configs when the definition holds encrypted ones
     * @throws IllegalStateException when it holds encrypted secrets this broker cannot decrypt (no
     *         {@code password.encoder.secret}, or another one)
     */
    public static MirrorDefinition fromJson(String name, byte[] data, String path, Optional<SecretCodec> codec) {
        Document d = Json.decode(data, path, Document.class);
        Map<String, String> configs = d.configs() == null ? new TreeMap<>() : new TreeMap<>(d.configs());
        if (d.encryptedConfigs() != null && !d.encryptedConfigs().isEmpty()) {
            if (codec.isEmpty()) {
                throw new IllegalStateException("Cluster mirror " + name + " has encrypted source credentials ("
                        + String.join(", ", d.encryptedConfigs().keySet()) + ") but this broker has no "
                        + "password.encoder.secret: set the same one as the other brokers");
            }
            try {
                d.encryptedConfigs().forEach((k, v) -> configs.put(k, codec.get().decrypt(v)));
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException("Cluster mirror " + name + ": " + e.getMessage(), e);
            }
        }
        return new MirrorDefinition(name, configs, Optional.ofNullable(d.sourceClusterId()),
                d.state() == null ? State.ACTIVE : d.state(), Optional.ofNullable(d.stateReason()));
    }

    static List<String> split(String csv) {
        List<String> out = new ArrayList<>();
        if (csv != null) {
            for (String s : csv.split(",")) {
                if (!s.isBlank()) {
                    out.add(s.trim());
                }
            }
        }
        return out;
    }
}
