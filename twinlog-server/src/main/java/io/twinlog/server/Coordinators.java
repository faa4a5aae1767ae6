package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.group.GroupCoordinatorHost;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.protocol.ListenerChannels;
import io.twinlog.replication.ReplicaManager;
import io.twinlog.server.groupconfig.GroupConfigPolicy;
import io.twinlog.server.groupconfig.GroupConfigStore;
import io.twinlog.server.handlers.group.GroupApis;
import io.twinlog.server.handlers.share.ShareFetchApis;
import io.twinlog.server.handlers.share.ShareStateApis;
import io.twinlog.server.handlers.txn.TransactionApis;
import io.twinlog.server.metadata.TopicAdmin;
import io.twinlog.server.quota.BrokerQuotas;
import io.twinlog.server.security.BrokerAuthorization;
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
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.GroupConfig;
import org.apache.kafka.coordinator.group.GroupConfigManager;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfig;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfigProvider;
import org.apache.kafka.server.authorizer.Authorizer;

/**
 * The coordinators this broker hosts over the partitions it leads, and what they need: the verification of
 * transactional writes (KIP-890), the share coordinator with its persister and the share partitions, fetches and
 * sessions (KIP-932), the group coordinator with the per-group configs, and the transaction coordinator; then the
 * API handlers in front of them ({@link #registerApis}). Each follows the metadata image from the moment it is built.
 * Every part is visible to {@link #close} as soon as it exists, so a start-up that fails half-way closes what it
 * built; {@link #close} stops the group side first, then the share side, then the transaction side.
 */
final class Coordinators implements AutoCloseable {
    /** How long one share-group state RPC of the persister may take before it is retried (Kafka's request timeout). */
    private static final int SHARE_PERSISTER_TIMEOUT_MS = 30_000;

    // volatile: the broker's close() may run on another thread while build() runs; null until built
    private volatile TransactionVerifier transactionVerifier;
    private volatile TransactionVerification transactionVerification;
    private volatile ShareCoordinatorHost shareCoordinator;
    private volatile SharePersister sharePersister;
    private volatile LatestOffsetsClient latestOffsets;
    private volatile GroupCoordinatorHost groupCoordinator;
    private volatile LocalSharePartitions sharePartitions;
    private volatile ShareFetches shareFetches;
    private volatile ShareSessions shareSessions;
    private volatile GroupConfigStore groupConfigStore;
    private volatile TransactionCoordinatorHost transactionCoordinator;
    private volatile TransactionApis transactionApis;
    private volatile ShareStateApis shareStateApis;
    private volatile GroupApis groupApis;
    private volatile ShareGroupConfig shareGroupConfig;
    private volatile ShareGroupConfigProvider shareGroupConfigs;

    /**
     * Builds the coordinators, after the partitions are hosted (they follow the leaderships the applier has just
     * applied) and after the authorizer (the group coordinator resolves regex subscriptions with it).
     */
    void build(BrokerConfig config, CuratorFramework zk, MetadataWatcher watcher, ReplicaManager replicaManager,
               ProducerIdManager producerIds, BrokerAuthorization authorization, BrokerNodes nodes,
               ListenerChannels channels, BrokerMetrics metrics, Time time) throws Exception {
        // KIP-890: partition leaders (produce, transactional offset commits) ask coordinators before a transaction's
        // first write to a partition
        int transactionRequestTimeoutMs = config.transactionConfig().requestTimeoutMs();
        transactionVerifier = new TransactionVerifier(config.brokerId(), watcher::image, nodes::node,
                channels::interBroker, transactionRequestTimeoutMs, time);
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
                new ImageShareCoordinatorLocator(watcher::image, shareCoordinator, nodes::node),
                SHARE_PERSISTER_TIMEOUT_MS, time);
        latestOffsets = new LatestOffsetsClient(config.brokerId(), replicaManager, watcher::image, nodes::node,
                channels.interBroker("twinlog-latest-offsets-" + config.brokerId()), SHARE_PERSISTER_TIMEOUT_MS, time);
        groupCoordinator = new GroupCoordinatorHost(config.brokerId(), config.originals(), replicaManager,
                authorization.authorizer().map(Authorizer.class::cast), transactionVerification::verifyOffsetCommit,
                sharePersister.persister(), latestOffsets, metrics, time);
        watcher.addListener((previous, next, delta) -> groupCoordinator.onImage(previous, next));
        // share partitions on their leaders: the in-flight records of ShareFetch/ShareAcknowledge, kept through the
        // persister; a share session per member on each leader it fetches from
        shareGroupConfig = ShareGroupConfig.fromProps(config.originals());
        GroupConfigManager groupConfigs = groupCoordinator.groupConfigs();
        shareGroupConfigs = new ShareGroupConfigProvider(groupConfigs);
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
                replicaManager, producerIds, nodes::node, channels::interBroker, time);
        watcher.addListener((previous, next, delta) -> transactionCoordinator.onImage(previous, next));
    }

    /**
     * The coordinators' APIs: FindCoordinator and the transaction APIs, the share-group state RPCs,
     * ShareFetch/ShareAcknowledge, the group APIs.
     */
    void registerApis(ApiRegistry.Builder registry, BrokerConfig config, MetadataWatcher watcher,
                      TopicAdmin topicAdmin, BrokerAuthorization authorization, BrokerQuotas quotas, Time time) {
        transactionApis = new TransactionApis(transactionCoordinator, topicAdmin, watcher::image, authorization, time);
        transactionApis.register(registry, groupCoordinator::partitionFor);
        shareStateApis = new ShareStateApis(shareCoordinator, topicAdmin, watcher::image, authorization, time);
        shareStateApis.register(registry);
        new ShareFetchApis(shareSessions, shareFetches, sharePartitions, shareGroupConfigs, shareGroupConfig,
                watcher::image, authorization, quotas, config.fetchMaxBytes()).register(registry);
        groupApis = new GroupApis(groupCoordinator, topicAdmin, watcher::image, authorization,
                transactionApis.finder(), shareStateApis.finder(), time);
        groupApis.register(registry);
    }

    TransactionVerification transactionVerification() {
        return transactionVerification;
    }

    GroupCoordinatorHost groupCoordinator() {
        return groupCoordinator;
    }

    GroupConfigStore groupConfigStore() {
        return groupConfigStore;
    }

    TransactionApis transactionApis() {
        return transactionApis;
    }

    /** A vanished member's share session ends with its connection. */
    ShareSessions shareSessions() {
        return shareSessions;
    }

    @Override
    public void close() {
        QuietClose.close("group APIs", groupApis);
        QuietClose.close("group configs", groupConfigStore);
        QuietClose.close("group coordinator", groupCoordinator);
        QuietClose.close("share fetches", shareFetches);
        QuietClose.close("share sessions", shareSessions);
        QuietClose.close("share partitions", sharePartitions);
        QuietClose.close("share persister", sharePersister);
        QuietClose.close("latest-offsets client", latestOffsets);
        QuietClose.close("share state APIs", shareStateApis);
        QuietClose.close("share coordinator", shareCoordinator);
        QuietClose.close("transaction APIs", transactionApis);
        QuietClose.close("transaction coordinator", transactionCoordinator);
        QuietClose.close("transaction verification", transactionVerification);
        QuietClose.close("transaction verifier", transactionVerifier);
    }
}
