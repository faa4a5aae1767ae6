package io.twinlog.common;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * The resolved configuration of one broker, read from a Kafka-style properties file.
 *
 * <p>Keys and defaults follow Apache Kafka's broker configuration so an operator's existing
 * {@code server.properties} mostly works unchanged. Topic-level defaults ({@code log.segment.bytes},
 * {@code log.retention.ms}, ...) are exposed as a map in Kafka's topic-config vocabulary by
 * {@link #defaultTopicConfigs()}. Unknown keys are kept (and logged by the server) so later features can read them.
 *
 * <p>Immutable and thread-safe.
 */
public final class BrokerConfig {
    public static final String BROKER_ID = "broker.id";
    public static final String LISTENERS = "listeners";
    public static final String ADVERTISED_LISTENERS = "advertised.listeners";
    public static final String LOG_DIRS = "log.dirs";
    public static final String LOG_DIR = "log.dir";
    public static final String ZOOKEEPER_CONNECT = "zookeeper.connect";
    public static final String ZOOKEEPER_SESSION_TIMEOUT_MS = "zookeeper.session.timeout.ms";
    public static final String ZOOKEEPER_CONNECTION_TIMEOUT_MS = "zookeeper.connection.timeout.ms";
    public static final String ZOOKEEPER_EMBEDDED_PORT = "zookeeper.embedded.port";
    public static final String ZOOKEEPER_EMBEDDED_DATA_DIR = "zookeeper.embedded.data.dir";
    public static final String NUM_PARTITIONS = "num.partitions";
    public static final String DEFAULT_REPLICATION_FACTOR = "default.replication.factor";
    public static final String AUTO_CREATE_TOPICS_ENABLE = "auto.create.topics.enable";
    public static final String MESSAGE_MAX_BYTES = "message.max.bytes";
    public static final String SOCKET_REQUEST_MAX_BYTES = "socket.request.max.bytes";
    public static final String NUM_NETWORK_THREADS = "num.network.threads";
    public static final String NUM_IO_THREADS = "num.io.threads";
    public static final String QUEUED_MAX_REQUESTS = "queued.max.requests";
    public static final String CONNECTIONS_MAX_IDLE_MS = "connections.max.idle.ms";
    public static final String LOG_SEGMENT_BYTES = "log.segment.bytes";
    public static final String LOG_RETENTION_MS = "log.retention.ms";
    public static final String LOG_RETENTION_MINUTES = "log.retention.minutes";
    public static final String LOG_RETENTION_HOURS = "log.retention.hours";
    public static final String LOG_RETENTION_BYTES = "log.retention.bytes";
    public static final String LOG_FLUSH_INTERVAL_MESSAGES = "log.flush.interval.messages";
    public static final String LOG_FLUSH_INTERVAL_MS = "log.flush.interval.ms";
    public static final String LOG_CLEANUP_POLICY = "log.cleanup.policy";
    public static final String LOG_RETENTION_CHECK_INTERVAL_MS = "log.retention.check.interval.ms";
    public static final String LOG_CLEANER_ENABLE = "log.cleaner.enable";
    public static final String LOG_CLEANER_BACKOFF_MS = "log.cleaner.backoff.ms";
    public static final String LOG_ROLL_MS = "log.roll.ms";
    public static final String COMPRESSION_TYPE = "compression.type";
    public static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";
    public static final String UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable";
    public static final String HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS = "replica.high.watermark.checkpoint.interval.ms";
    public static final String PRODUCER_ID_EXPIRATION_MS = "producer.id.expiration.ms";
    public static final String TRANSACTION_MAX_TIMEOUT_MS = "transaction.max.timeout.ms";
    public static final String REPLICA_LAG_TIME_MAX_MS = "replica.lag.time.max.ms";
    /**
     * How long a mirror partition may wait in EPOCH_FENCING or STOPPING, or without a leader on the source, before it
     * goes FAILED with the reason.
     */
    public static final String MIRROR_STATE_TIMEOUT_MS = "mirror.state.timeout.ms";
    public static final String REPLICA_FETCH_WAIT_MAX_MS = "replica.fetch.wait.max.ms";
    public static final String REPLICA_FETCH_MIN_BYTES = "replica.fetch.min.bytes";
    public static final String REPLICA_FETCH_MAX_BYTES = "replica.fetch.max.bytes";
    public static final String REPLICA_FETCH_RESPONSE_MAX_BYTES = "replica.fetch.response.max.bytes";
    public static final String REPLICA_SOCKET_TIMEOUT_MS = "replica.socket.timeout.ms";
    public static final String CONTROLLED_SHUTDOWN_ENABLE = "controlled.shutdown.enable";
    public static final String CONTROLLED_SHUTDOWN_TIMEOUT_MS = "controlled.shutdown.timeout.ms";
    public static final String INTER_BROKER_ENDPOINT_OVERRIDES = "inter.broker.endpoint.overrides";
    public static final String LOG_INITIAL_TASK_DELAY_MS = "log.initial.task.delay.ms";

    /** Broker keys whose value becomes the default of a topic config: broker key -> topic key. */
    private static final Map<String, String> BROKER_TO_TOPIC_KEYS;

    static {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(LOG_SEGMENT_BYTES, "segment.bytes");
        m.put(LOG_RETENTION_BYTES, "retention.bytes");
        m.put(LOG_FLUSH_INTERVAL_MESSAGES, "flush.messages");
        m.put(LOG_FLUSH_INTERVAL_MS, "flush.ms");
        m.put(LOG_CLEANUP_POLICY, "cleanup.policy");
        m.put(LOG_ROLL_MS, "segment.ms");
        m.put(MESSAGE_MAX_BYTES, "max.message.bytes");
        m.put(COMPRESSION_TYPE, "compression.type");
        m.put(MIN_INSYNC_REPLICAS, "min.insync.replicas");
        m.put(UNCLEAN_LEADER_ELECTION_ENABLE, "unclean.leader.election.enable");
        m.put("log.index.size.max.bytes", "segment.index.bytes");
        m.put("log.index.interval.bytes", "index.interval.bytes");
        m.put("log.cleaner.delete.retention.ms", "delete.retention.ms");
        m.put("log.cleaner.min.compaction.lag.ms", "min.compaction.lag.ms");
        m.put("log.cleaner.max.compaction.lag.ms", "max.compaction.lag.ms");
        m.put("log.cleaner.min.cleanable.ratio", "min.cleanable.dirty.ratio");
        m.put("log.message.timestamp.type", "message.timestamp.type");
        m.put("log.preallocate", "preallocate");
        m.put("log.segment.delete.delay.ms", "file.delete.delay.ms");
        BROKER_TO_TOPIC_KEYS = Collections.unmodifiableMap(m);
    }

    private final Properties props;
    private final int brokerId;
    private final List<Endpoint> listeners;
    private final List<Endpoint> advertisedListeners;
    private final List<File> logDirs;
    private final Optional<String> zookeeperConnect;

    public BrokerConfig(Properties source) {
        this.props = new Properties();
        this.props.putAll(source);
        this.brokerId = intValue(BROKER_ID, 0);
        if (brokerId < 0) {
            throw new ConfigException(BROKER_ID + " must be >= 0, got " + brokerId);
        }
        this.listeners = Endpoint.parseList(string(LISTENERS, "PLAINTEXT://127.0.0.1:9092"), LISTENERS);
        String advertised = props.getProperty(ADVERTISED_LISTENERS);
        this.advertisedListeners = advertised == null || advertised.isBlank()
                ? listeners : Endpoint.parseList(advertised, ADVERTISED_LISTENERS);
        String dirs = props.getProperty(LOG_DIRS, props.getProperty(LOG_DIR, "/tmp/twinlog-logs"));
        List<File> parsedDirs = new ArrayList<>();
        for (String d : dirs.split(",")) {
            if (!d.isBlank()) {
                parsedDirs.add(new File(d.trim()).getAbsoluteFile());
            }
        }
        if (parsedDirs.isEmpty()) {
            throw new ConfigException(LOG_DIRS + " must name at least one directory");
        }
        this.logDirs = List.copyOf(parsedDirs);
        String zk = props.getProperty(ZOOKEEPER_CONNECT);
        this.zookeeperConnect = zk == null || zk.isBlank() ? Optional.empty() : Optional.of(zk.trim());
        // Validate the numeric keys eagerly so a typo fails at start-up with the key's name.
        numPartitions();
        defaultReplicationFactor();
        messageMaxBytes();
        socketRequestMaxBytes();
        logRetentionMs();
    }

    public static BrokerConfig fromFile(Path file) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
        }
        return new BrokerConfig(p);
    }

    public int brokerId() {
        return brokerId;
    }

    public List<Endpoint> listeners() {
        return listeners;
    }

    public List<Endpoint> advertisedListeners() {
        return advertisedListeners;
    }

    public List<File> logDirs() {
        return logDirs;
    }

    /** Empty when the broker should start an embedded ZooKeeper server in-process. */
    public Optional<String> zookeeperConnect() {
        return zookeeperConnect;
    }

    public int zookeeperSessionTimeoutMs() {
        return intValue(ZOOKEEPER_SESSION_TIMEOUT_MS, 18_000);
    }

    public int zookeeperConnectionTimeoutMs() {
        return intValue(ZOOKEEPER_CONNECTION_TIMEOUT_MS, 18_000);
    }

    public int zookeeperEmbeddedPort() {
        return intValue(ZOOKEEPER_EMBEDDED_PORT, 2181);
    }

    /** Sibling of the first log dir by default: a log dir may only hold partition directories. */
    public File zookeeperEmbeddedDataDir() {
        String dir = props.getProperty(ZOOKEEPER_EMBEDDED_DATA_DIR);
        if (dir != null && !dir.isBlank()) {
            return new File(dir.trim()).getAbsoluteFile();
        }
        File first = logDirs.get(0);
        File parent = first.getParentFile() == null ? first : first.getParentFile();
        return new File(parent, "zookeeper");
    }

    public int numPartitions() {
        return positive(NUM_PARTITIONS, 1);
    }

    public short defaultReplicationFactor() {
        return (short) positive(DEFAULT_REPLICATION_FACTOR, 1);
    }

    public boolean autoCreateTopicsEnable() {
        return booleanValue(AUTO_CREATE_TOPICS_ENABLE, true);
    }

    public int messageMaxBytes() {
        return positive(MESSAGE_MAX_BYTES, 1_048_588);
    }

    public int socketRequestMaxBytes() {
        return positive(SOCKET_REQUEST_MAX_BYTES, 104_857_600);
    }

    public int numNetworkThreads() {
        return positive(NUM_NETWORK_THREADS, 3);
    }

    public int numIoThreads() {
        return positive(NUM_IO_THREADS, 8);
    }

    public int queuedMaxRequests() {
        return positive(QUEUED_MAX_REQUESTS, 500);
    }

    public long connectionsMaxIdleMs() {
        return longValue(CONNECTIONS_MAX_IDLE_MS, 600_000L);
    }

    public long logRetentionMs() {
        if (props.containsKey(LOG_RETENTION_MS)) {
            return longValue(LOG_RETENTION_MS, -1);
        }
        if (props.containsKey(LOG_RETENTION_MINUTES)) {
            return longValue(LOG_RETENTION_MINUTES, 0) * 60_000L;
        }
        return longValue(LOG_RETENTION_HOURS, 168) * 3_600_000L;
    }

    public long logRetentionCheckIntervalMs() {
        return longValue(LOG_RETENTION_CHECK_INTERVAL_MS, 300_000L);
    }

    public long logFlushIntervalMs() {
        return longValue(LOG_FLUSH_INTERVAL_MS, Long.MAX_VALUE);
    }

    public boolean logCleanerEnable() {
        return booleanValue(LOG_CLEANER_ENABLE, true);
    }

    public long logCleanerBackoffMs() {
        return longValue(LOG_CLEANER_BACKOFF_MS, 15_000L);
    }

    public long highWatermarkCheckpointIntervalMs() {
        return longValue(HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS, 5_000L);
    }

    public int producerIdExpirationMs() {
        return intValue(PRODUCER_ID_EXPIRATION_MS, 86_400_000);
    }

    public int transactionMaxTimeoutMs() {
        return intValue(TRANSACTION_MAX_TIMEOUT_MS, 900_000);
    }

    public long replicaLagTimeMaxMs() {
        return longValue(REPLICA_LAG_TIME_MAX_MS, 30_000L);
    }

    public long mirrorStateTimeoutMs() {
        return longValue(MIRROR_STATE_TIMEOUT_MS, 60_000L);
    }

    public int replicaFetchWaitMaxMs() {
        return positive(REPLICA_FETCH_WAIT_MAX_MS, 500);
    }

    public int replicaFetchMinBytes() {
        return positive(REPLICA_FETCH_MIN_BYTES, 1);
    }

    public int replicaFetchMaxBytes() {
        return positive(REPLICA_FETCH_MAX_BYTES, 1_048_576);
    }

    public int replicaFetchResponseMaxBytes() {
        return positive(REPLICA_FETCH_RESPONSE_MAX_BYTES, 10_485_760);
    }

    public int replicaSocketTimeoutMs() {
        return positive(REPLICA_SOCKET_TIMEOUT_MS, 30_000);
    }

    public boolean controlledShutdownEnable() {
        return booleanValue(CONTROLLED_SHUTDOWN_ENABLE, true);
    }

    /** How long a stopping broker waits for the controller to move its leaderships away. */
    public long controlledShutdownTimeoutMs() {
        return longValue(CONTROLLED_SHUTDOWN_TIMEOUT_MS, 30_000L);
    }

    /**
     * Addresses to use for other brokers instead of the ones they registered ({@code id=host:port,...}): for
     * networks where brokers reach each other through NAT or a proxy, and for tests that put a fault proxy
     * between two brokers.
     */
    public Map<Integer, Endpoint> interBrokerEndpointOverrides() {
        Map<Integer, Endpoint> out = new LinkedHashMap<>();
        String v = props.getProperty(INTER_BROKER_ENDPOINT_OVERRIDES, "");
        for (String entry : v.split(",")) {
            if (entry.isBlank()) {
                continue;
            }
            int eq = entry.indexOf('=');
            if (eq <= 0) {
                throw new ConfigException(INTER_BROKER_ENDPOINT_OVERRIDES + ": expected id=host:port, got '" + entry + "'");
            }
            int id;
            try {
                id = Integer.parseInt(entry.substring(0, eq).trim());
            } catch (NumberFormatException e) {
                throw new ConfigException(INTER_BROKER_ENDPOINT_OVERRIDES + ": bad broker id in '" + entry + "'");
            }
            out.put(id, Endpoint.parse("PLAINTEXT://" + entry.substring(eq + 1).trim(), INTER_BROKER_ENDPOINT_OVERRIDES));
        }
        return out;
    }

    /** Delay before the first retention/flush/checkpoint pass after start-up (Kafka's default 30 s; ours 10 s). */
    public long logInitialTaskDelayMs() {
        return longValue(LOG_INITIAL_TASK_DELAY_MS, 10_000L);
    }

    /** The broker default of {@code unclean.leader.election.enable} (false, as in Kafka). */
    public boolean uncleanLeaderElectionEnable() {
        return booleanValue(UNCLEAN_LEADER_ELECTION_ENABLE, false);
    }

    /**
     * The broker-level defaults of topic configs, keyed by topic config name ({@code segment.bytes}, ...),
     * containing only the keys the operator set ({@code retention.ms} from whichever of Kafka's three
     * {@code log.retention.*} keys is set).
     */
    public Map<String, String> defaultTopicConfigs() {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : BROKER_TO_TOPIC_KEYS.entrySet()) {
            String v = props.getProperty(e.getKey());
            if (v != null) {
                out.put(e.getValue(), v.trim());
            }
        }
        if (props.containsKey(LOG_RETENTION_MS) || props.containsKey(LOG_RETENTION_MINUTES)
                || props.containsKey(LOG_RETENTION_HOURS)) {
            out.put("retention.ms", Long.toString(logRetentionMs()));
        }
        return out;
    }

    /** Broker key for a topic config key, for DescribeConfigs synonyms; empty if there is none. */
    public static Optional<String> brokerKeyForTopicKey(String topicKey) {
        if ("retention.ms".equals(topicKey)) {
            return Optional.of(LOG_RETENTION_MS);
        }
        for (Map.Entry<String, String> e : BROKER_TO_TOPIC_KEYS.entrySet()) {
            if (e.getValue().equals(topicKey)) {
                return Optional.of(e.getKey());
            }
        }
        return Optional.empty();
    }

    public Optional<String> get(String key) {
        return Optional.ofNullable(props.getProperty(key));
    }

    /** A copy of every key the operator set (for logging the resolved configuration at start-up). */
    public Map<String, String> originals() {
        Map<String, String> out = new java.util.TreeMap<>();
        for (String k : props.stringPropertyNames()) {
            out.put(k, props.getProperty(k));
        }
        return out;
    }

    public String string(String key, String defaultValue) {
        String v = props.getProperty(key);
        return v == null ? defaultValue : v.trim();
    }

    public int intValue(String key, int defaultValue) {
        String v = props.getProperty(key);
        if (v == null || v.isBlank()) {
            return defaultValue;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new ConfigException(key + " must be an integer, got '" + v + "'");
        }
    }

    public long longValue(String key, long defaultValue) {
        String v = props.getProperty(key);
        if (v == null || v.isBlank()) {
            return defaultValue;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new ConfigException(key + " must be a long integer, got '" + v + "'");
        }
    }

    public boolean booleanValue(String key, boolean defaultValue) {
        String v = props.getProperty(key);
        if (v == null || v.isBlank()) {
            return defaultValue;
        }
        String t = v.trim().toLowerCase(java.util.Locale.ROOT);
        if (!t.equals("true") && !t.equals("false")) {
            throw new ConfigException(key + " must be true or false, got '" + v + "'");
        }
        return Boolean.parseBoolean(t);
    }

    private int positive(String key, int defaultValue) {
        int v = intValue(key, defaultValue);
        if (v <= 0) {
            throw new ConfigException(key + " must be > 0, got " + v);
        }
        return v;
    }
}
