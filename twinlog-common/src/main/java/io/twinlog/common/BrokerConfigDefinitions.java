package io.twinlog.common;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Range;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.internals.BrokerSecurityConfigs;
import org.apache.kafka.coordinator.transaction.AddPartitionsToTxnConfig;
import org.apache.kafka.coordinator.transaction.TransactionLogConfig;
import org.apache.kafka.coordinator.transaction.TransactionStateManagerConfig;
import org.apache.kafka.network.SocketServerConfigs;
import org.apache.kafka.server.metrics.MetricConfigs;
import org.apache.kafka.server.config.QuotaConfig;
import org.apache.kafka.server.config.ReplicationConfigs;
import org.apache.kafka.server.config.ServerConfigs;
import org.apache.kafka.server.config.ServerLogConfigs;
import org.apache.kafka.storage.internals.log.CleanerConfig;
import org.apache.kafka.storage.internals.log.LogConfig;

import java.util.List;

/**
 * Every key of {@link BrokerConfig}: type, default, validator, importance and documentation, as one Kafka
 * {@link ConfigDef}.
 *
 * <p>Three kinds of key, told apart by how they are defined here:
 * <ul>
 *   <li><b>Kafka's key, Kafka's definition</b> ({@link #kafka}): keys whose value Twinlog uses exactly as Kafka does,
 *   most of them broker defaults of topic configs that go on to Kafka's {@code LogConfig}. The definition is taken
 *   from Kafka's own ({@code LogConfig.SERVER_CONFIG_DEF}, {@code CleanerConfig}, {@code ServerConfigs},
 *   {@code ReplicationConfigs}, {@code SocketServerConfigs}), so type, default, bounds and text cannot drift.</li>
 *   <li><b>Kafka's key, Twinlog's default or bounds</b>: Kafka's name and documentation, with the default Twinlog
 *   has always had (broker id 0, loopback listener, a Twinlog log dir) or a bound Twinlog's code needs (a fetch wait
 *   of 0 would spin a fetcher).</li>
 *   <li><b>Twinlog's own keys</b> (ZooKeeper, mirroring, address overrides): documented here.</li>
 * </ul>
 */
final class BrokerConfigDefinitions {
    static final String DEFAULT_LISTENERS = "PLAINTEXT://127.0.0.1:9092";
    static final String DEFAULT_LOG_DIR = "/tmp/twinlog-logs";

    private BrokerConfigDefinitions() {
    }

    static ConfigDef build() {
        ConfigDef def = new ConfigDef();
        defineBroker(def);
        defineZooKeeper(def);
        defineTopicDefaults(def);
        defineLogs(def);
        defineReplication(def);
        defineTransactions(def);
        defineTwinlog(def);
        defineSecurity(def);
        defineMetrics(def);
        defineDashboard(def);
        defineQuotas(def);
        return def;
    }

    /**
     * Listener security with Kafka's keys and Kafka's definitions: the protocol map and inter-broker listener, and
     * every key Kafka's server-side channel builders read (SSL keystores and client auth, SASL mechanisms, JAAS,
     * principal builder), so their values are typed and validated here and Kafka's builders get them as Kafka's
     * broker would give them (ListenerSecurity; issue 13).
     */
    private static void defineSecurity(ConfigDef def) {
        kafka(def, SocketServerConfigs.CONFIG_DEF, BrokerConfig.LISTENER_SECURITY_PROTOCOL_MAP);
        kafka(def, ReplicationConfigs.CONFIG_DEF, BrokerConfig.INTER_BROKER_LISTENER_NAME);
        kafka(def, ReplicationConfigs.CONFIG_DEF, BrokerConfig.SECURITY_INTER_BROKER_PROTOCOL);
        kafka(def, ServerConfigs.CONFIG_DEF, BrokerConfig.AUTHORIZER_CLASS_NAME);
        // the authorizer's own keys: Kafka reads them in StandardAuthorizer.configure, without a ConfigDef
        def.define(BrokerConfig.SUPER_USERS, Type.STRING, "", Importance.MEDIUM, "Principals (User:name, "
                + "semicolon-separated) allowed every operation on every resource whatever the ACLs say, read by "
                + "the authorizer (authorizer.class.name).");
        def.define(BrokerConfig.ALLOW_EVERYONE_IF_NO_ACL_FOUND, Type.BOOLEAN, false, Importance.MEDIUM,
                "With an authorizer: whether a resource no ACL matches is open to everyone (true) or to nobody but "
                        + "the super users (false, Kafka's default).");
        for (ConfigDef.ConfigKey key : BrokerSecurityConfigs.CONFIG_DEF.configKeys().values()) {
            if (!def.names().contains(key.name)) {
                def.define(key);
            }
        }
    }

