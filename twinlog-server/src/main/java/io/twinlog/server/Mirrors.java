package io.twinlog.server;

import io.twinlog.common.BrokerConfig;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.controller.Controller;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.mirror.fetcher.MirrorFetchQuota;
import io.twinlog.mirror.runtime.AppliedTruncations;
import io.twinlog.mirror.runtime.MirrorRuntime;
import io.twinlog.mirror.store.MirrorStore;
import io.twinlog.mirror.store.SecretCodec;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.replication.ReplicaManager;
import io.twinlog.server.metadata.TopicAdmin;
import io.twinlog.server.mirror.BrokerMirrorPartitions;
import io.twinlog.server.mirror.BrokerMirrorTopics;
import io.twinlog.server.mirror.FailoverPreviews;
import io.twinlog.server.mirror.MirrorApiHandlers;
import io.twinlog.server.mirror.MirrorTopicHandlers;
import io.twinlog.server.security.BrokerAuthorization;
import io.twinlog.server.security.LocalClientConfigs;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.utils.Time;

/**
 * Cluster mirroring in the broker: the confirmations of mirroring truncations (needed by the partition applier, so
 * built first, {@link #startTruncations}), the mirror runtime over this broker's partitions and topic
 * administration, and the mirror APIs in front of it ({@link #registerApis}); the runtime runs once the broker is
 * registered ({@link #start}). Every part is visible to {@link #close} as soon as it exists.
 */
final class Mirrors implements AutoCloseable {
    // volatile: the broker's close() may run on another thread while start-up runs; null until built
    private volatile AppliedTruncations appliedTruncations;
    private volatile MirrorRuntime mirrorRuntime;
    private volatile MirrorApiHandlers mirrorApiHandlers;
    private volatile MirrorTopicHandlers mirrorTopicHandlers;

    /** The record of applied truncations the partition applier writes to. */
    AppliedTruncations startTruncations(BrokerConfig config, CuratorFramework zk) {
        appliedTruncations = new AppliedTruncations(config.brokerId(), zk);
        return appliedTruncations;
    }

    /** Builds the runtime (not started) and registers the mirror definition and topic APIs. */
    void registerApis(ApiRegistry.Builder registry, BrokerConfig config, CuratorFramework zk, MetadataWatcher watcher,
                      ReplicaManager replicaManager, TopicAdmin topicAdmin, Controller controller,
                      BrokerAuthorization authorization, BrokerMetrics metrics, Time time) {
        MirrorStore mirrorStore = new MirrorStore(zk, config.passwordEncoderSecret()
                .map(secret -> new SecretCodec(secret, config.passwordEncoderOldSecret())));
        mirrorRuntime = new MirrorRuntime(config.brokerId(), mirrorStore, zk, watcher,
                new BrokerMirrorPartitions(replicaManager),
                new BrokerMirrorTopics(topicAdmin, config.numPartitions(), config.defaultReplicationFactor(),
                        () -> watcher.image().brokers().size()),
                controller::isActive, () -> LocalClientConfigs.of(config, watcher.image(), config.brokerId()),
                config.mirrorStateTimeoutMs(), new MirrorFetchQuota.Windows(config.replicationQuotaWindowNum(),
                        config.replicationQuotaWindowSizeSeconds()), metrics, time);
        mirrorApiHandlers = new MirrorApiHandlers(mirrorStore, watcher, authorization, config.brokerId(), time);
        mirrorApiHandlers.register(registry);
        mirrorTopicHandlers = new MirrorTopicHandlers(mirrorStore, watcher, mirrorRuntime.topicStarter(),
                authorization);
        mirrorTopicHandlers.register(registry);
        new FailoverPreviews(new BrokerMirrorPartitions(replicaManager), watcher, authorization, time)
                .register(registry, mirrorApiHandlers.apiThreads());
    }

    /** Once the broker is registered. */
    void start() {
        mirrorRuntime.start();
    }

    /** The runtime, the truncation confirmations, then the topic and the definition APIs. */
    @Override
    public void close() {
        QuietClose.close("mirror runtime", mirrorRuntime);
        QuietClose.close("truncation confirmations", appliedTruncations);
        QuietClose.close("mirror topic APIs", mirrorTopicHandlers);
        QuietClose.close("mirror definition APIs", mirrorApiHandlers);
    }
}
