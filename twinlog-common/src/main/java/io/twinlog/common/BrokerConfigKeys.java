package io.twinlog.common;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.internals.BrokerSecurityConfigs;
import org.apache.kafka.coordinator.transaction.AddPartitionsToTxnConfig;
import org.apache.kafka.coordinator.transaction.TransactionLogConfig;
import org.apache.kafka.coordinator.transaction.TransactionStateManagerConfig;
import org.apache.kafka.network.SocketServerConfigs;
import org.apache.kafka.server.config.QuotaConfig;
import org.apache.kafka.server.config.ReplicationConfigs;
import org.apache.kafka.server.config.ServerConfigs;
import org.apache.kafka.server.config.ServerLogConfigs;
import org.apache.kafka.server.metrics.MetricConfigs;
import org.apache.kafka.storage.internals.log.CleanerConfig;

import java.util.List;
import java.util.Locale;

/**
 * The names of every broker key and their definitions ({@link #CONFIG_DEF}, built by
 * {@link BrokerConfigDefinitions}): Kafka's name where the key is Kafka's, so an operator's {@code server.properties}
 * reads the same. {@link BrokerConfig}, the only subclass, adds the parsed values and their typed accessors, as
 * Kafka's {@code KafkaConfig} does over {@code AbstractKafkaConfig}; callers name a key {@code BrokerConfig.KEY}.
 * Split from {@code BrokerConfig} so that each holds one job: what the keys are, and what the broker was given.
 */