    /**
     * Metrics with Kafka's keys ({@code metric.reporters}, sampling) and Twinlog's Prometheus endpoint (issue 14):
     * Kafka's {@code JmxReporter} in {@code metric.reporters} exports both metric libraries over JMX
     * ({@code BrokerMetrics}).
     */
    private static void defineMetrics(ConfigDef def) {
        kafka(def, MetricConfigs.CONFIG_DEF, BrokerConfig.METRIC_REPORTERS);
        kafka(def, MetricConfigs.CONFIG_DEF, BrokerConfig.METRICS_NUM_SAMPLES);
        kafka(def, MetricConfigs.CONFIG_DEF, BrokerConfig.METRICS_SAMPLE_WINDOW_MS);
        kafka(def, MetricConfigs.CONFIG_DEF, BrokerConfig.METRICS_RECORDING_LEVEL);
        def.define(BrokerConfig.METRICS_PROMETHEUS_LISTENER, Type.STRING, null, BrokerConfigValidators.httpListener(),
                Importance.MEDIUM, "Where the broker serves its metrics in Prometheus' text format, as "
                        + "http://host:port (the path is /metrics; port 0 picks a free port): the same metrics as "
                        + "JMX, with Prometheus naming (docs/operations.md). Not set: no endpoint.");
    }

    /** The mirror dashboard (issue 14): a web page and JSON API on an HTTP listener of its own, read-only by default. */
    private static void defineDashboard(ConfigDef def) {
        def.define(BrokerConfig.DASHBOARD_LISTENER, Type.STRING, null, BrokerConfigValidators.httpListener(),
                Importance.MEDIUM, "Where the broker serves the mirror dashboard, as http://host:port (the page is "
                        + "/, the JSON API /api/v1/mirrors; port 0 picks a free port): mirrors, partition states, "
                        + "lag charts, the failover and failback commands (docs/operations.md). It has no login of "
                        + "its own for reading: bind it to loopback or a trusted network. Not set: no dashboard.");
        def.define(BrokerConfig.DASHBOARD_ACTIONS_ENABLE, Type.BOOLEAN, false, Importance.MEDIUM,
                "Whether the dashboard offers failover, pause and resume buttons. Each action is sent as a mirror "
                        + "admin request to this broker's inter-broker listener; when that listener uses SASL, "
                        + "the operator's HTTP Basic credentials are the SASL login, so the broker's authorizer "
                        + "decides (docs/operations.md).");
    }

