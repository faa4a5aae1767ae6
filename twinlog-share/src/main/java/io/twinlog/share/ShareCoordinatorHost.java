package io.twinlog.share;

import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.group.CoordinatorLogLoader;
import io.twinlog.group.CoordinatorMetadataFollower;
import io.twinlog.group.CoordinatorPartitionWriter;
import io.twinlog.replication.ReplicaManager;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.share.ShareCoordinator;
import org.apache.kafka.coordinator.share.ShareCoordinatorConfig;
import org.apache.kafka.coordinator.share.ShareCoordinatorRecordSerde;
import org.apache.kafka.coordinator.share.ShareCoordinatorService;
import org.apache.kafka.coordinator.share.metrics.ShareCoordinatorMetrics;
import org.apache.kafka.coordinator.share.metrics.ShareCoordinatorRuntimeMetrics;
import org.apache.kafka.server.share.SharePartitionKey;
import org.apache.kafka.server.util.timer.SystemTimer;
import org.apache.kafka.server.util.timer.SystemTimerReaper;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Hosts Apache Kafka's share coordinator ({@code kafka-share-coordinator}, KIP-932) on a Twinlog broker, as
 * {@code GroupCoordinatorHost} hosts the group coordinator: the library keeps each share partition's state (start
 * offset, state epoch, acknowledged and archived ranges, delivery counts) for the share-group state RPCs, Twinlog
 * supplies the log ({@link CoordinatorPartitionWriter} over the {@code __share_group_state} partitions this broker
 * leads, including the pruning of records no state needs), the loader, and the metadata and leaderships
 * ({@link CoordinatorMetadataFollower}; the metadata carries share.version: the library runs its pruning and
 * snapshot jobs only while it is 1 or more). A broker that no longer leads a partition answers NOT_COORDINATOR for
 * its keys and Kafka's persister finds the new leader.
 *
 * <p>Threading: metadata changes are applied on the follower's event thread; requests go to the library's own
 * thread ({@code share.coordinator.threads}) and answer through futures.
 */
public final class ShareCoordinatorHost implements AutoCloseable {
    public static final String STATE_TOPIC = Topic.SHARE_GROUP_STATE_TOPIC_NAME;

    private final ShareCoordinatorConfig config;
    private final ShareCoordinatorService service;
    private final CoordinatorMetadataFollower follower;

    /**
     * @param brokerProperties the broker's configuration; Kafka's {@code share.coordinator.*} keys keep Kafka's
     *                         names and defaults
     */
    public ShareCoordinatorHost(int brokerId, Map<String, ?> brokerProperties, ReplicaManager replicaManager,
                                BrokerMetrics brokerMetrics, Time time) {
        Map<String, Object> props = new HashMap<>(brokerProperties);
        this.config = new ShareCoordinatorConfig(new AbstractConfig(ShareCoordinatorConfig.CONFIG_DEF, props, false));
        // the share coordinator writes no transactional records: nothing asks its writer to verify one
        CoordinatorPartitionWriter writer = new CoordinatorPartitionWriter(replicaManager,
                (tp, transactionalId, producerId, producerEpoch, version) -> CompletableFuture.failedFuture(
                        new IllegalStateException("No transactional writes to " + tp)));
        replicaManager.addHighWatermarkListener(writer);
        Metrics metrics = brokerMetrics.kafkaMetrics();
        this.service = new ShareCoordinatorService.Builder(brokerId, config)
                .withTime(time)
                .withTimer(new SystemTimerReaper("twinlog-share-reaper-" + brokerId,
                        new SystemTimer("twinlog-share-timer-" + brokerId)))
                .withWriter(writer)
                .withLoader(CoordinatorLogLoader.over(replicaManager, time, new ShareCoordinatorRecordSerde(),
                        config.shareCoordinatorLoadBufferSize()))
                .withCoordinatorRuntimeMetrics(new ShareCoordinatorRuntimeMetrics(metrics))
                .withCoordinatorMetrics(new ShareCoordinatorMetrics(metrics))
                .build();
        this.follower = new CoordinatorMetadataFollower(brokerId, "share", STATE_TOPIC, "the share-group states",
                config::shareCoordinatorStateTopicNumPartitions, replicaManager,
                new CoordinatorMetadataFollower.Coordinator(service::startup, service::onMetadataUpdate,
                        service::onElection, service::onResignation), time);
    }

    /** The coordinator, for the state RPC handlers; check {@link #isStarted()} first. */
    public ShareCoordinator coordinator() {
        return service;
    }

    public boolean isStarted() {
        return follower.isStarted();
    }

    public ShareCoordinatorConfig config() {
        return config;
    }

    /** The {@code __share_group_state} partition that holds a share partition's state. */
    public int partitionFor(SharePartitionKey key) {
        return service.partitionFor(key);
    }

    /** Configs of a new {@code __share_group_state} topic (delete policy, segment size, min ISR). */
    public Map<String, String> stateTopicConfigs() {
        return service.shareGroupStateTopicConfigs();
    }

    /** Metadata listener: the coordinator follows the image on its own event thread. */
    public void onImage(MetadataImage previous, MetadataImage next) {
        follower.onImage(previous, next);
    }

    @Override
    public void close() {
        follower.close();
        if (follower.isStarted()) {
            service.shutdown(); // also closes the timer and the loader
        }
    }
}
