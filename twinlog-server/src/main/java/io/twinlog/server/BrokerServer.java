package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.Endpoint;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.controller.Controller;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.protocol.ListenerChannels;
import io.twinlog.replication.ReplicaFetcherManager;
import io.twinlog.replication.ReplicaManager;
import io.twinlog.server.controller.AlterPartitionManager;
import io.twinlog.server.dynamic.DynamicBrokerConfigs;
import io.twinlog.server.dynamic.LogCleanerSettings;
import io.twinlog.server.dynamic.LogDefaults;
import io.twinlog.server.dynamic.ReplicaFetchers;
import io.twinlog.server.handlers.ApiVersionsHandler;
import io.twinlog.server.handlers.BrokerContext;
import io.twinlog.server.metadata.LostReplicaTracker;
import io.twinlog.server.metadata.LostReplicasFile;
import io.twinlog.server.metadata.PartitionApplier;
import io.twinlog.server.metadata.TopicAdmin;
import io.twinlog.server.metadata.TopicConfigs;
import io.twinlog.server.metrics.BrokerTopicMetrics;
import io.twinlog.server.quota.BrokerQuotas;
import io.twinlog.server.quota.ClientQuotaStore;
import io.twinlog.server.security.BrokerAuthorization;
import io.twinlog.server.security.ScramUsers;
import io.twinlog.storage.LogDirIdentity;
import io.twinlog.storage.LogStore;
import io.twinlog.storage.LogStoreConfig;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.security.authenticator.CredentialCache;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.security.SecureRandom;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One Twinlog broker: a list of components started in order and stopped in an order of their own, as Kafka's
 * {@code BrokerServer} is (decision 115).
 *
 * <p>Start-up order ({@link #start}): the configuration checks (a dashboard configured but not installed is refused
 * here), metrics and client quotas, the log dirs' identity ({@link LogDirIdentity}: a dir of another broker or
 * cluster refuses the start before anything is loaded, deleted or written), ZooKeeper ({@link ZooKeeperConnection},
 * embedded when {@code zookeeper.connect} is absent; the cluster id checked against the dirs'), the dynamic broker
 * configs (every part is built with them), the metadata image, the log store (so topic config overrides are known
 * when logs load), SCRAM credentials and client quotas, the controller and its channels ({@link ControllerLink}),
 * the replica manager and the log dir failure handler, the partitions ({@link PartitionApplier}), the authorizer,
 * producer ids, the coordinators ({@link Coordinators}), the API registry ({@link BrokerApis}, with the mirror
 * runtime and APIs of {@link Mirrors}), the listeners ({@link BrokerListeners}), and last the registration
 * ({@link Registration}), so clients only learn of a broker that can serve; then the ISR change sender, the
 * controller, the mirror runtime and the HTTP endpoints ({@link HttpEndpoints}) start.
 *
 * <p>Shutdown ({@link #shutdown}): a controlled shutdown first, then the registration goes, then the parts that act
 * on their own (HTTP endpoints, the log dir failure handler, mirrors, the controller) before the listeners and the
 * request handlers, the metadata watcher before the coordinators it feeds, and the replica manager, the log store
 * (logs flushed and checkpointed: recovery points, high watermarks), ZooKeeper and metrics last. Each component is
 * visible to the shutdown as soon as it is built, so a start-up that fails or is aborted half-way closes what it
 * built, and an unbuilt one is skipped.
 */
public final class BrokerServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BrokerServer.class);

    private final BrokerConfig config;
    private final Time time;
    private final ZooKeeperConnection zooKeeper;
    private final ControllerLink controllerLink = new ControllerLink();
    private final Coordinators coordinators = new Coordinators();
    private final Mirrors mirrors = new Mirrors();
    private final BrokerApis apis = new BrokerApis();
    private final BrokerListeners listeners = new BrokerListeners();
    private final Registration registration;
    private final HttpEndpoints httpEndpoints;
    // volatile: close() may run on a shutdown-hook thread while start() is still running
    private volatile BrokerMetrics metrics;
    private volatile BrokerQuotas quotas;
    private volatile DynamicBrokerConfigs dynamicConfigs;
    private volatile MetadataWatcher watcher;
    private volatile LogStore logStore;
    private volatile ScramUsers scramUsers;
    private volatile ClientQuotaStore clientQuotas;
    private volatile ReplicaManager replicaManager;
    private volatile LogDirFailureHandler logDirFailureHandler;
    /** Replicas lost with a disk, still lost; the registration carries them. */
    private volatile LostReplicaTracker lostTracker;
    private volatile PartitionApplier applier;
    private volatile BrokerAuthorization authorization;
    private volatile ProducerIdManager producerIds;
    private volatile boolean started;
    private volatile boolean stoppedOnFatalError;
    private final CountDownLatch shutdownComplete = new CountDownLatch(1);
    private final AtomicBoolean closed = new AtomicBoolean();

    public BrokerServer(BrokerConfig config, Time time) {
        this.config = config;
        this.time = time;
        this.zooKeeper = new ZooKeeperConnection(config);
        this.registration = new Registration(config, time);
        this.httpEndpoints = new HttpEndpoints(config, time);
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
        httpEndpoints.findDashboard();
        metrics = config.newMetrics(time);
        quotas = new BrokerQuotas(config.quotaWindowNum(), config.quotaWindowSizeSeconds(), metrics.kafkaMetrics(),
                time, config.brokerId());
        // before ZooKeeper and before any log is loaded: a dir of another broker is refused with nothing touched
        LogDirIdentity identity = LogDirIdentity.load(config.logDirs());
        identity.checkBrokerId(config.brokerId());
        String clusterId = zooKeeper.start(identity, this::abortIfClosed);
        CuratorFramework zk = zooKeeper.client();
        // the dynamic broker configs before any part is built: each is built with them, nothing resized at start
        dynamicConfigs = new DynamicBrokerConfigs(zk, config);
        dynamicConfigs.start(config.zookeeperSessionTimeoutMs());
        BrokerConfig startConfig = dynamicConfigs.current();

        abortIfClosed();
        watcher = new MetadataWatcher(zk, clusterId, config.brokerId());
        metrics.backgroundTasks().register(watcher.resyncTask());
        watcher.start();
        BrokerNodes nodes = new BrokerNodes(config, watcher);

        abortIfClosed();
        startLogStore(startConfig);
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
        controllerLink.build(config, zk, zooKeeper.store(), watcher, nodes, channels, this::uncleanElectionEnabled,
                metrics, time);
        startReplicaManager(startConfig, nodes, channels);
        TopicConfigs topicConfigs = new TopicConfigs(dynamicConfigs::current, dynamicConfigs::sourceOf);
        hostPartitions(clusterId, topicConfigs, zk);
        // after the applier: the coordinators follow the leaderships the applier has just applied
        // before the group coordinator: it resolves regex subscriptions with the authorizer
        authorization = BrokerAuthorization.start(config, zk, metrics);
        producerIds = new ProducerIdManager(config.brokerId(), zooKeeper.store());
        coordinators.build(config, zk, watcher, replicaManager, producerIds, authorization, nodes, channels, metrics,
                time);
        watcher.refresh(60_000);

        TopicAdmin topicAdmin = new TopicAdmin(zooKeeper.store(), watcher, topicConfigs, new SecureRandom());
        if (authorization.enabled()) {
            log.info("{} authorizes every request with the ACLs kept in ZooKeeper (super users: {})",
                    config.authorizerClassName(), config.get(BrokerConfig.SUPER_USERS).orElse("none"));
        }
        BrokerTopicMetrics topicMetrics = new BrokerTopicMetrics(metrics);
        watcher.addListener((previous, next, delta) -> delta.deletedTopics().forEach(topicMetrics::removeTopic));
        BrokerContext ctx = new BrokerContext(config, watcher, replicaManager, logStore, topicAdmin, topicConfigs,
                producerIds, authorization, topicMetrics, coordinators.transactionVerification(), quotas, time);
        ApiRegistry registry = apis.build(ctx, registryRef::get, dynamicConfigs, controllerLink, coordinators,
                mirrors, scramUsers, clientQuotas, zk, zooKeeper.store(), metrics);
        registryRef.set(registry);

        abortIfClosed();
        listeners.start(config, startConfig, registry, channels, coordinators.shareSessions(), dynamicConfigs, metrics,
                quotas, time);

        abortIfClosed();
        registration.register(zk, zooKeeper.store(), lostTracker, listeners.boundPorts(), metrics);
        watcher.awaitApplied("broker " + config.brokerId() + " registered",
                image -> image.brokers().containsKey(config.brokerId()), 60_000);
        controllerLink.start();
        mirrors.start();
        httpEndpoints.start(watcher, authorization, metrics);
        started = true;
        log.info("Twinlog broker {} started in {} ms, serving {} on cluster {}", config.brokerId(),
                time.milliseconds() - startMs, registration.registeredEndpoints(), clusterId);
    }

    /** The log store, with the start-up configuration; its log defaults and cleaner follow dynamic changes. */
    private void startLogStore(BrokerConfig startConfig) throws Exception {
        logStore = new LogStore(logStoreConfig(startConfig), this::configFor, time);
        logStore.startup();
        dynamicConfigs.register(new LogDefaults(logStore));
        dynamicConfigs.register(new LogCleanerSettings(logStore));
        logStore.backgroundTasks().forEach(metrics.backgroundTasks()::register);
    }

    /** The replica manager with its fetchers, and the handler that takes failed log dirs offline. */
    private void startReplicaManager(BrokerConfig startConfig, BrokerNodes nodes, ListenerChannels channels) {
        ReplicaFetcherManager fetcherManager = new ReplicaFetcherManager(config.brokerId(), nodes::node,
                nodes::brokerEpoch, startConfig.numReplicaFetchers(), config.replicaFetchWaitMaxMs(),
                config.replicaFetchMinBytes(), config.replicaFetchResponseMaxBytes(), config.replicaFetchMaxBytes(),
                config.replicaSocketTimeoutMs(), channels::interBroker, time);
        dynamicConfigs.register(new ReplicaFetchers(fetcherManager));
        replicaManager = new ReplicaManager(config.brokerId(), logStore, fetcherManager,
                controllerLink.alterPartitionManager(), config.replicaLagTimeMaxMs(), time);
        replicaManager.enableMetrics(metrics);
        // mirror partitions keep the source's leader-epoch history until failover
        replicaManager.setSourceEpochPolicy(tp -> watcher.image().mirrors().keepsSourceEpochs(tp));
        logDirFailureHandler = new LogDirFailureHandler(config.brokerId(), logStore, replicaManager,
                registration::publishOffline, this::shutdownOnFatalError);
        logDirFailureHandler.start();
    }

    /**
     * The partitions this broker hosts, as the image says: the replicas it lost with a disk found first (before the
     * applier leads anything and before the registration), then the applier.
     */
    private void hostPartitions(String clusterId, TopicConfigs topicConfigs, CuratorFramework zk) throws Exception {
        var appliedTruncations = mirrors.startTruncations(config, zk);
        lostTracker = new LostReplicaTracker(config.brokerId(), new LostReplicasFile(
                config.brokerId(), logStore.liveLogDirs().stream().map(File::new).sorted().toList()),
                registration::publishLost);
        lostTracker.findAtStart(watcher.image(), this::hasLog);
        watcher.addListener(lostTracker::onImage);
        applier = new PartitionApplier(config.brokerId(), clusterId, replicaManager, logStore, topicConfigs,
                appliedTruncations, lostTracker);
        watcher.addListener(applier::onImage);
    }

    /** Where this broker serves its metrics for Prometheus, when it does. */
    public Optional<String> prometheusUrl() {
        return httpEndpoints.prometheusUrl();
    }

    /** The mirror dashboard's URL ({@code dashboard.listener}); empty when it is off or not started. */
    public Optional<String> dashboardUrl() {
        return httpEndpoints.dashboardUrl();
    }

    /** Whether this broker holds a log of the partition, of that topic ID (a log of an earlier topic is not it). */
    private boolean hasLog(TopicIdPartition partition) {
        return logStore.log(partition.topicPartition())
                .map(l -> l.topicId().map(partition.topicId()::equals).orElse(true)).orElse(false);
    }

    private void abortIfClosed() {
        if (closed.get()) {
            throw new IllegalStateException("Broker " + config.brokerId() + " was shut down during start-up");
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

    private Properties configFor(ConfigResource resource) {
        Properties p = new Properties();
        if (resource.type() == ConfigResource.Type.TOPIC && watcher != null) {
            p.putAll(watcher.image().topicConfig(resource.name()));
        }
        return p;
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
        return listeners.failedAuthentications();
    }

    /** The bound port of a listener (useful with port 0). */
    public int boundPort(String listenerName) {
        Integer p = listeners.boundPorts().get(listenerName);
        if (p == null) {
            throw new IllegalArgumentException("No listener named " + listenerName);
        }
        return p;
    }

    public String bootstrapServers() {
        Endpoint ep = registration.advertisedEndpoints(listeners.boundPorts()).get(0);
        return ep.host() + ":" + ep.port();
    }

    public Optional<String> embeddedZooKeeperConnect() {
        return zooKeeper.embeddedConnectString();
    }

    /** Sends this broker's leaders' ISR changes to the controller (its request count, for tests). */
    public AlterPartitionManager alterPartitionManager() {
        return controllerLink.alterPartitionManager();
    }

    public ReplicaManager replicaManager() {
        return replicaManager;
    }

    /** This broker's controller (active only on the broker holding /controller). */
    public Controller controller() {
        return controllerLink.controller();
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
        if (zooKeeper.client() != null && !closed.get()) {
            log.warn("Aborting broker {}: no controlled shutdown", config.brokerId());
            zooKeeper.closeClient();
        }
        shutdown(false);
    }

    /** The order of the steps is the broker's shutdown order (decision 115); each skips what was never built. */
    private void shutdown(boolean controlled) {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        long startMs = time.milliseconds();
        log.info("Shutting down Twinlog broker {}", config.brokerId());
        if (started && controlled) {
            registration.controlledShutdown(zooKeeper.store(), watcher);
        }
        // first: a registration written now would announce a broker that is going away
        registration.close();
        httpEndpoints.close(); // the Prometheus endpoint, then the dashboard
        QuietClose.close("log dir failure handler", logDirFailureHandler);
        mirrors.close(); // the runtime, truncation confirmations, topic APIs, definition APIs
        QuietClose.close("producer ids", producerIds);
        apis.close(); // the admin request threads
        controllerLink.closeController();
        listeners.closeSocketServers();
        QuietClose.close("SCRAM credentials", scramUsers);
        QuietClose.close("client quota store", clientQuotas);
        QuietClose.close("dynamic broker configs", dynamicConfigs);
        QuietClose.close("authorizer", authorization);
        listeners.closeRequestHandlers();
        // after the network threads: a throttle ending now finds its connection closed, which is harmless
        QuietClose.close("client quotas", quotas);
        // no more metadata from here on: an image applied now would start replica fetchers on logs about to close
        QuietClose.close("metadata watcher", watcher);
        coordinators.close(); // group, then share, then transaction side
        controllerLink.closeChannels(); // the ISR change sender, the AlterPartition and forwarding channels
        QuietClose.close("replica manager", replicaManager);
        QuietClose.close("log store", logStore);
        zooKeeper.close(); // the client, then the embedded server
        QuietClose.close("metrics", metrics);
        log.info("Twinlog broker {} shut down in {} ms", config.brokerId(), time.milliseconds() - startMs);
        shutdownComplete.countDown();
    }
}