    private static void defineBroker(ConfigDef def) {
        def.define(BrokerConfig.BROKER_ID, Type.INT, 0, Range.atLeast(0), Importance.HIGH,
                "The id of this broker, unique in its cluster. Twinlog keeps cluster metadata in ZooKeeper, where "
                        + "brokers register under this id (Kafka's KRaft brokers use node.id instead).");
        def.define(BrokerConfig.LISTENERS, Type.LIST, DEFAULT_LISTENERS, BrokerConfigValidators.endpoints(),
                Importance.HIGH, SocketServerConfigs.LISTENERS_DOC);
        def.define(BrokerConfig.ADVERTISED_LISTENERS, Type.LIST, null, BrokerConfigValidators.endpoints(),
                Importance.HIGH, SocketServerConfigs.ADVERTISED_LISTENERS_DOC);
        kafka(def, SocketServerConfigs.CONFIG_DEF, BrokerConfig.NUM_NETWORK_THREADS);
        kafka(def, ServerConfigs.CONFIG_DEF, BrokerConfig.NUM_IO_THREADS);
        kafka(def, ServerConfigs.CONFIG_DEF, BrokerConfig.MAX_INCREMENTAL_FETCH_SESSION_CACHE_SLOTS);
        kafka(def, SocketServerConfigs.CONFIG_DEF, BrokerConfig.QUEUED_MAX_REQUESTS);
        kafka(def, SocketServerConfigs.CONFIG_DEF, BrokerConfig.SOCKET_REQUEST_MAX_BYTES);
        kafka(def, SocketServerConfigs.CONFIG_DEF, BrokerConfig.CONNECTIONS_MAX_IDLE_MS);
        def.define(BrokerConfig.SOCKET_SEND_BUFFER_BYTES, Type.INT,
                SocketServerConfigs.SOCKET_SEND_BUFFER_BYTES_DEFAULT, BrokerConfigValidators.socketBufferBytes(),
                Importance.HIGH, SocketServerConfigs.SOCKET_SEND_BUFFER_BYTES_DOC);
        def.define(BrokerConfig.SOCKET_RECEIVE_BUFFER_BYTES, Type.INT,
                SocketServerConfigs.SOCKET_RECEIVE_BUFFER_BYTES_DEFAULT, BrokerConfigValidators.socketBufferBytes(),
                Importance.HIGH, SocketServerConfigs.SOCKET_RECEIVE_BUFFER_BYTES_DOC);
        kafka(def, ServerConfigs.CONFIG_DEF, BrokerConfig.BROKER_RACK);
        kafka(def, ServerConfigs.CONFIG_DEF, BrokerConfig.CONTROLLED_SHUTDOWN_ENABLE);
        def.define(BrokerConfig.CONTROLLED_SHUTDOWN_TIMEOUT_MS, Type.LONG, 30_000L, Range.atLeast(0),
                Importance.MEDIUM, "How long a stopping broker waits for the controller to move its partition "
                        + "leaderships to other in-sync replicas before it stops anyway, in milliseconds.");
        kafka(def, LogConfig.SERVER_CONFIG_DEF, BrokerConfig.NUM_PARTITIONS);
        def.define(BrokerConfig.DEFAULT_REPLICATION_FACTOR, Type.INT, 1, Range.between(1, Short.MAX_VALUE),
                Importance.MEDIUM, ReplicationConfigs.DEFAULT_REPLICATION_FACTOR_DOC);
        kafka(def, LogConfig.SERVER_CONFIG_DEF, BrokerConfig.AUTO_CREATE_TOPICS_ENABLE);
    }

    private static void defineZooKeeper(ConfigDef def) {
        def.define(BrokerConfig.ZOOKEEPER_CONNECT, Type.STRING, null, Importance.HIGH,
                "ZooKeeper connection string (host:port,host:port/chroot) of the ensemble that holds this cluster's "
                        + "metadata. When absent, the broker starts an embedded ZooKeeper server in-process on "
                        + BrokerConfig.ZOOKEEPER_EMBEDDED_PORT + " (for a single-broker or development cluster).");
        def.define(BrokerConfig.ZOOKEEPER_SESSION_TIMEOUT_MS, Type.INT, 18_000, Range.atLeast(1), Importance.HIGH,
                "ZooKeeper session timeout, in milliseconds: a broker whose session expires is taken for dead, "
                        + "and its leaderships move.");
        def.define(BrokerConfig.ZOOKEEPER_CONNECTION_TIMEOUT_MS, Type.INT, 18_000, Range.atLeast(1),
                Importance.HIGH, "How long the broker waits to connect to ZooKeeper at start-up, in milliseconds.");
        def.define(BrokerConfig.ZOOKEEPER_EMBEDDED_PORT, Type.INT, 2181, Range.between(0, 65_535), Importance.LOW,
                "Port of the embedded ZooKeeper server on 127.0.0.1, used when " + BrokerConfig.ZOOKEEPER_CONNECT
                        + " is absent.");
        def.define(BrokerConfig.ZOOKEEPER_EMBEDDED_DATA_DIR, Type.STRING, null, Importance.LOW,
                "Data directory of the embedded ZooKeeper server. Default: a 'zookeeper' directory next to the "
                        + "first log dir (a log dir may only hold partition directories).");
    }

