package io.twinlog.common;

import io.twinlog.common.metrics.BrokerMetrics;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.coordinator.transaction.AddPartitionsToTxnConfig;
import org.apache.kafka.coordinator.transaction.TransactionConfig;
import org.apache.kafka.coordinator.transaction.TransactionLogConfig;
import org.apache.kafka.coordinator.transaction.TransactionStateManagerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.common.utils.Time;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The resolved configuration of one broker, read from a Kafka-style properties file.
 *
 * <p>Every key is named in {@link BrokerConfigKeys} and defined in {@link #CONFIG_DEF}, a Kafka {@link ConfigDef}
 * (see {@link BrokerConfigDefinitions}):
 * typed, bounded and documented, with Kafka's names, documentation and, where Twinlog uses a value exactly as Kafka
 * does, Kafka's own definition, so an operator's existing {@code server.properties} mostly works unchanged. The
 * constructor parses and validates every key, so a bad value stops the broker at start-up with one line naming the
 * key, the value and why. Keys it does not define are kept ({@link #undefinedKeys()}): the server passes Kafka's
 * group coordinator keys on to Kafka's coordinator and warns about the rest. Topic-level defaults
 * ({@code log.segment.bytes}, {@code log.retention.ms}, ...) are exposed as a map in Kafka's topic-config
 * vocabulary by {@link #defaultTopicConfigs()}.
 *
 * <p>Immutable and thread-safe.
 */
public final class BrokerConfig extends BrokerConfigKeys {



    /** Parsed and validated values of every defined key; thread-safe (Kafka's AbstractConfig). */
    private final AbstractConfig values;
    /** What the operator set, as strings, by key. */
    private final Map<String, String> originals;
    private final List<Endpoint> listeners;
    private final List<Endpoint> advertisedListeners;
    private final List<File> logDirs;
    private final Map<Integer, Endpoint> interBrokerEndpointOverrides;
    private final ListenerSecurity listenerSecurity;

    /**
     * @throws org.apache.kafka.common.config.ConfigException with one line naming the key, the value and why, for
     *                                                        the first invalid value
     */
    public BrokerConfig(Properties source) {
        this((Map<?, ?>) source);
    }

    public BrokerConfig(Map<?, ?> source) {
        this.values = new AbstractConfig(CONFIG_DEF, source, false);
        Map<String, String> set = new TreeMap<>();
        values.originals().forEach((k, v) -> set.put(k, String.valueOf(v)));
        this.originals = Collections.unmodifiableMap(set);
        this.listeners = Endpoint.parseList(String.join(",", values.getList(LISTENERS)), LISTENERS);
        List<String> advertised = values.getList(ADVERTISED_LISTENERS);
        this.advertisedListeners = advertised == null
                ? listeners : Endpoint.parseList(String.join(",", advertised), ADVERTISED_LISTENERS);
        List<String> dirs = values.getList(LOG_DIRS) != null ? values.getList(LOG_DIRS) : values.getList(LOG_DIR);
        this.logDirs = dirs.stream().filter(d -> !d.isBlank()).map(d -> new File(d.trim()).getAbsoluteFile())
                .toList();
        Map<Integer, Endpoint> overrides = new LinkedHashMap<>();
        for (String entry : values.getList(INTER_BROKER_ENDPOINT_OVERRIDES)) {
            BrokerConfigValidators.OverrideEntry parsed =
                    BrokerConfigValidators.parseOverride(INTER_BROKER_ENDPOINT_OVERRIDES, entry);
            overrides.put(parsed.brokerId(), parsed.endpoint());
        }
        this.interBrokerEndpointOverrides = Collections.unmodifiableMap(overrides);
        this.listenerSecurity = new ListenerSecurity(values, listeners, advertisedListeners);
        if (values.getBoolean(TransactionStateManagerConfig.TRANSACTIONS_2PC_ENABLED_CONFIG)) {
            // KIP-939's two-phase commit needs InitProducerId v6, which Kafka 4.4 does not advertise either
            throw new ConfigException(TransactionStateManagerConfig.TRANSACTIONS_2PC_ENABLED_CONFIG, true,
                    "two-phase commit transactions (KIP-939) are not served by Twinlog");
        }
    }

    public static BrokerConfig fromFile(Path file) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
        }
        return new BrokerConfig(p);
    }

    public int brokerId() {
        return values.getInt(BROKER_ID);
    }

    /** Each listener's security protocol and the inter-broker listener. */
    public ListenerSecurity listenerSecurity() {
        return listenerSecurity;
    }

    /**
     * The parsed configs, listener-prefixed originals included, as Kafka's channel builders read them
     * ({@code ChannelBuilders} takes an {@link AbstractConfig}).
     */
    public AbstractConfig values() {
        return values;
    }

    /** {@code authorizer.class.name}: empty without an authorizer. */
    public String authorizerClassName() {
        return values.getString(AUTHORIZER_CLASS_NAME);
    }

    /** {@code sasl.mechanism.inter.broker.protocol}: the mechanism this broker uses towards the others. */
    public String saslMechanismInterBrokerProtocol() {
        return values.getString(SASL_MECHANISM_INTER_BROKER_PROTOCOL);
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
        return Optional.ofNullable(values.getString(ZOOKEEPER_CONNECT)).map(String::trim).filter(s -> !s.isEmpty());
    }

    public int zookeeperSessionTimeoutMs() {
        return values.getInt(ZOOKEEPER_SESSION_TIMEOUT_MS);
    }

    public int zookeeperConnectionTimeoutMs() {
        return values.getInt(ZOOKEEPER_CONNECTION_TIMEOUT_MS);
    }

    public int zookeeperEmbeddedPort() {
        return values.getInt(ZOOKEEPER_EMBEDDED_PORT);
    }

    /** Sibling of the first log dir by default: a log dir may only hold partition directories. */
    public File zookeeperEmbeddedDataDir() {
        String dir = values.getString(ZOOKEEPER_EMBEDDED_DATA_DIR);
        if (dir != null && !dir.isBlank()) {
            return new File(dir.trim()).getAbsoluteFile();
        }
        File first = logDirs.get(0);
        File parent = first.getParentFile() == null ? first : first.getParentFile();
        return new File(parent, "zookeeper");
    }

    public int numPartitions() {
        return values.getInt(NUM_PARTITIONS);
    }

    public short defaultReplicationFactor() {
        return values.getInt(DEFAULT_REPLICATION_FACTOR).shortValue();
    }

    public boolean autoCreateTopicsEnable() {
        return values.getBoolean(AUTO_CREATE_TOPICS_ENABLE);
    }

    public int messageMaxBytes() {
        return values.getInt(MESSAGE_MAX_BYTES);
    }

    public int socketRequestMaxBytes() {
        return values.getInt(SOCKET_REQUEST_MAX_BYTES);
    }

    public int numNetworkThreads() {
        return values.getInt(NUM_NETWORK_THREADS);
    }

    /** Samples over which a client quota's rate is measured ({@code quota.window.num}). */
    public int quotaWindowNum() {
        return values.getInt(QUOTA_WINDOW_NUM);
    }

    /** Length of one client quota sample ({@code quota.window.size.seconds}). */
    public int quotaWindowSizeSeconds() {
        return values.getInt(QUOTA_WINDOW_SIZE_SECONDS);
    }

    /** Samples over which a replication quota's rate is measured ({@code replication.quota.window.num}). */
    public int replicationQuotaWindowNum() {
        return values.getInt(REPLICATION_QUOTA_WINDOW_NUM);
    }

    /** Length of one replication quota sample ({@code replication.quota.window.size.seconds}). */
    public int replicationQuotaWindowSizeSeconds() {
        return values.getInt(REPLICATION_QUOTA_WINDOW_SIZE_SECONDS);
    }

    public int numIoThreads() {
        return values.getInt(NUM_IO_THREADS);
    }

    public int queuedMaxRequests() {
        return values.getInt(QUEUED_MAX_REQUESTS);
    }

    public long connectionsMaxIdleMs() {
        return values.getLong(CONNECTIONS_MAX_IDLE_MS);
    }

    /** {@code max.incremental.fetch.session.cache.slots}: fetch sessions (KIP-227) this broker keeps at most. */
    public int maxIncrementalFetchSessionCacheSlots() {
        return values.getInt(MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS);
    }

    /** {@code socket.send.buffer.bytes}: SO_SNDBUF of accepted connections; -1 leaves the OS default. */
    public int socketSendBufferBytes() {
        return values.getInt(SOCKET_SEND_BUFFER_BYTES);
    }

    /** {@code socket.receive.buffer.bytes}: SO_RCVBUF of the listening sockets; -1 leaves the OS default. */
    public int socketReceiveBufferBytes() {
        return values.getInt(SOCKET_RECEIVE_BUFFER_BYTES);
    }

    /** Kafka's precedence: {@code log.retention.ms}, else {@code log.retention.minutes}, else the hours. */
    public long logRetentionMs() {
        Long ms = values.getLong(LOG_RETENTION_MS);
        if (ms != null) {
            return ms;
        }
        Integer minutes = values.getInt(LOG_RETENTION_MINUTES);
        if (minutes != null) {
            return minutes * 60_000L;
        }
        return values.getInt(LOG_RETENTION_HOURS) * 3_600_000L;
    }

    public long logRetentionCheckIntervalMs() {
        return values.getLong(LOG_RETENTION_CHECK_INTERVAL_MS);
    }

    /** Long.MAX_VALUE when not set: flushing is left to the OS, as in Kafka. */
    public long logFlushIntervalMs() {
        Long ms = values.getLong(LOG_FLUSH_INTERVAL_MS);
        return ms == null ? Long.MAX_VALUE : ms;
    }

    public boolean logCleanerEnable() {
        return values.getBoolean(LOG_CLEANER_ENABLE);
    }

    public long logCleanerBackoffMs() {
        return values.getLong(LOG_CLEANER_BACKOFF_MS);
    }

    public int logCleanerThreads() {
        return values.getInt(LOG_CLEANER_THREADS);
    }

    /** The heap of the cleaner's dedupe maps, split evenly over its threads. */
    public long logCleanerDedupeBufferSize() {
        return values.getLong(LOG_CLEANER_DEDUPE_BUFFER_SIZE);
    }

    public double logCleanerIoMaxBytesPerSecond() {
        return values.getDouble(LOG_CLEANER_IO_MAX_BYTES_PER_SECOND);
    }

    public int logCleanerIoBufferSize() {
        return values.getInt(LOG_CLEANER_IO_BUFFER_SIZE);
    }

    /** {@code log.cleaner.io.buffer.load.factor}: how full a dedupe map may get before a pass stops. */
    public double logCleanerDedupeBufferLoadFactor() {
        return values.getDouble(LOG_CLEANER_IO_BUFFER_LOAD_FACTOR);
    }

    public long highWatermarkCheckpointIntervalMs() {
        return values.getLong(HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS);
    }

    public int producerIdExpirationMs() {
        return values.getInt(PRODUCER_ID_EXPIRATION_MS);
    }

    public int producerIdExpirationCheckIntervalMs() {
        return values.getInt(PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS);
    }

    public int transactionMaxTimeoutMs() {
        return values.getInt(TRANSACTION_MAX_TIMEOUT_MS);
    }

    /** The {@code __transaction_state} topic's and the partitions' transaction settings, as Kafka reads them. */
    public TransactionLogConfig transactionLogConfig() {
        return new TransactionLogConfig(values);
    }

    /** The transaction coordinator's timeouts and intervals, as Kafka reads them. */
    public TransactionStateManagerConfig transactionStateManagerConfig() {
        return new TransactionStateManagerConfig(values);
    }

    /**
     * Everything the transaction coordinator reads, as Kafka's broker hands it over. Its state writes wait up to
     * 30 s for the ISR, Kafka's default {@code request.timeout.ms}, which Twinlog's broker does not define.
     */
    public TransactionConfig transactionConfig() {
        TransactionLogConfig logConfig = transactionLogConfig();
        TransactionStateManagerConfig state = transactionStateManagerConfig();
        return new TransactionConfig(state.transactionalIdExpirationMs(), state.transactionMaxTimeoutMs(),
                logConfig.transactionTopicPartitions(), logConfig.transactionTopicReplicationFactor(),
                logConfig.transactionTopicSegmentBytes(), logConfig.transactionLoadBufferSize(),
                logConfig.transactionTopicMinISR(), state.transactionAbortTimedOutTransactionCleanupIntervalMs(),
                state.transactionRemoveExpiredTransactionalIdCleanupIntervalMs(), state.transaction2PCEnabled(),
                30_000);
    }

    /** The partition leader's backoff while it adds a partition to a transaction for a producer (KIP-890). */
    public AddPartitionsToTxnConfig addPartitionsToTxnConfig() {
        return new AddPartitionsToTxnConfig(values);
    }

    public long replicaLagTimeMaxMs() {
        return values.getLong(REPLICA_LAG_TIME_MAX_MS);
    }

    /**
     * This broker's metrics as {@code metric.reporters} and Kafka's sampling keys describe them; the reporters are
     * instantiated and configured with every broker key, as Kafka does.
     */
    public BrokerMetrics newMetrics(Time time) {
        List<MetricsReporter> reporters = values.getConfiguredInstances(METRIC_REPORTERS, MetricsReporter.class,
                Map.of(BROKER_ID, brokerId()));
        MetricConfig metricConfig = BrokerMetrics.metricConfig(values.getInt(METRICS_NUM_SAMPLES),
                values.getLong(METRICS_SAMPLE_WINDOW_MS), values.getString(METRICS_RECORDING_LEVEL));
        return new BrokerMetrics(brokerId(), metricConfig, reporters, values.originals(), time);
    }

    /** Where to serve metrics in Prometheus' text format; empty: nowhere. */
    public Optional<HttpListener> prometheusListener() {
        String v = values.getString(METRICS_PROMETHEUS_LISTENER);
        return v == null || v.isBlank() ? Optional.empty()
                : Optional.of(HttpListener.parse(METRICS_PROMETHEUS_LISTENER, v));
    }

    /** Where to serve the mirror dashboard and its JSON API; empty: nowhere. */
    public Optional<HttpListener> dashboardListener() {
        String v = values.getString(DASHBOARD_LISTENER);
        return v == null || v.isBlank() ? Optional.empty() : Optional.of(HttpListener.parse(DASHBOARD_LISTENER, v));
    }

    /** Whether the dashboard offers failover, pause and resume (through the mirror admin API). */
    public boolean dashboardActionsEnable() {
        return values.getBoolean(DASHBOARD_ACTIONS_ENABLE);
    }

    public long mirrorStateTimeoutMs() {
        return values.getLong(MIRROR_STATE_TIMEOUT_MS);
    }

    public int adminQueuedMaxRequests() {
        return values.getInt(ADMIN_QUEUED_MAX_REQUESTS);
    }

    /** The secret mirror credentials are encrypted with in ZooKeeper; empty: they are stored as given. */
    public Optional<String> passwordEncoderSecret() {
        return Optional.ofNullable(values.getPassword(PASSWORD_ENCODER_SECRET)).map(Password::value);
    }

    /** The secret before the last rotation: values written with it still decrypt. */
    public Optional<String> passwordEncoderOldSecret() {
        return Optional.ofNullable(values.getPassword(PASSWORD_ENCODER_OLD_SECRET)).map(Password::value);
    }

    public int numReplicaFetchers() {
        return values.getInt(NUM_REPLICA_FETCHERS);
    }

    public int replicaFetchWaitMaxMs() {
        return values.getInt(REPLICA_FETCH_WAIT_MAX_MS);
    }

    public int replicaFetchMinBytes() {
        return values.getInt(REPLICA_FETCH_MIN_BYTES);
    }

    public int replicaFetchMaxBytes() {
        return values.getInt(REPLICA_FETCH_MAX_BYTES);
    }

    /** The most a consumer's Fetch or ShareFetch answers with, whatever it asks for (Kafka's cap). */
    public int fetchMaxBytes() {
        return values.getInt(FETCH_MAX_BYTES);
    }

    public int replicaFetchResponseMaxBytes() {
        return values.getInt(REPLICA_FETCH_RESPONSE_MAX_BYTES);
    }

    public int replicaSocketTimeoutMs() {
        return values.getInt(REPLICA_SOCKET_TIMEOUT_MS);
    }

    public boolean controlledShutdownEnable() {
        return values.getBoolean(CONTROLLED_SHUTDOWN_ENABLE);
    }

    /** How long a stopping broker waits for the controller to move its leaderships away. */
    public long controlledShutdownTimeoutMs() {
        return values.getLong(CONTROLLED_SHUTDOWN_TIMEOUT_MS);
    }

    /**
     * Addresses to use for other brokers instead of the ones they registered ({@code id=host:port,...}): for
     * networks where brokers reach each other through NAT or a proxy, and for tests that put a fault proxy
     * between two brokers.
     */
    public Map<Integer, Endpoint> interBrokerEndpointOverrides() {
        return interBrokerEndpointOverrides;
    }

    /** Delay before the first retention/flush/checkpoint pass after start-up (Kafka's default 30 s; ours 10 s). */
    public long logInitialTaskDelayMs() {
        return values.getLong(LOG_INITIAL_TASK_DELAY_MS);
    }

    /** The broker default of {@code unclean.leader.election.enable} (false, as in Kafka). */
    public boolean uncleanLeaderElectionEnable() {
        return values.getBoolean(UNCLEAN_LEADER_ELECTION_ENABLE);
    }

    /**
     * The broker-level defaults of topic configs, keyed by topic config name ({@code segment.bytes}, ...),
     * containing only the keys the operator set, in Kafka's canonical form ({@link TopicConfigDefaults}).
     */
    public Map<String, String> defaultTopicConfigs() {
        return TopicConfigDefaults.of(values, originals.keySet(), logRetentionMs());
    }

    /** Broker key for a topic config key, for DescribeConfigs synonyms; empty if there is none. */
    public static Optional<String> brokerKeyForTopicKey(String topicKey) {
        return TopicConfigDefaults.brokerKeyForTopicKey(topicKey);
    }

    /** The value the operator set for {@code key}, as written; empty if not set. */
    public Optional<String> get(String key) {
        return Optional.ofNullable(originals.get(key));
    }

    /** Every key the operator set, by name (for logging the configuration at start-up). */
    public Map<String, String> originals() {
        return originals;
    }

    /**
     * Every key the operator set, by name, with secrets as {@code [hidden]} as Kafka logs its configuration:
     * password-typed configs, and any key naming a password, a secret or a JAAS config (per-listener overrides
     * included), so that start-up logs never hold credentials.
     */
    public Map<String, String> loggable() {
        Map<String, String> out = new TreeMap<>();
        originals.forEach((k, v) -> out.put(k, isSecret(k) ? "[hidden]" : v));
        return out;
    }

    /** Keys the operator set that {@link #CONFIG_DEF} does not define, by name. */
    public Set<String> undefinedKeys() {
        Set<String> out = new TreeSet<>(originals.keySet());
        out.removeIf(BrokerConfigKeys::isDefined);
        return Collections.unmodifiableSet(out);
    }
}
