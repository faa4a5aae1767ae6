package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.Endpoint;
import io.twinlog.common.HttpListener;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.tasks.TaskHealth;
import io.twinlog.controller.Controller;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.zk.ControllerZkClient;
import io.twinlog.controller.zk.EmbeddedZooKeeper;
import io.twinlog.controller.zk.BrokerUnregistration;
import io.twinlog.controller.zk.MetadataStore;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.group.GroupCoordinatorHost;
import io.twinlog.share.ImageShareCoordinatorLocator;
import io.twinlog.share.LatestOffsetsClient;
import io.twinlog.share.ShareCoordinatorHost;
import io.twinlog.share.SharePersister;
import io.twinlog.share.fetch.ShareFetches;
import io.twinlog.share.fetch.ShareSessions;
import io.twinlog.share.partition.LocalSharePartitions;
import io.twinlog.transaction.TransactionCoordinatorHost;
import io.twinlog.transaction.verification.TransactionVerification;
import io.twinlog.transaction.verification.TransactionVerifier;
import io.twinlog.mirror.fetcher.MirrorFetchQuota;
import io.twinlog.mirror.runtime.AppliedTruncations;
import io.twinlog.mirror.runtime.MirrorRuntime;
import io.twinlog.mirror.store.MirrorStore;
import io.twinlog.mirror.store.SecretCodec;
import io.twinlog.protocol.AdminExecutor;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.protocol.ListenerChannels;
import io.twinlog.protocol.RequestChannel;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.protocol.RequestHandlerPool;
import io.twinlog.protocol.RequestMetrics;
import io.twinlog.protocol.SocketServer;
import io.twinlog.replication.ReplicaFetcherManager;
import io.twinlog.replication.ReplicaManager;
import io.twinlog.server.controller.AlterPartitionManager;
import io.twinlog.server.controller.ControllerChannel;
import io.twinlog.server.handlers.AclsHandler;
import io.twinlog.server.handlers.AlterConfigsHandler;
import io.twinlog.server.handlers.AlterPartitionHandler;
import io.twinlog.server.handlers.ApiVersionsHandler;
import io.twinlog.server.handlers.BrokerContext;
import io.twinlog.server.handlers.ClientQuotasHandler;
import io.twinlog.server.handlers.ClusterAuthorized;
import io.twinlog.server.handlers.CreatePartitionsHandler;
import io.twinlog.server.handlers.CreateTopicsHandler;
import io.twinlog.server.handlers.DeleteRecordsHandler;
import io.twinlog.server.handlers.DeleteTopicsHandler;
import io.twinlog.server.handlers.DescribeClusterHandler;
import io.twinlog.server.handlers.DescribeConfigsHandler;
import io.twinlog.server.handlers.DescribeLogDirsHandler;
import io.twinlog.server.handlers.DescribeProducersHandler;
import io.twinlog.server.handlers.DescribeTopicPartitionsHandler;
import io.twinlog.server.handlers.ElectLeadersHandler;
import io.twinlog.server.handlers.FetchHandler;
import io.twinlog.server.handlers.InitProducerIdHandler;
import io.twinlog.server.handlers.ListConfigResourcesHandler;
import io.twinlog.server.handlers.ListOffsetsHandler;
import io.twinlog.server.handlers.MetadataHandler;
import io.twinlog.server.handlers.OffsetsForLeaderEpochHandler;
import io.twinlog.server.handlers.ProduceHandler;
import io.twinlog.server.handlers.ReassignmentsHandler;
import io.twinlog.server.handlers.SaslHandlers;
import io.twinlog.server.handlers.ScramCredentialsHandlers;
import io.twinlog.server.handlers.UnregisterBrokerHandler;
import io.twinlog.server.handlers.WriteTxnMarkersHandler;
import io.twinlog.server.handlers.group.GroupApis;
import io.twinlog.server.handlers.share.ShareStateApis;
import io.twinlog.server.handlers.share.ShareFetchApis;
import io.twinlog.server.handlers.txn.TransactionApis;
import io.twinlog.server.metadata.LostReplicaTracker;
import io.twinlog.server.metadata.LostReplicas;
import io.twinlog.server.metadata.LostReplicasFile;
import io.twinlog.server.metadata.PartitionApplier;
import io.twinlog.server.metrics.BrokerTopicMetrics;
import io.twinlog.server.metrics.NetworkMetrics;
import io.twinlog.server.metrics.PrometheusEndpoint;
import io.twinlog.server.metadata.TopicAdmin;
import io.twinlog.server.metadata.TopicConfigs;
import io.twinlog.server.mirror.BrokerMirrorPartitions;
import io.twinlog.server.mirror.BrokerMirrorTopics;
import io.twinlog.server.mirror.MirrorApiHandlers;
import io.twinlog.server.mirror.MirrorTopicHandlers;
import io.twinlog.server.plugin.DashboardBroker;
import io.twinlog.server.plugin.DashboardFactory;
import io.twinlog.server.security.BrokerAuthorization;
import io.twinlog.server.security.LocalClientConfigs;
import io.twinlog.server.dynamic.DynamicBrokerConfigs;
import io.twinlog.server.groupconfig.GroupConfigPolicy;
import io.twinlog.server.groupconfig.GroupConfigStore;
import io.twinlog.server.dynamic.ListenerReconfiguration;
import io.twinlog.server.dynamic.LogCleanerSettings;
import io.twinlog.server.dynamic.LogDefaults;
import io.twinlog.server.dynamic.ReplicaFetchers;
import io.twinlog.server.dynamic.RequestHandlerThreads;
import io.twinlog.server.quota.BrokerQuotas;
import io.twinlog.server.quota.ClientQuotaStore;
import io.twinlog.server.security.ScramUsers;
import io.twinlog.storage.LogDirIdentity;
import io.twinlog.storage.LogStore;
import io.twinlog.storage.LogStoreConfig;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.security.authenticator.CredentialCache;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.GroupConfig;
import org.apache.kafka.coordinator.group.GroupConfigManager;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfig;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfigProvider;
import org.apache.kafka.metadata.ConfigRepository;
import org.apache.kafka.server.authorizer.Authorizer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One Twinlog broker: wires ZooKeeper metadata, the log store, the replica manager, request handlers and the
 * network server, and runs their lifecycle.
 *
 * <p>Start-up order: the log dirs' identity ({@link LogDirIdentity}: a dir of another broker or cluster refuses the
 * start before anything is loaded, deleted or written), ZooKeeper (embedded when {@code zookeeper.connect} is absent),
 * the cluster id checked against the dirs', metadata image, logs (so topic
 * config overrides are known when logs load), partitions, listeners, and last the broker registration, so clients
 * only learn of a broker that can serve. Shutdown runs in reverse: the registration goes first, logs are flushed
 * and checkpointed (recovery points, high watermarks) before ZooKeeper is closed.
 */