    /** Broker defaults of topic configs, passed on to Kafka's LogConfig as they are: Kafka's definitions. */
    private static void defineTopicDefaults(ConfigDef def) {
        for (String key : List.of(BrokerConfig.LOG_SEGMENT_BYTES, BrokerConfig.LOG_ROLL_MS,
                BrokerConfig.LOG_RETENTION_MS, BrokerConfig.LOG_RETENTION_MINUTES, BrokerConfig.LOG_RETENTION_HOURS,
                BrokerConfig.LOG_RETENTION_BYTES, BrokerConfig.LOG_CLEANUP_POLICY,
                ServerLogConfigs.LOG_INDEX_SIZE_MAX_BYTES_CONFIG, ServerLogConfigs.LOG_INDEX_INTERVAL_BYTES_CONFIG,
                BrokerConfig.LOG_FLUSH_INTERVAL_MESSAGES, BrokerConfig.LOG_FLUSH_INTERVAL_MS,
                ServerLogConfigs.LOG_DELETE_DELAY_MS_CONFIG, ServerLogConfigs.LOG_PRE_ALLOCATE_CONFIG,
                ServerLogConfigs.LOG_MESSAGE_TIMESTAMP_TYPE_CONFIG, BrokerConfig.MIN_INSYNC_REPLICAS)) {
            kafka(def, LogConfig.SERVER_CONFIG_DEF, key);
        }
        for (String key : List.of(BrokerConfig.LOG_CLEANER_BACKOFF_MS,
                CleanerConfig.LOG_CLEANER_DELETE_RETENTION_MS_PROP, CleanerConfig.LOG_CLEANER_MIN_COMPACTION_LAG_MS_PROP,
                CleanerConfig.LOG_CLEANER_MAX_COMPACTION_LAG_MS_PROP, CleanerConfig.LOG_CLEANER_MIN_CLEAN_RATIO_PROP)) {
            kafka(def, CleanerConfig.CONFIG_DEF, key);
        }
        kafka(def, ServerConfigs.CONFIG_DEF, BrokerConfig.MESSAGE_MAX_BYTES);
        kafka(def, ServerConfigs.CONFIG_DEF, BrokerConfig.COMPRESSION_TYPE);
        kafka(def, ReplicationConfigs.CONFIG_DEF, BrokerConfig.UNCLEAN_LEADER_ELECTION_ENABLE);
    }

    private static void defineLogs(ConfigDef def) {
        def.define(BrokerConfig.LOG_DIRS, Type.LIST, null, BrokerConfigValidators.nonEmptyList(), Importance.HIGH,
                ServerLogConfigs.LOG_DIRS_DOC);
        def.define(BrokerConfig.LOG_DIR, Type.LIST, DEFAULT_LOG_DIR, BrokerConfigValidators.nonEmptyList(),
                Importance.HIGH, ServerLogConfigs.LOG_DIR_DOC);
        kafka(def, LogConfig.SERVER_CONFIG_DEF, BrokerConfig.LOG_RETENTION_CHECK_INTERVAL_MS);
        def.define(BrokerConfig.LOG_CLEANER_ENABLE, Type.BOOLEAN, true, Importance.MEDIUM,
                "Run the log cleaner, which compacts topics with cleanup.policy=compact (the consumer offsets topic "
                        + "among them). If disabled, those topics are not compacted and grow without bound.");
        defineCleaner(def);
        def.define(BrokerConfig.LOG_INITIAL_TASK_DELAY_MS, Type.LONG, 10_000L, Range.atLeast(0), Importance.LOW,
                ServerLogConfigs.LOG_INITIAL_TASK_DELAY_MS_DOC + " Twinlog's default is 10 s (Kafka's 30 s).");
    }