public abstract sealed class BrokerConfigKeys permits BrokerConfig {
    /** Kafka's prefix of per-listener overrides ({@code listener.name.<listener>.<key>}). */
    private static final String LISTENER_OVERRIDE_PREFIX = "listener.name.";
    // Keys with Kafka's meaning carry Kafka's constant; BrokerConfigDefinitions holds their definitions.
    public static final String BROKER_ID = ServerConfigs.BROKER_ID_CONFIG;
    public static final String BROKER_RACK = ServerConfigs.BROKER_RACK_CONFIG;
    public static final String LISTENERS = SocketServerConfigs.LISTENERS_CONFIG;
    public static final String ADVERTISED_LISTENERS = SocketServerConfigs.ADVERTISED_LISTENERS_CONFIG;
    public static final String LISTENER_SECURITY_PROTOCOL_MAP =
            SocketServerConfigs.LISTENER_SECURITY_PROTOCOL_MAP_CONFIG;
    public static final String INTER_BROKER_LISTENER_NAME = ReplicationConfigs.INTER_BROKER_LISTENER_NAME_CONFIG;
    public static final String SECURITY_INTER_BROKER_PROTOCOL = ReplicationConfigs.INTER_BROKER_SECURITY_PROTOCOL_CONFIG;
    public static final String AUTHORIZER_CLASS_NAME = ServerConfigs.AUTHORIZER_CLASS_NAME_CONFIG;
    public static final String SUPER_USERS = "super.users";
    public static final String ALLOW_EVERYONE_IF_NO_ACL_FOUND = "allow.everyone.if.no.acl.found";
    public static final String SASL_MECHANISM_INTER_BROKER_PROTOCOL =
            BrokerSecurityConfigs.SASL_MECHANISM_INTER_BROKER_PROTOCOL_CONFIG;
    public static final String LOG_DIRS = ServerLogConfigs.LOG_DIRS_CONFIG;
    public static final String LOG_DIR = ServerLogConfigs.LOG_DIR_CONFIG;
    public static final String ZOOKEEPER_CONNECT = "zookeeper.connect";
    public static final String ZOOKEEPER_SESSION_TIMEOUT_MS = "zookeeper.session.timeout.ms";
    public static final String ZOOKEEPER_CONNECTION_TIMEOUT_MS = "zookeeper.connection.timeout.ms";
    public static final String ZOOKEEPER_EMBEDDED_PORT = "zookeeper.embedded.port";
    public static final String ZOOKEEPER_EMBEDDED_DATA_DIR = "zookeeper.embedded.data.dir";
    public static final String NUM_PARTITIONS = ServerLogConfigs.NUM_PARTITIONS_CONFIG;
    public static final String DEFAULT_REPLICATION_FACTOR = ReplicationConfigs.DEFAULT_REPLICATION_FACTOR_CONFIG;
    public static final String AUTO_CREATE_TOPICS_ENABLE = ServerLogConfigs.AUTO_CREATE_TOPICS_ENABLE_CONFIG;
    public static final String MESSAGE_MAX_BYTES = ServerConfigs.MESSAGE_MAX_BYTES_CONFIG;
    public static final String SOCKET_REQUEST_MAX_BYTES = SocketServerConfigs.SOCKET_REQUEST_MAX_BYTES_CONFIG;
    public static final String NUM_NETWORK_THREADS = SocketServerConfigs.NUM_NETWORK_THREADS_CONFIG;
    public static final String NUM_IO_THREADS = ServerConfigs.NUM_IO_THREADS_CONFIG;
    public static final String MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS =
            ServerConfigs.MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS_CONFIG;
    public static final String QUEUED_MAX_REQUESTS = SocketServerConfigs.QUEUED_MAX_REQUESTS_CONFIG;
    public static final String CONNECTIONS_MAX_IDLE_MS = SocketServerConfigs.CONNECTIONS_MAX_IDLE_MS_CONFIG;
    public static final String SOCKET_SEND_BUFFER_BYTES = SocketServerConfigs.SOCKET_SEND_BUFFER_BYTES_CONFIG;
    public static final String SOCKET_RECEIVE_BUFFER_BYTES = SocketServerConfigs.SOCKET_RECEIVE_BUFFER_BYTES_CONFIG;
    public static final String LOG_SEGMENT_BYTES = ServerLogConfigs.LOG_SEGMENT_BYTES_CONFIG;
    public static final String LOG_RETENTION_MS = ServerLogConfigs.LOG_RETENTION_TIME_MILLIS_CONFIG;
    public static final String LOG_RETENTION_MINUTES = ServerLogConfigs.LOG_RETENTION_TIME_MINUTES_CONFIG;
    public static final String LOG_RETENTION_HOURS = ServerLogConfigs.LOG_RETENTION_TIME_HOURS_CONFIG;
    public static final String LOG_RETENTION_BYTES = ServerLogConfigs.LOG_RETENTION_BYTES_CONFIG;
    public static final String LOG_FLUSH_INTERVAL_MESSAGES = ServerLogConfigs.LOG_FLUSH_INTERVAL_MESSAGES_CONFIG;
    public static final String LOG_FLUSH_INTERVAL_MS = ServerLogConfigs.LOG_FLUSH_INTERVAL_MS_CONFIG;
    public static final String LOG_CLEANUP_POLICY = ServerLogConfigs.LOG_CLEANUP_POLICY_CONFIG;
    public static final String LOG_RETENTION_CHECK_INTERVAL_MS = ServerLogConfigs.LOG_CLEANUP_INTERVAL_MS_CONFIG;
    public static final String LOG_CLEANER_ENABLE = CleanerConfig.LOG_CLEANER_ENABLE_PROP;
    public static final String LOG_CLEANER_BACKOFF_MS = CleanerConfig.LOG_CLEANER_BACKOFF_MS_PROP;
    public static final String LOG_CLEANER_THREADS = CleanerConfig.LOG_CLEANER_THREADS_PROP;
    public static final String LOG_CLEANER_DEDUPE_BUFFER_SIZE = CleanerConfig.LOG_CLEANER_DEDUPE_BUFFER_SIZE_PROP;
    public static final String LOG_CLEANER_IO_MAX_BYTES_PER_SECOND =
            CleanerConfig.LOG_CLEANER_IO_MAX_BYTES_PER_SECOND_PROP;
    public static final String LOG_CLEANER_IO_BUFFER_SIZE = CleanerConfig.LOG_CLEANER_IO_BUFFER_SIZE_PROP;
    /** The dedupe buffer's load factor, despite its name ({@code CleanerConfig.dedupeBufferLoadFactor}). */
    public static final String LOG_CLEANER_IO_BUFFER_LOAD_FACTOR =
            CleanerConfig.LOG_CLEANER_DEDUPE_BUFFER_LOAD_FACTOR_PROP;
    public static final String LOG_ROLL_MS = ServerLogConfigs.LOG_ROLL_TIME_MILLIS_CONFIG;
    public static final String COMPRESSION_TYPE = ServerConfigs.COMPRESSION_TYPE_CONFIG;
    public static final String MIN_INSYNC_REPLICAS = ServerLogConfigs.MIN_IN_SYNC_REPLICAS_CONFIG;
    public static final String UNCLEAN_LEADER_ELECTION_ENABLE = ReplicationConfigs.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG;
    public static final String HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS =
            ReplicationConfigs.REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS_CONFIG;
    public static final String PRODUCER_ID_EXPIRATION_MS = TransactionLogConfig.PRODUCER_ID_EXPIRATION_MS_CONFIG;
    public static final String PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS =
            TransactionLogConfig.PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS_CONFIG;
    public static final String TRANSACTION_MAX_TIMEOUT_MS =
            TransactionStateManagerConfig.TRANSACTIONS_MAX_TIMEOUT_MS_CONFIG;
    /** The transaction coordinator's keys, Kafka's names, definitions and defaults (issue 26). */
    public static final List<String> TRANSACTION_LOG_KEYS = List.of(
            TransactionLogConfig.TRANSACTIONS_TOPIC_PARTITIONS_CONFIG,
            TransactionLogConfig.TRANSACTIONS_TOPIC_REPLICATION_FACTOR_CONFIG,
            TransactionLogConfig.TRANSACTIONS_TOPIC_MIN_ISR_CONFIG,
            TransactionLogConfig.TRANSACTIONS_TOPIC_SEGMENT_BYTES_CONFIG,
            TransactionLogConfig.TRANSACTIONS_LOAD_BUFFER_SIZE_CONFIG,
            TransactionLogConfig.TRANSACTION_PARTITION_VERIFICATION_ENABLE_CONFIG);
    public static final List<String> TRANSACTION_STATE_KEYS = List.of(
            TransactionStateManagerConfig.TRANSACTIONAL_ID_EXPIRATION_MS_CONFIG,
            TransactionStateManagerConfig.TRANSACTIONS_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS_CONFIG,
            TransactionStateManagerConfig.TRANSACTIONS_REMOVE_EXPIRED_TRANSACTIONAL_ID_CLEANUP_INTERVAL_MS_CONFIG,
            TransactionStateManagerConfig.TRANSACTIONS_2PC_ENABLED_CONFIG);
    public static final List<String> ADD_PARTITIONS_TO_TXN_KEYS = List.of(
            AddPartitionsToTxnConfig.ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MS_CONFIG,
            AddPartitionsToTxnConfig.ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MAX_MS_CONFIG);
    public static final String REPLICA_LAG_TIME_MAX_MS = ReplicationConfigs.REPLICA_LAG_TIME_MAX_MS_CONFIG;
    /**
     * How long a mirror partition may wait in EPOCH_FENCING or STOPPING, or without a leader on the source, before it
     * goes FAILED with the reason.
     */
    public static final String MIRROR_STATE_TIMEOUT_MS = "mirror.state.timeout.ms";
    /** How many admin requests may wait for the broker's admin threads; more are refused (decision 69). */
    public static final String ADMIN_QUEUED_MAX_REQUESTS = "admin.queued.max.requests";
    public static final String PASSWORD_ENCODER_SECRET = "password.encoder.secret";
    public static final String METRIC_REPORTERS = MetricConfigs.METRIC_REPORTER_CLASSES_CONFIG;
    public static final String METRICS_NUM_SAMPLES = MetricConfigs.METRIC_NUM_SAMPLES_CONFIG;
    public static final String METRICS_SAMPLE_WINDOW_MS = MetricConfigs.METRIC_SAMPLE_WINDOW_MS_CONFIG;
    public static final String METRICS_RECORDING_LEVEL = MetricConfigs.METRIC_RECORDING_LEVEL_CONFIG;
    public static final String METRICS_PROMETHEUS_LISTENER = "metrics.prometheus.listener";
    public static final String QUOTA_WINDOW_NUM = QuotaConfig.NUM_QUOTA_SAMPLES_CONFIG;
    public static final String QUOTA_WINDOW_SIZE_SECONDS = QuotaConfig.QUOTA_WINDOW_SIZE_SECONDS_CONFIG;
    public static final String REPLICATION_QUOTA_WINDOW_NUM = QuotaConfig.NUM_REPLICATION_QUOTA_SAMPLES_CONFIG;
    public static final String REPLICATION_QUOTA_WINDOW_SIZE_SECONDS =
            QuotaConfig.REPLICATION_QUOTA_WINDOW_SIZE_SECONDS_CONFIG;
    public static final String DASHBOARD_LISTENER = "dashboard.listener";
    public static final String DASHBOARD_ACTIONS_ENABLE = "dashboard.actions.enable";
    public static final String PASSWORD_ENCODER_OLD_SECRET = "password.encoder.old.secret";
    public static final String REPLICA_FETCH_WAIT_MAX_MS = ReplicationConfigs.REPLICA_FETCH_WAIT_MAX_MS_CONFIG;
    public static final String NUM_REPLICA_FETCHERS = ReplicationConfigs.NUM_REPLICA_FETCHERS_CONFIG;
    public static final String REPLICA_FETCH_MIN_BYTES = ReplicationConfigs.REPLICA_FETCH_MIN_BYTES_CONFIG;
    public static final String REPLICA_FETCH_MAX_BYTES = ReplicationConfigs.REPLICA_FETCH_MAX_BYTES_CONFIG;
    public static final String REPLICA_FETCH_RESPONSE_MAX_BYTES =
            ReplicationConfigs.REPLICA_FETCH_RESPONSE_MAX_BYTES_CONFIG;
    public static final String REPLICA_SOCKET_TIMEOUT_MS = ReplicationConfigs.REPLICA_SOCKET_TIMEOUT_MS_CONFIG;
    public static final String FETCH_MAX_BYTES = ServerConfigs.FETCH_MAX_BYTES_CONFIG;
    public static final String CONTROLLED_SHUTDOWN_ENABLE = ServerConfigs.CONTROLLED_SHUTDOWN_ENABLE_CONFIG;
    public static final String CONTROLLED_SHUTDOWN_TIMEOUT_MS = "controlled.shutdown.timeout.ms";
    public static final String INTER_BROKER_ENDPOINT_OVERRIDES = "inter.broker.endpoint.overrides";
    public static final String LOG_INITIAL_TASK_DELAY_MS = ServerLogConfigs.LOG_INITIAL_TASK_DELAY_MS_CONFIG;

    /** Every key above, typed, validated and documented (Kafka's definition where the key is Kafka's). */
    public static final ConfigDef CONFIG_DEF = BrokerConfigDefinitions.build();

    BrokerConfigKeys() {
    }

    /**
     * Whether a key is Twinlog's: defined in {@link #CONFIG_DEF}, or a per-listener override
     * ({@code listener.name.sasl_ssl.ssl.keystore.location}, ...), which Kafka's channel builders read.
     */
    static boolean isDefined(String key) {
        return CONFIG_DEF.names().contains(key) || key.startsWith(LISTENER_OVERRIDE_PREFIX);
    }

    /**
     * Whether a key's value is logged as {@code [hidden]}, as Kafka logs its configuration: password-typed configs,
     * and any key naming a password, a secret or a JAAS config (per-listener overrides included).
     */
    static boolean isSecret(String key) {
        ConfigDef.ConfigKey defined = CONFIG_DEF.configKeys().get(key);
        String lower = key.toLowerCase(Locale.ROOT);
        return (defined != null && defined.type == ConfigDef.Type.PASSWORD) || lower.contains("password")
                || lower.contains("secret") || lower.endsWith("jaas.config") || lower.endsWith("keystore.key");
    }
}