public final class BrokerServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BrokerServer.class);
    /** Admin requests (topic and config changes, forwarded elections) that may wait at once; others queue. */
    private static final int ADMIN_THREADS = 2;
    /** How long one attempt to publish offline log dirs waits for ZooKeeper before the handler retries. */
    private static final long PUBLISH_TIMEOUT_MS = 30_000;
    /** How long one share-group state RPC of the persister may take before it is retried (Kafka's request timeout). */
    private static final int SHARE_PERSISTER_TIMEOUT_MS = 30_000;

    private final BrokerConfig config;
    private final Time time;
    // volatile: close() may run on a shutdown-hook thread while start() is still running
    private volatile EmbeddedZooKeeper embeddedZooKeeper;
    private volatile CuratorFramework zk;
    private volatile MetadataStore store;
    private volatile MetadataWatcher watcher;
    private volatile LogStore logStore;
    private volatile ReplicaManager replicaManager;
    private volatile PartitionApplier applier;
    private volatile AppliedTruncations appliedTruncations;
    /** Replicas lost with a disk, still lost; the registration carries them. */
    private volatile LostReplicaTracker lostTracker;
    private volatile RequestHandlerPool handlerPool;
    private volatile Controller controller;
    private volatile ControllerChannel alterPartitionChannel;
    private volatile ControllerChannel forwardingChannel;
    private volatile AlterPartitionManager alterPartitionManager;
    private volatile MirrorRuntime mirrorRuntime;
    private volatile MirrorTopicHandlers mirrorTopicHandlers;
    private volatile MirrorApiHandlers mirrorApiHandlers;
    private volatile ProducerIdManager producerIds;
    private volatile AdminExecutor adminExecutor;
    private volatile GroupCoordinatorHost groupCoordinator;
    private volatile GroupApis groupApis;
    private volatile GroupConfigStore groupConfigStore;
    private volatile ShareCoordinatorHost shareCoordinator;
    private volatile SharePersister sharePersister;
    private volatile LatestOffsetsClient latestOffsets;
    private volatile ShareStateApis shareStateApis;
    private volatile LocalSharePartitions sharePartitions;
    private volatile ShareFetches shareFetches;
    private volatile ShareSessions shareSessions;
    private volatile TransactionCoordinatorHost transactionCoordinator;
    private volatile TransactionVerifier transactionVerifier;
    private volatile TransactionVerification transactionVerification;
    private volatile TransactionApis transactionApis;
    private volatile LogDirFailureHandler logDirFailureHandler;
    private volatile ScramUsers scramUsers;
    private volatile BrokerQuotas quotas;
    private volatile ClientQuotaStore clientQuotas;
    private volatile DynamicBrokerConfigs dynamicConfigs;
    private volatile BrokerAuthorization authorization;
    private volatile BrokerMetrics metrics;
    /** The dashboard module's factory, looked up before anything starts; null without {@code dashboard.listener}. */
    private volatile DashboardFactory dashboardFactory;
    private volatile DashboardFactory.Dashboard dashboard;
    private volatile PrometheusEndpoint prometheus;
    private final List<SocketServer> socketServers = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Map<String, Integer> boundPorts = new LinkedHashMap<>();
    /** This broker's registration in ZooKeeper, kept on every session; null until the listeners are bound. */
    private volatile BrokerRegistrar registrar;
    /** Offline log dirs and replicas published before the registrar exists; the first registration carries them. */
    private final Object offlineLock = new Object();
    private List<String> offlineLogDirs = List.of(); // guarded by offlineLock
    private Set<TopicIdPartition> offlineReplicas = Set.of(); // guarded by offlineLock
    private volatile boolean started;
    private volatile boolean stoppedOnFatalError;
    private final CountDownLatch shutdownComplete = new CountDownLatch(1);
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

    public BrokerServer(BrokerConfig config, Time time) {
        this.config = config;
        this.time = time;
    }

    /** Kafka's rule for a cluster-wide API: {@code operation} on the cluster first. */
    private RequestHandler cluster(AclOperation operation, RequestHandler handler) {
        return ClusterAuthorized.require(authorization, operation, handler);
    }

    /** This broker's metrics (JMX, Prometheus); null before {@link #start}. */
    public BrokerMetrics metrics() {
        return metrics;
    }

    public void start() throws Exception {
        long startMs = time.milliseconds();
        log.info("Starting Twinlog broker {} with configuration {}", config.brokerId(), config.loggable());
        BrokerConfigCheck.validateHostedKeys(config);
        BrokerConfigCheck.undefinedKeysWarning(config).ifPresent(log::warn);
        // a dashboard configured but not installed is refused before anything starts, in one line
        if (config.dashboardListener().isPresent()) {
            dashboardFactory = DashboardFactory.load(BrokerServer.class.getClassLoader());
        }
        metrics = config.newMetrics(time);
        quotas = new BrokerQuotas(config.quotaWindowNum(), config.quotaWindowSizeSeconds(), metrics.kafkaMetrics(),
                time, config.brokerId());
        // before ZooKeeper and before any log is loaded: a dir of another broker is refused with nothing touched
        LogDirIdentity identity = LogDirIdentity.load(config.logDirs());
        identity.checkBrokerId(config.brokerId());
        String connect;
        String zooKeeperName;
        if (config.zookeeperConnect().isPresent()) {
            connect = config.zookeeperConnect().get();
            zooKeeperName = "ZooKeeper at " + connect;
        } else {
            embeddedZooKeeper = EmbeddedZooKeeper.start(config.zookeeperEmbeddedDataDir(), config.zookeeperEmbeddedPort());
            connect = embeddedZooKeeper.connectString();
            log.info("zookeeper.connect is not set: using an embedded ZooKeeper at {} (data in {})", connect,
                    config.zookeeperEmbeddedDataDir());
            zooKeeperName = "the embedded ZooKeeper at " + connect + " (zookeeper.connect is not set; data in "
                    + config.zookeeperEmbeddedDataDir() + ")";
        }
        zk = CuratorFrameworkFactory.builder().connectString(connect)
                .sessionTimeoutMs(config.zookeeperSessionTimeoutMs())
                .connectionTimeoutMs(config.zookeeperConnectionTimeoutMs())
                .retryPolicy(new ExponentialBackoffRetry(100, 10, 2_000)).build();
        zk.start();
        if (!zk.blockUntilConnected(config.zookeeperConnectionTimeoutMs(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("Could not connect to ZooKeeper at " + connect + " within "
                    + config.zookeeperConnectionTimeoutMs() + " ms");
        }
        abortIfClosed();
        store = new MetadataStore(zk);
        String clusterId = joinCluster(identity, zooKeeperName);
        log.info("Connected to ZooKeeper at {}; cluster ID {}", connect, clusterId);
        // the dynamic broker configs before any part is built: each is built with them, nothing resized at start
        dynamicConfigs = new DynamicBrokerConfigs(zk, config);
        dynamicConfigs.start(config.zookeeperSessionTimeoutMs());
        BrokerConfig startConfig = dynamicConfigs.current();

        abortIfClosed();
        watcher = new MetadataWatcher(zk, clusterId, config.brokerId());
        metrics.backgroundTasks().register(watcher.resyncTask());
        watcher.start();

        abortIfClosed();
        ConfigRepository topicConfigRepository = this::configFor;
        logStore = new LogStore(logStoreConfig(startConfig), topicConfigRepository, time);
        logStore.startup();
        dynamicConfigs.register(new LogDefaults(logStore));
        dynamicConfigs.register(new LogCleanerSettings(logStore));
        logStore.backgroundTasks().forEach(metrics.backgroundTasks()::register);
        String interBrokerListener = config.listenerSecurity().interBrokerListener();
        // the registry comes later; a SASL client asks for ApiVersions only once the listeners serve
        AtomicReference<ApiRegistry> registryRef = new AtomicReference<>();
        CredentialCache credentials = ListenerChannels.newCredentialCache();
        scramUsers = new ScramUsers(zk, credentials);
        scramUsers.start();
        // read before the listeners open: a client's first request is already held to its quotas
        clientQuotas = new ClientQuotaStore(zk, quotas);
        clientQuotas.start(config.zookeeperSessionTimeoutMs());
        ListenerChannels channels = new ListenerChannels(startConfig, credentials,
                version -> ApiVersionsHandler.beforeAuthentication(registryRef.get(), watcher.image().features()),
                time);
        // waits up to a session timeout for brokers re-registering after a ZooKeeper outage (ReregistrationGrace)
        controller = new Controller(config.brokerId(), new ControllerZkClient(zk), this::uncleanElectionEnabled,
                config.zookeeperSessionTimeoutMs(), time);
        zk.getConnectionStateListenable().addListener((client, state) -> {
            if (state == ConnectionState.LOST) {
                controller.onSessionLost();
            } else if (state == ConnectionState.RECONNECTED) {
                controller.onReconnected();
            }
        });
        controller.enableMetrics(metrics);
        controller.setHousekeeping(store::resumeTopicDeletions); // a deletion its broker's crash cut short
        // first listener: the controller decides from the images the metadata thread delivers
        controller.onImage(watcher.image());
        watcher.addListener((previous, next, delta) -> controller.onImage(next));
        // ISR changes on a channel of their own: never behind a forwarded election waiting for its answer
        alterPartitionChannel = new ControllerChannel(ControllerChannel.ALTER_PARTITION, config.brokerId(),
                () -> watcher.image().controllerId(),
                id -> brokerNode(id, interBrokerListener), config.replicaSocketTimeoutMs(), channels::interBroker,
                time);
        forwardingChannel = new ControllerChannel(ControllerChannel.FORWARDING, config.brokerId(),
                () -> watcher.image().controllerId(),
                id -> brokerNode(id, interBrokerListener), config.replicaSocketTimeoutMs(), channels::interBroker,
                time);
        alterPartitionManager = new AlterPartitionManager(config.brokerId(), this::brokerEpoch, watcher, controller,
                alterPartitionChannel);
        ReplicaFetcherManager fetcherManager = new ReplicaFetcherManager(config.brokerId(),
                id -> brokerNode(id, interBrokerListener), this::brokerEpoch, startConfig.numReplicaFetchers(),
                config.replicaFetchWaitMaxMs(),
                config.replicaFetchMinBytes(), config.replicaFetchResponseMaxBytes(), config.replicaFetchMaxBytes(),
                config.replicaSocketTimeoutMs(), channels::interBroker, time);
        dynamicConfigs.register(new ReplicaFetchers(fetcherManager));
        replicaManager = new ReplicaManager(config.brokerId(), logStore, fetcherManager, alterPartitionManager,
                config.replicaLagTimeMaxMs(), time);
        replicaManager.enableMetrics(metrics);
        // mirror partitions keep the source's leader-epoch history until failover
        replicaManager.setSourceEpochPolicy(tp -> watcher.image().mirrors().keepsSourceEpochs(tp));
        logDirFailureHandler = new LogDirFailureHandler(config.brokerId(), logStore, replicaManager,
                this::publishOffline, this::shutdownOnFatalError);
        logDirFailureHandler.start();

        TopicConfigs topicConfigs = new TopicConfigs(dynamicConfigs::current, dynamicConfigs::sourceOf);
        appliedTruncations = new AppliedTruncations(config.brokerId(), zk);
        // before the applier leads anything and before the registration: what this broker lost with its disk
        lostTracker = new LostReplicaTracker(config.brokerId(), new LostReplicasFile(
                config.brokerId(), logStore.liveLogDirs().stream().map(File::new).sorted().toList()),
                this::publishLost);
        lostTracker.findAtStart(watcher.image(), this::hasLog);
        watcher.addListener(lostTracker::onImage);
        applier = new PartitionApplier(config.brokerId(), clusterId, replicaManager, logStore, topicConfigs,
                appliedTruncations, lostTracker);
        watcher.addListener(applier::onImage);
        // after the applier: the coordinator follows the leaderships the applier has just applied
        // before the group coordinator: it resolves regex subscriptions with the authorizer
        authorization = BrokerAuthorization.start(config, zk, metrics);
        producerIds = new ProducerIdManager(config.brokerId(), store);
        // KIP-890: partition leaders (produce, transactional offset commits) ask coordinators before a transaction's
        // first write to a partition
        int transactionRequestTimeoutMs = config.transactionConfig().requestTimeoutMs();
        transactionVerifier = new TransactionVerifier(config.brokerId(), watcher::image,
                id -> brokerNode(id, interBrokerListener), channels::interBroker, transactionRequestTimeoutMs, time);
        transactionVerification = new TransactionVerification(config.brokerId(), replicaManager, transactionVerifier,
                config.transactionLogConfig().transactionPartitionVerificationEnable(),
                config.addPartitionsToTxnConfig().addPartitionsToTxnRetryBackoffMs(),
                Math.min(config.addPartitionsToTxnConfig().addPartitionsToTxnRetryBackoffMaxMs(),
                        transactionRequestTimeoutMs), time);
        // before the group coordinator: share groups' state goes through the persister to the share coordinators
        shareCoordinator = new ShareCoordinatorHost(config.brokerId(), config.originals(), replicaManager, metrics,
                time);
        watcher.addListener((previous, next, delta) -> shareCoordinator.onImage(previous, next));
        sharePersister = new SharePersister(config.brokerId(),
                channels.interBroker("twinlog-share-persister-" + config.brokerId()),
                new ImageShareCoordinatorLocator(watcher::image, shareCoordinator,
                        id -> brokerNode(id, interBrokerListener)), SHARE_PERSISTER_TIMEOUT_MS, time);
        latestOffsets = new LatestOffsetsClient(config.brokerId(), replicaManager, watcher::image,
                id -> brokerNode(id, interBrokerListener),
                channels.interBroker("twinlog-latest-offsets-" + config.brokerId()), SHARE_PERSISTER_TIMEOUT_MS, time);
        groupCoordinator = new GroupCoordinatorHost(config.brokerId(), config.originals(), replicaManager,
                authorization.authorizer().map(Authorizer.class::cast), transactionVerification::verifyOffsetCommit,
                sharePersister.persister(), latestOffsets, metrics, time);
        watcher.addListener((previous, next, delta) -> groupCoordinator.onImage(previous, next));
        // share partitions on their leaders: the in-flight records of ShareFetch/ShareAcknowledge, kept through the
        // persister; a share session per member on each leader it fetches from
        ShareGroupConfig shareGroupConfig = ShareGroupConfig.fromProps(config.originals());
        GroupConfigManager groupConfigs = groupCoordinator.groupConfigs();
        ShareGroupConfigProvider shareGroupConfigs = new ShareGroupConfigProvider(groupConfigs);
        sharePartitions = new LocalSharePartitions(config.brokerId(), replicaManager, sharePersister.persister(),
                shareGroupConfigs, shareGroupConfig, time, group -> groupConfigs.groupConfig(group)
                        .flatMap(GroupConfig::shareIsolationLevel).orElse(GroupConfig.defaultShareIsolationLevel()));
        watcher.addListener((previous, next, delta) -> sharePartitions.onImage(previous, next));
        shareFetches = new ShareFetches(config.brokerId(), replicaManager, sharePartitions,
                shareGroupConfig.shareFetchPurgatoryPurgeIntervalRequests());
        shareSessions = new ShareSessions(config.brokerId(), shareGroupConfig.shareGroupMaxShareSessions(),
                sharePartitions);
        watcher.addListener((previous, next, delta) -> {
            if (previous.features().shareGroupsEnabled() && !next.features().shareGroupsEnabled()) {
                shareSessions.removeAll(); // share.version back to 0: no session outlives share groups
            }
        });
        // per-group configs into the coordinator's GroupConfigManager, read before the broker serves
        groupConfigStore = new GroupConfigStore(zk, groupCoordinator.groupConfigs(),
                new GroupConfigPolicy(groupCoordinator.config(), config.originals()));
        groupConfigStore.start(config.zookeeperSessionTimeoutMs());
        transactionCoordinator = new TransactionCoordinatorHost(config.brokerId(), config.transactionConfig(),
                replicaManager, producerIds, id -> brokerNode(id, interBrokerListener), channels::interBroker, time);
        watcher.addListener((previous, next, delta) -> transactionCoordinator.onImage(previous, next));
        watcher.refresh(60_000);

        TopicAdmin topicAdmin = new TopicAdmin(store, watcher, topicConfigs, new SecureRandom());
        if (authorization.enabled()) {
            log.info("{} authorizes every request with the ACLs kept in ZooKeeper (super users: {})",
                    config.authorizerClassName(), config.get(BrokerConfig.SUPER_USERS).orElse("none"));
        }
        BrokerTopicMetrics topicMetrics = new BrokerTopicMetrics(metrics);
        watcher.addListener((previous, next, delta) -> delta.deletedTopics().forEach(topicMetrics::removeTopic));
        BrokerContext ctx = new BrokerContext(config, watcher, replicaManager, logStore, topicAdmin, topicConfigs,
                producerIds, authorization, topicMetrics, transactionVerification, quotas, time);
        adminExecutor = new AdminExecutor("twinlog-admin-" + config.brokerId(), ADMIN_THREADS,
                config.adminQueuedMaxRequests());
        AlterConfigsHandler alterConfigs = new AlterConfigsHandler(ctx, dynamicConfigs, groupConfigStore);
        ReassignmentsHandler reassignments = new ReassignmentsHandler(ctx, controller, forwardingChannel);
        ApiRegistry.Builder registryBuilder = ApiRegistry.builder();
        ScramCredentialsHandlers scram = new ScramCredentialsHandlers(scramUsers);
        ClientQuotasHandler clientQuotasHandler = new ClientQuotasHandler(clientQuotas);
        AclsHandler acls = new AclsHandler(authorization);
        MirrorStore mirrorStore = new MirrorStore(zk, config.passwordEncoderSecret()
                .map(secret -> new SecretCodec(secret, config.passwordEncoderOldSecret())));
        mirrorRuntime = new MirrorRuntime(config.brokerId(), mirrorStore, zk, watcher,
                new BrokerMirrorPartitions(replicaManager),
                new BrokerMirrorTopics(topicAdmin, config.numPartitions(), config.defaultReplicationFactor(),
                        () -> watcher.image().brokers().size()),
                controller::isActive, () -> LocalClientConfigs.of(config, watcher.image(), config.brokerId()),
                config.mirrorStateTimeoutMs(), new MirrorFetchQuota.Windows(config.replicationQuotaWindowNum(),
                        config.replicationQuotaWindowSizeSeconds()), metrics, time);
        mirrorApiHandlers = new MirrorApiHandlers(mirrorStore, watcher, authorization, config.brokerId());
        mirrorApiHandlers.register(registryBuilder);
        mirrorTopicHandlers = new MirrorTopicHandlers(mirrorStore, watcher, mirrorRuntime.topicStarter(),
                authorization);
        mirrorTopicHandlers.register(registryBuilder);
        transactionApis = new TransactionApis(transactionCoordinator, topicAdmin, watcher::image, authorization, time);
        transactionApis.register(registryBuilder, groupCoordinator::partitionFor);
        shareStateApis = new ShareStateApis(shareCoordinator, topicAdmin, watcher::image, authorization, time);
        shareStateApis.register(registryBuilder);
        new ShareFetchApis(shareSessions, shareFetches, sharePartitions, shareGroupConfigs, shareGroupConfig,
                watcher::image, authorization, quotas, config.fetchMaxBytes()).register(registryBuilder);
        groupApis = new GroupApis(groupCoordinator, topicAdmin, watcher::image, authorization,
                transactionApis.finder(), shareStateApis.finder(), time);
        groupApis.register(registryBuilder);
        ApiRegistry registry = registryBuilder
                .add(ApiKeys.API_VERSIONS, new ApiVersionsHandler(registryRef::get, () -> watcher.image().features()))
                .add(ApiKeys.METADATA, new MetadataHandler(ctx, adminExecutor::execute))
                // from v0 as Kafka advertises it (KAFKA-18659); v0-2 close the connection on arrival (Processor)
                .add(ApiKeys.PRODUCE, ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION, ApiKeys.PRODUCE.latestVersion(false),
                        new ProduceHandler(ctx))
                .add(ApiKeys.FETCH, new FetchHandler(ctx))
                .add(ApiKeys.LIST_OFFSETS, new ListOffsetsHandler(ctx))
                .add(ApiKeys.OFFSET_FOR_LEADER_EPOCH, new OffsetsForLeaderEpochHandler(ctx))
                .add(ApiKeys.INIT_PRODUCER_ID, new InitProducerIdHandler(ctx, transactionApis.initProducerId()))
                .add(ApiKeys.DESCRIBE_PRODUCERS, new DescribeProducersHandler(ctx))
                .add(ApiKeys.WRITE_TXN_MARKERS, ClusterAuthorized.requireAlterOrClusterAction(authorization,
                        new WriteTxnMarkersHandler(ctx, groupCoordinator)))
                // topic and config changes wait for ZooKeeper and the image: never on a request thread
                .add(ApiKeys.CREATE_TOPICS, adminExecutor.offRequestThreads(new CreateTopicsHandler(ctx)))
                .add(ApiKeys.DELETE_TOPICS, adminExecutor.offRequestThreads(new DeleteTopicsHandler(ctx)))
                .add(ApiKeys.CREATE_PARTITIONS, adminExecutor.offRequestThreads(new CreatePartitionsHandler(ctx)))
                .add(ApiKeys.DESCRIBE_CONFIGS, new DescribeConfigsHandler(ctx, dynamicConfigs, groupConfigStore))
                .add(ApiKeys.DELETE_RECORDS, new DeleteRecordsHandler(ctx))
                .add(ApiKeys.DESCRIBE_LOG_DIRS, cluster(AclOperation.DESCRIBE, new DescribeLogDirsHandler(ctx)))
                .add(ApiKeys.INCREMENTAL_ALTER_CONFIGS, adminExecutor.offRequestThreads(alterConfigs.incremental()))
                .add(ApiKeys.ALTER_CONFIGS, adminExecutor.offRequestThreads(alterConfigs.legacy()))
                .add(ApiKeys.DESCRIBE_CLUSTER, new DescribeClusterHandler(ctx))
                .add(ApiKeys.LIST_CONFIG_RESOURCES, cluster(AclOperation.DESCRIBE_CONFIGS,
                        new ListConfigResourcesHandler(ctx, groupConfigStore)))
                .add(ApiKeys.DESCRIBE_TOPIC_PARTITIONS, new DescribeTopicPartitionsHandler(ctx))
                .add(ApiKeys.ALTER_PARTITION, cluster(AclOperation.CLUSTER_ACTION, new AlterPartitionHandler(ctx, controller)))
                // on a broker that is not the controller these forward to it, and wait for its answer
                .add(ApiKeys.ELECT_LEADERS, cluster(AclOperation.ALTER, adminExecutor.offRequestThreads(
                        new ElectLeadersHandler(ctx, controller, forwardingChannel))))
                .add(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, cluster(AclOperation.ALTER,
                        adminExecutor.offRequestThreads(reassignments.alter())))
                .add(ApiKeys.LIST_PARTITION_REASSIGNMENTS, cluster(AclOperation.DESCRIBE, reassignments.list()))
                .add(ApiKeys.DESCRIBE_ACLS, acls.describe())
                .add(ApiKeys.CREATE_ACLS, adminExecutor.offRequestThreads(acls.create()))
                .add(ApiKeys.DELETE_ACLS, adminExecutor.offRequestThreads(acls.delete()))
                .add(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, cluster(AclOperation.DESCRIBE, scram.describe()))
                .add(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, cluster(AclOperation.ALTER,
                        adminExecutor.offRequestThreads(scram.alter())))
                .add(ApiKeys.UNREGISTER_BROKER, cluster(AclOperation.ALTER, adminExecutor.offRequestThreads(
                        new UnregisterBrokerHandler(new BrokerUnregistration(store.client()), watcher::image))))
                .add(ApiKeys.DESCRIBE_CLIENT_QUOTAS, cluster(AclOperation.DESCRIBE_CONFIGS,
                        clientQuotasHandler.describe()))
                .add(ApiKeys.ALTER_CLIENT_QUOTAS, cluster(AclOperation.ALTER_CONFIGS,
                        adminExecutor.offRequestThreads(clientQuotasHandler.alter())))
                .add(ApiKeys.SASL_HANDSHAKE, SaslHandlers.handshake())
                .add(ApiKeys.SASL_AUTHENTICATE, SaslHandlers.authenticate())
                .build();
        registryRef.set(registry);

        abortIfClosed();
        RequestChannel channel = new RequestChannel(config.queuedMaxRequests());
        RequestMetrics requestMetrics = new RequestMetrics(metrics);
        NetworkMetrics.register(metrics, channel);
        handlerPool = new RequestHandlerPool(config.brokerId(), startConfig.numIoThreads(), channel, registry,
                metrics);
        for (Endpoint ep : config.listeners()) {
            SocketServer server;
            try {
                server = new SocketServer(config.brokerId(), ep, startConfig.numNetworkThreads(),
                        config.socketRequestMaxBytes(), config.connectionsMaxIdleMs(),
                        new SocketServer.SocketBuffers(config.socketSendBufferBytes(),
                                config.socketReceiveBufferBytes()), channel, time,
                        registry::isCustomApi, channels, metrics, requestMetrics, quotas);
            } catch (KafkaException e) {
                // Kafka's builders wrap the cause (a keystore that cannot be read, a JAAS section missing): say it
                throw new ConfigException("listener " + ep.listenerName() + ": " + innermostMessage(e));
            }
            server.bind();
            server.addDisconnectListener(shareSessions.disconnectListener()); // ends a vanished member's session
            socketServers.add(server);
            dynamicConfigs.register(new ListenerReconfiguration(ep.listenerName(), server, channels));
            boundPorts.put(ep.listenerName(), server.boundPort());
        }
        dynamicConfigs.register(new RequestHandlerThreads(handlerPool));
        handlerPool.start();
        socketServers.forEach(SocketServer::startProcessing);

        abortIfClosed();
        synchronized (offlineLock) {
            registrar = new BrokerRegistrar(config.brokerId(), store, new BrokerRegistration(config.brokerId(),
                    advertisedEndpoints(), config.get("broker.rack")).withOffline(offlineLogDirs, offlineReplicas)
                    .withLost(lostTracker.current().replicas()));
        }
        registrar.register(zk, config.zookeeperSessionTimeoutMs() * 2L);
        metrics.backgroundTasks().register(registrar.liveness());
        watcher.awaitApplied("broker " + config.brokerId() + " registered",
                image -> image.brokers().containsKey(config.brokerId()), 60_000);
        alterPartitionManager.start();
        controller.start();
        mirrorRuntime.start();
        startDashboard();
        if (config.prometheusListener().isPresent()) {
            prometheus = startPrometheus(config.prometheusListener().get());
        }
        started = true;
        log.info("Twinlog broker {} started in {} ms, serving {} on cluster {}", config.brokerId(),
                time.milliseconds() - startMs, registrar.wanted().endpoints(), clusterId);
    }

    private PrometheusEndpoint startPrometheus(HttpListener listener) {
        try {
            return PrometheusEndpoint.start(listener, metrics);
        } catch (IOException e) {
            throw new ConfigException(BrokerConfig.METRICS_PROMETHEUS_LISTENER + ": cannot serve on "
                    + listener.host() + ":" + listener.port() + ": " + e.getMessage());
        }
    }

    /** Where this broker serves its metrics for Prometheus, when it does. */
    public Optional<String> prometheusUrl() {
        return Optional.ofNullable(prometheus).map(PrometheusEndpoint::url);
    }

    /** The mirror dashboard on {@code dashboard.listener}, after the mirror runtime (it describes the mirrors). */
    private void startDashboard() throws IOException {
        if (config.dashboardListener().isEmpty()) {
            return;
        }
        String clientListener = config.advertisedListeners().get(0).listenerName();
        dashboard = dashboardFactory.start(config.dashboardListener().get(), config.dashboardActionsEnable(),
                new DashboardBroker() {
                    @Override
                    public int brokerId() {
                        return config.brokerId();
                    }

                    @Override
                    public MetadataImage image() {
                        return watcher.image();
                    }

                    @Override
                    public String clientListener() {
                        return clientListener;
                    }

                    @Override
                    public Optional<Map<String, Object>> localClientConfigs() {
                        return LocalClientConfigs.of(config, watcher.image(), config.brokerId());
                    }

                    @Override
                    public boolean authorizerEnabled() {
                        return authorization.enabled();
                    }

                    @Override
                    public List<TaskHealth> backgroundTasks() {
                        return metrics.backgroundTasks().health();
                    }
                }, metrics.registry(), time);
    }

    /** The mirror dashboard's URL ({@code dashboard.listener}); empty when it is off or not started. */
    public Optional<String> dashboardUrl() {
        return Optional.ofNullable(dashboard).map(DashboardFactory.Dashboard::url);
    }

    /** Whether this broker holds a log of the partition, of that topic ID (a log of an earlier topic is not it). */
    private boolean hasLog(TopicIdPartition partition) {
        return logStore.log(partition.topicPartition())
                .map(l -> l.topicId().map(partition.topicId()::equals).orElse(true)).orElse(false);
    }

    /**
     * The lost replicas left, in the registration (on the metadata thread: the ZooKeeper write is not waited for,
     * its failure logged; the registrar writes the registration it wants again on every new session).
     */
    private void publishLost(LostReplicas lost) {
        BrokerRegistrar current;
        synchronized (offlineLock) { // against the registrar's creation, which reads the tracker's current set
            current = registrar;
        }
        if (current != null) {
            current.update(r -> r.withLost(lost.replicas())).whenComplete((ok, e) -> {
                if (e != null) {
                    log.error("Could not update the lost replicas in broker {}'s registration", config.brokerId(), e);
                }
            });
        }
    }

    private void abortIfClosed() {
        if (closed.get()) {
            throw new IllegalStateException("Broker " + config.brokerId() + " was shut down during start-up");
        }
    }

    /**
     * Publishes this broker's failed log dirs and offline replicas in its registration, so the controller moves
     * leadership and ISR membership away from them (on the log dir failure handler thread). Before the broker has
     * registered they are only remembered: the registration is created with them.
     */
    private void publishOffline(List<String> logDirs, Set<TopicIdPartition> replicas) throws Exception {
        BrokerRegistrar current;
        synchronized (offlineLock) {
            offlineLogDirs = List.copyOf(logDirs);
            offlineReplicas = Set.copyOf(replicas);
            current = registrar;
        }
        if (current != null) {
            // waits for ZooKeeper on the log dir failure thread, holding no lock; a timeout is retried by the caller
            current.update(r -> r.withOffline(List.copyOf(logDirs), Set.copyOf(replicas)))
                    .get(PUBLISH_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
    }

    /** Every log dir failed: stops the broker on a thread of its own (the caller is one of the threads it stops). */
    private void shutdownOnFatalError() {
        stoppedOnFatalError = true;
        Thread t = new Thread(this::close, "twinlog-fatal-shutdown-" + config.brokerId());
        t.start();
    }

    private boolean uncleanElectionEnabled(String topic) {
        String v = watcher.image().topicConfig(topic).get("unclean.leader.election.enable");
        // the broker default may have changed live (unclean.leader.election.enable is a dynamic config)
        BrokerConfig now = dynamicConfigs == null ? config : dynamicConfigs.current();
        return v == null ? now.uncleanLeaderElectionEnable() : Boolean.parseBoolean(v.trim());
    }

    /** This broker's epoch: the creation zxid of its registration (-1 before it is registered). */
    private long brokerEpoch() {
        BrokerRegistration b = watcher.image().brokers().get(config.brokerId());
        return b == null ? -1L : b.brokerEpoch();
    }

    private Optional<Node> brokerNode(int id, String listenerName) {
        Endpoint override = config.interBrokerEndpointOverrides().get(id);
        if (override != null) {
            return Optional.of(new Node(id, override.host(), override.port()));
        }
        BrokerRegistration b = watcher.image().brokers().get(id);
        if (b == null) {
            return Optional.empty();
        }
        return b.endpoint(listenerName).map(e -> new Node(id, e.host(), e.port()));
    }

    /**
     * Controlled shutdown: announce it in the registration and wait (bounded) until the controller has moved every
     * leadership that another in-sync replica can take, so producers and consumers fail over before the broker
     * stops instead of after a session timeout.
     */
    private void controlledShutdown() {
        if (!config.controlledShutdownEnable() || registrar == null || store == null || watcher == null) {
            return;
        }
        long start = time.milliseconds();
        long timeoutMs = config.controlledShutdownTimeoutMs();
        log.info("Controlled shutdown of broker {}: asking the controller to move its leaderships (up to {} ms)",
                config.brokerId(), timeoutMs);
        try {
            CompletableFuture<Void> announced = registrar.update(r -> r.withShuttingDown(true));
            // bounded: with ZooKeeper unreachable, Curator would retry the write for minutes
            announced.get(timeoutMs, TimeUnit.MILLISECONDS);
            watcher.awaitApplied("leaderships moved off broker " + config.brokerId(), image ->
                    image.topics().values().stream().flatMap(t -> t.partitions().values().stream())
                            .noneMatch(p -> p.leader() == config.brokerId() && p.isr().stream()
                                    .anyMatch(r -> r != config.brokerId() && image.brokers().containsKey(r))),
                    Math.max(0, timeoutMs - (time.milliseconds() - start)));
            log.info("Controlled shutdown of broker {}: leaderships moved in {} ms", config.brokerId(),
                    time.milliseconds() - start);
        } catch (TimeoutException e) {
            log.warn("Controlled shutdown of broker {}: ZooKeeper did not record it within {} ms (unreachable?); "
                    + "stopping anyway: its partitions move once its ZooKeeper session expires", config.brokerId(),
                    timeoutMs);
        } catch (Exception e) {
            log.warn("Controlled shutdown of broker {} incomplete after {} ms ({}); stopping anyway",
                    config.brokerId(), time.milliseconds() - start, e.toString());
        }
    }

    private static String innermostMessage(Throwable e) {
        String message = e.getMessage();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null) {
                message = t.getMessage();
            }
        }
        return message;
    }

    private List<Endpoint> advertisedEndpoints() {
        List<Endpoint> out = new ArrayList<>();
        for (Endpoint ep : config.advertisedListeners()) {
            int port = ep.port() == 0 ? boundPorts.getOrDefault(ep.listenerName(), 0) : ep.port();
            String host = ep.host().isEmpty() || ep.host().equals("0.0.0.0") ? "127.0.0.1" : ep.host();
            out.add(new Endpoint(ep.listenerName(), host, port));
        }
        return out;
    }

    private Properties configFor(ConfigResource resource) {
        Properties p = new Properties();
        if (resource.type() == ConfigResource.Type.TOPIC && watcher != null) {
            p.putAll(watcher.image().topicConfig(resource.name()));
        }
        return p;
    }

    /**
     * The cluster this broker belongs to. Log dirs that record a cluster id are checked against ZooKeeper's before
     * anything is written there: a ZooKeeper without {@code /cluster/id} (an empty ensemble or chroot) is refused
     * rather than given a new cluster only to refuse it then, as a ZooKeeper-mode Kafka broker would (it creates the
     * id, then throws InconsistentClusterIdException). Only dirs with no identity let the broker create the cluster.
     * Dirs without {@code meta.properties} get one once the id is known.
     */
    private String joinCluster(LogDirIdentity identity, String zooKeeperName) throws Exception {
        String clusterId;
        if (identity.clusterId().isPresent()) {
            identity.checkClusterId(store.clusterId(), zooKeeperName);
            clusterId = identity.clusterId().get();
            store.ensureLayout();
        } else {
            store.ensureLayout();
            clusterId = store.getOrCreateClusterId();
        }
        identity.writeMissing(clusterId, config.brokerId());
        return clusterId;
    }

    /** The log store as {@code c} (the start-up configuration, dynamic configs included) says. */
    private static LogStoreConfig logStoreConfig(BrokerConfig c) {
        return new LogStoreConfig(c.brokerId(), c.logDirs(), c.defaultTopicConfigs(),
                c.logRetentionCheckIntervalMs(), Math.min(c.logFlushIntervalMs(), 60_000L),
                c.highWatermarkCheckpointIntervalMs(), c.logCleanerEnable(),
                LogStoreConfig.CleanerSettings.from(c),
                c.producerIdExpirationMs(), c.producerIdExpirationCheckIntervalMs(),
                c.transactionMaxTimeoutMs(),
                c.transactionLogConfig().transactionPartitionVerificationEnable(), 4,
                c.logInitialTaskDelayMs());
    }

    public int brokerId() {
        return config.brokerId();
    }

    public BrokerConfig config() {
        return config;
    }

    /** Failed authentications on every listener since start-up (issue 13, point 7; exported with issue 14). */
    public long failedAuthentications() {
        return socketServers.stream().mapToLong(SocketServer::failedAuthentications).sum();
    }

    /** The bound port of a listener (useful with port 0). */
    public int boundPort(String listenerName) {
        Integer p = boundPorts.get(listenerName);
        if (p == null) {
            throw new IllegalArgumentException("No listener named " + listenerName);
        }
        return p;
    }

    public String bootstrapServers() {
        Endpoint ep = advertisedEndpoints().get(0);
        return ep.host() + ":" + ep.port();
    }

    public Optional<String> embeddedZooKeeperConnect() {
        return Optional.ofNullable(embeddedZooKeeper).map(EmbeddedZooKeeper::connectString);
    }

    /** Sends this broker's leaders' ISR changes to the controller (its request count, for tests). */
    public AlterPartitionManager alterPartitionManager() {
        return alterPartitionManager;
    }

    public ReplicaManager replicaManager() {
        return replicaManager;
    }

    /** This broker's controller (active only on the broker holding /controller). */
    public Controller controller() {
        return controller;
    }

    public LogStore logStore() {
        return logStore;
    }

    public MetadataWatcher metadata() {
        return watcher;
    }

    /** The listener that hosts this broker's partitions; null before {@link #start}. */
    public PartitionApplier partitionApplier() {
        return applier;
    }

    public boolean isStarted() {
        return started;
    }

    /** Waits until the broker has shut down, whether asked to or on its own (every log dir failed). */
    public void awaitShutdown() throws InterruptedException {
        shutdownComplete.await();
    }

    /** Whether the broker has finished shutting down. */
    public boolean isShutDown() {
        return shutdownComplete.getCount() == 0;
    }

    /** Whether the broker stopped on its own because it could not go on (every log dir failed). */
    public boolean stoppedOnFatalError() {
        return stoppedOnFatalError;
    }

    @Override
    /** Idempotent; safe to call from another thread while {@link #start()} runs (it then aborts start-up). */
    public void close() {
        shutdown(true);
    }

    /**
     * Stops without a controlled shutdown and closes the ZooKeeper session first: the other brokers see this one
     * vanish at once, as after a crash whose session has already expired (a real crash is noticed only after
     * {@code zookeeper.session.timeout.ms}). Logs are still closed so the JVM can go on. Tests use it to kill a
     * broker in-process; to include the detection delay, cut the broker off ZooKeeper first.
     */
    public void abort() {
        if (zk != null && !closed.get()) {
            log.warn("Aborting broker {}: no controlled shutdown", config.brokerId());
            closeQuietly("ZooKeeper client", zk);
        }
        shutdown(false);
    }

    private void shutdown(boolean controlled) {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        long startMs = time.milliseconds();
        log.info("Shutting down Twinlog broker {}", config.brokerId());
        if (started && controlled) {
            controlledShutdown();
        }
        // first: a registration written now would announce a broker that is going away
        closeQuietly("broker registration", registrar);
        closeQuietly("Prometheus endpoint", prometheus);
        closeQuietly("dashboard", dashboard);
        closeQuietly("log dir failure handler", logDirFailureHandler);
        closeQuietly("mirror runtime", mirrorRuntime);
        closeQuietly("truncation confirmations", appliedTruncations);
        closeQuietly("mirror topic APIs", mirrorTopicHandlers);
        closeQuietly("mirror definition APIs", mirrorApiHandlers);
        closeQuietly("producer ids", producerIds);
        closeQuietly("admin request threads", adminExecutor);
        closeQuietly("controller", controller);
        new ArrayList<>(socketServers).forEach(SocketServer::close);
        closeQuietly("SCRAM credentials", scramUsers);
        closeQuietly("client quota store", clientQuotas);
        closeQuietly("dynamic broker configs", dynamicConfigs);
        closeQuietly("authorizer", authorization);
        closeQuietly("request handlers", handlerPool);
        // after the network threads: a throttle ending now finds its connection closed, which is harmless
        closeQuietly("client quotas", quotas);
        // no more metadata from here on: an image applied now would start replica fetchers on logs about to close
        closeQuietly("metadata watcher", watcher);
        closeQuietly("group APIs", groupApis);
        closeQuietly("group configs", groupConfigStore);
        closeQuietly("group coordinator", groupCoordinator);
        closeQuietly("share fetches", shareFetches);
        closeQuietly("share sessions", shareSessions);
        closeQuietly("share partitions", sharePartitions);
        closeQuietly("share persister", sharePersister);
        closeQuietly("latest-offsets client", latestOffsets);
        closeQuietly("share state APIs", shareStateApis);
        closeQuietly("share coordinator", shareCoordinator);
        closeQuietly("transaction APIs", transactionApis);
        closeQuietly("transaction coordinator", transactionCoordinator);
        closeQuietly("transaction verification", transactionVerification);
        closeQuietly("transaction verifier", transactionVerifier);
        closeQuietly("ISR change sender", alterPartitionManager);
        closeQuietly("AlterPartition channel", alterPartitionChannel);
        closeQuietly("forwarding channel", forwardingChannel);
        closeQuietly("replica manager", replicaManager);
        closeQuietly("log store", logStore);
        closeQuietly("ZooKeeper client", zk);
        closeQuietly("embedded ZooKeeper", embeddedZooKeeper);
        closeQuietly("metrics", metrics);
        log.info("Twinlog broker {} shut down in {} ms", config.brokerId(), time.milliseconds() - startMs);
        shutdownComplete.countDown();
    }

    private static void closeQuietly(String what, AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            log.error("Error closing the {}", what, e);
        }
    }
}