    /**
     * The log cleaner's threads and memory: Kafka's definitions, except the dedupe buffer's default. Kafka allocates
     * that buffer on the heap when the cleaner starts (each thread its share), whether or not a topic is compacted.
     */
    private static void defineCleaner(ConfigDef def) {
        for (String key : List.of(BrokerConfig.LOG_CLEANER_THREADS, BrokerConfig.LOG_CLEANER_IO_MAX_BYTES_PER_SECOND,
                BrokerConfig.LOG_CLEANER_IO_BUFFER_SIZE, BrokerConfig.LOG_CLEANER_IO_BUFFER_LOAD_FACTOR)) {
            kafka(def, CleanerConfig.CONFIG_DEF, key);
        }
        ConfigDef.ConfigKey dedupe = kafkaKey(CleanerConfig.CONFIG_DEF, BrokerConfig.LOG_CLEANER_DEDUPE_BUFFER_SIZE);
        def.define(dedupe.name, dedupe.type, 16L << 20, dedupe.validator, dedupe.importance, dedupe.documentation
                + ". Twinlog's default is 16 MiB (Kafka's 128 MiB), since the buffer is heap taken at start-up on "
                + "every broker, compacted topics or not (and several brokers share one JVM in an in-process "
                + "cluster). 16 MiB hold about 600,000 keys per cleaning pass (24 bytes a key, filled to the load "
                + "factor); a partition with more distinct keys is cleaned in more passes. Each cleaner thread needs "
                + "more than 1 MiB of it (Kafka's rule), so 16 MiB allow up to 15 " + BrokerConfig.LOG_CLEANER_THREADS
                + ".");
    }

    /** The transaction coordinator's and the partitions' transaction keys: Kafka's definitions (issue 26). */
    private static void defineTransactions(ConfigDef def) {
        kafka(def, TransactionLogConfig.CONFIG_DEF, BrokerConfig.PRODUCER_ID_EXPIRATION_MS);
        kafka(def, TransactionLogConfig.CONFIG_DEF, BrokerConfig.PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS);
        kafka(def, TransactionStateManagerConfig.CONFIG_DEF, BrokerConfig.TRANSACTION_MAX_TIMEOUT_MS);
        BrokerConfig.TRANSACTION_LOG_KEYS.forEach(k -> kafka(def, TransactionLogConfig.CONFIG_DEF, k));
        BrokerConfig.TRANSACTION_STATE_KEYS.forEach(k -> kafka(def, TransactionStateManagerConfig.CONFIG_DEF, k));
        BrokerConfig.ADD_PARTITIONS_TO_TXN_KEYS.forEach(k -> kafka(def, AddPartitionsToTxnConfig.CONFIG_DEF, k));
    }

    private static void defineReplication(ConfigDef def) {
        def.define(BrokerConfig.REPLICA_LAG_TIME_MAX_MS, Type.LONG, 30_000L, Range.atLeast(1), Importance.HIGH,
                ReplicationConfigs.REPLICA_LAG_TIME_MAX_MS_DOC);
        def.define(BrokerConfig.NUM_REPLICA_FETCHERS, Type.INT, 1, Range.atLeast(1), Importance.HIGH,
                ReplicationConfigs.NUM_REPLICA_FETCHERS_DOC);
        def.define(BrokerConfig.REPLICA_FETCH_WAIT_MAX_MS, Type.INT, 500, Range.atLeast(1), Importance.HIGH,
                ReplicationConfigs.REPLICA_FETCH_WAIT_MAX_MS_DOC);
        def.define(BrokerConfig.REPLICA_FETCH_MIN_BYTES, Type.INT, 1, Range.atLeast(1), Importance.HIGH,
                ReplicationConfigs.REPLICA_FETCH_MIN_BYTES_DOC);
        def.define(BrokerConfig.REPLICA_FETCH_MAX_BYTES, Type.INT, 1_048_576, Range.atLeast(1), Importance.MEDIUM,
                ReplicationConfigs.REPLICA_FETCH_MAX_BYTES_DOC);
        def.define(BrokerConfig.REPLICA_FETCH_RESPONSE_MAX_BYTES, Type.INT, 10_485_760, Range.atLeast(1),
                Importance.MEDIUM, ReplicationConfigs.REPLICA_FETCH_RESPONSE_MAX_BYTES_DOC);
        def.define(BrokerConfig.REPLICA_SOCKET_TIMEOUT_MS, Type.INT, 30_000, Range.atLeast(1), Importance.HIGH,
                ReplicationConfigs.REPLICA_SOCKET_TIMEOUT_MS_DOC);
        def.define(BrokerConfig.FETCH_MAX_BYTES, Type.INT, ServerConfigs.FETCH_MAX_BYTES_DEFAULT, Range.atLeast(1024),
                Importance.MEDIUM, ServerConfigs.FETCH_MAX_BYTES_DOC);
        def.define(BrokerConfig.HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS, Type.LONG, 5_000L, Range.atLeast(1),
                Importance.HIGH, ReplicationConfigs.REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS_DOC);
    }

    private static void defineTwinlog(ConfigDef def) {
        def.define(BrokerConfig.MIRROR_STATE_TIMEOUT_MS, Type.LONG, 60_000L, Range.atLeast(1), Importance.MEDIUM,
                "How long a mirror partition may wait for the controller to raise its leader epoch (EPOCH_FENCING, "
                        + "or a failover whose leader epoch is not yet above the last mirrored epoch), or without a "
                        + "leader on the source, before it goes FAILED with the reason, in milliseconds.");
        def.define(BrokerConfig.ADMIN_QUEUED_MAX_REQUESTS, Type.INT, 100, Range.atLeast(1), Importance.LOW,
                "The number of admin requests (topic, partition, config, ACL and SCRAM changes, elections and "
                        + "reassignments, topic auto-creations) that may wait for the broker's two admin threads, "
                        + "which wait on ZooKeeper and the controller. A request that does not fit is answered "
                        + "REQUEST_TIMED_OUT at once and not executed; the client may retry it.");
        def.define(BrokerConfig.PASSWORD_ENCODER_SECRET, Type.PASSWORD, null, Importance.MEDIUM,
                "The secret that cluster mirrors' secret source configs (passwords, JAAS configs, keys) are encrypted "
                        + "with in ZooKeeper (AES-256-GCM, key derived with PBKDF2-HMAC-SHA512), as Kafka's ZooKeeper "
                        + "brokers encrypted dynamic passwords: the same on every broker. Without it they are stored "
                        + "as given (never shown back by describe, but readable in ZooKeeper).");
        def.define(BrokerConfig.PASSWORD_ENCODER_OLD_SECRET, Type.PASSWORD, null, Importance.LOW,
                "The previous password.encoder.secret while rotating it: values it encrypted still decrypt, and are "
                        + "encrypted with the new secret when their mirror is next changed.");
        def.define(BrokerConfig.INTER_BROKER_ENDPOINT_OVERRIDES, Type.LIST, List.of(),
                BrokerConfigValidators.brokerEndpointOverrides(), Importance.LOW,
                "Addresses to use for other brokers instead of the ones they registered (broker.id=host:port,...): "
                        + "for networks where brokers reach each other through NAT or a proxy, and for tests that "
                        + "put a fault proxy between two brokers.");
    }

    /**
     * Client quota windows with Kafka's keys and definitions (issue 28): the quotas themselves are set per user and
     * client id with {@code kafka-configs} and stored in ZooKeeper; these say over how many windows of how many
     * seconds a rate is measured, for clients and for the replication quota of a mirror's fetchers.
     */
    private static void defineQuotas(ConfigDef def) {
        kafka(def, QuotaConfig.CONFIG_DEF, BrokerConfig.QUOTA_WINDOW_NUM);
        kafka(def, QuotaConfig.CONFIG_DEF, BrokerConfig.QUOTA_WINDOW_SIZE_SECONDS);
        kafka(def, QuotaConfig.CONFIG_DEF, BrokerConfig.REPLICATION_QUOTA_WINDOW_NUM);
        kafka(def, QuotaConfig.CONFIG_DEF, BrokerConfig.REPLICATION_QUOTA_WINDOW_SIZE_SECONDS);
    }

    /** Kafka's definition of {@code name}, as is. */
    private static void kafka(ConfigDef def, ConfigDef kafkaDefinition, String name) {
        def.define(kafkaKey(kafkaDefinition, name));
    }

    private static ConfigDef.ConfigKey kafkaKey(ConfigDef kafkaDefinition, String name) {
        ConfigDef.ConfigKey key = kafkaDefinition.configKeys().get(name);
        if (key == null) {
            throw new IllegalStateException("Kafka no longer defines " + name + "; define it in Twinlog");
        }
        return key;
    }
}
