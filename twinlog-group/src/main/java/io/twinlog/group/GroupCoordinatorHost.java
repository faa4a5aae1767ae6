package io.twinlog.group;

import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.replication.ReplicaManager;
import org.apache.kafka.common.internals.Plugin;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.GroupConfigManager;
import org.apache.kafka.coordinator.group.GroupCoordinator;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.GroupCoordinatorService;
import org.apache.kafka.coordinator.group.metrics.GroupCoordinatorMetrics;
import org.apache.kafka.coordinator.group.metrics.GroupCoordinatorRuntimeMetrics;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfig;
import org.apache.kafka.server.authorizer.Authorizer;
import org.apache.kafka.server.share.persister.Persister;
import org.apache.kafka.server.util.PartitionMetadataClient;
import org.apache.kafka.server.util.timer.SystemTimer;
import org.apache.kafka.server.util.timer.SystemTimerReaper;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Hosts Apache Kafka's group coordinator ({@code kafka-group-coordinator}, the one Kafka brokers run) on a Twinlog
 * broker: classic and consumer (KIP-848) groups, offset commits, session and rebalance timeouts, static membership
 * and offset retention all come from the library; Twinlog supplies the log ({@link CoordinatorPartitionWriter} over
 * the {@code __consumer_offsets} partitions this broker leads), the loader over those partitions, and the
 * metadata ({@link CoordinatorMetadataFollower}). See docs/decisions.md for why it is hosted rather than written.
 *
 * <p>Leadership follows the metadata image: when this broker becomes leader of a {@code __consumer_offsets}
 * partition the coordinator loads the groups of that partition from the log ({@code onElection}); when it stops
 * leading it unloads them ({@code onResignation}) and clients move to the new leader (NOT_COORDINATOR).
 *
 * <p>Threading: metadata changes are applied on the follower's event thread (never the metadata thread, since the
 * coordinator may block there while it writes tombstones for deleted topics); requests go to the library's own
 * threads and answer through futures.
 */
public final class GroupCoordinatorHost implements AutoCloseable {
    public static final String OFFSETS_TOPIC = Topic.GROUP_METADATA_TOPIC_NAME;

    /**
     * Where Twinlog runs Kafka's group coordinator otherwise than Kafka's defaults say, for a key the broker's
     * configuration leaves out: one coordinator thread and one background thread (decision 18: sized for small
     * machines, Kafka's keys override them). DescribeConfigs and docs/configuration.md show these as the defaults.
     */
    public static final Map<String, String> TWINLOG_DEFAULTS = Map.of(
            GroupCoordinatorConfig.GROUP_COORDINATOR_NUM_THREADS_CONFIG, "1",
            GroupCoordinatorConfig.GROUP_COORDINATOR_NUM_BACKGROUND_THREADS_CONFIG, "1");

    private final GroupCoordinatorConfig config;
    private final GroupCoordinatorService service;
    private final Metrics metrics;
    private final GroupConfigManager groupConfigs;
    private final CoordinatorMetadataFollower follower;

    /**
     * @param brokerProperties the broker's configuration; Kafka's group coordinator keys ({@code offsets.*},
     *                         {@code group.*}) keep Kafka's names and defaults, except that the coordinator runs one
     *                         thread and one background thread unless configured otherwise
     * @param authorizer       the broker's authorizer, if any: the coordinator resolves a member's regex
     *                         subscription only to the topics its principal may describe, as Kafka's does
     * @param verification     how a transactional offset commit is verified with its transaction coordinator
     * @param persister        where share groups' partition state is initialized, read and deleted (Kafka's
     *                         persister, talking to the share coordinators; KIP-932)
     * @param latestOffsets    partitions' latest offsets, for the lag DescribeShareGroupOffsets shows
     */
    public GroupCoordinatorHost(int brokerId, Map<String, ?> brokerProperties, ReplicaManager replicaManager,
                                Optional<Authorizer> authorizer, TransactionalOffsetVerification verification,
                                Persister persister, PartitionMetadataClient latestOffsets,
                                BrokerMetrics brokerMetrics, Time time) {
        this.metrics = brokerMetrics.kafkaMetrics();
        Map<String, Object> props = new HashMap<>(brokerProperties);
        TWINLOG_DEFAULTS.forEach(props::putIfAbsent);
        this.config = GroupCoordinatorInternalConfigs.coordinatorConfig(props);
        this.groupConfigs = new GroupConfigManager(config, ShareGroupConfig.fromProps(props));
        CoordinatorPartitionWriter writer = new CoordinatorPartitionWriter(replicaManager, verification);
        replicaManager.addHighWatermarkListener(writer);
        this.service = new GroupCoordinatorService.Builder(brokerId, config)
                .withTime(time)
                .withTimer(new SystemTimerReaper("twinlog-group-reaper-" + brokerId,
                        new SystemTimer("twinlog-group-timer-" + brokerId)))
                .withWriter(writer)
                .withLoader(CoordinatorLogLoader.over(replicaManager, time, new GroupCoordinatorRecordSerde(),
                        config.offsetsLoadBufferSize()))
                .withCoordinatorRuntimeMetrics(new GroupCoordinatorRuntimeMetrics(metrics))
                // the broker's registry, not Kafka's JVM-wide one: brokers sharing a JVM must not share gauges
                .withGroupCoordinatorMetrics(new GroupCoordinatorMetrics(brokerMetrics.registry(), metrics))
                .withGroupConfigManager(groupConfigs)
                .withPersister(persister)
                .withAuthorizerPlugin(authorizer.map(a -> Plugin.wrapInstance(a, null, "authorizer.class.name")))
                .withPartitionMetadataClient(latestOffsets)
                .build();
        this.follower = new CoordinatorMetadataFollower(brokerId, "group", OFFSETS_TOPIC, "the groups",
                config::offsetsTopicPartitions, replicaManager, new CoordinatorMetadataFollower.Coordinator(
                        service::startup, service::onMetadataUpdate, service::onElection, service::onResignation),
                time);
    }

    /** The coordinator, for request handlers; check {@link #isStarted()} first. */
    public GroupCoordinator coordinator() {
        return service;
    }

    public boolean isStarted() {
        return follower.isStarted();
    }

    public GroupCoordinatorConfig config() {
        return config;
    }

    /**
     * Per-group configs (KIP-848/932 {@code group.*} and {@code share.*} overrides) shared by the coordinator and
     * this broker's share partitions, so a change reaches both.
     */
    public GroupConfigManager groupConfigs() {
        return groupConfigs;
    }

    /** The {@code __consumer_offsets} partition that holds a group. */
    public int partitionFor(String groupId) {
        return service.partitionFor(groupId);
    }

    /** Configs of a new {@code __consumer_offsets} topic (compacted, segment size, compression). */
    public Map<String, String> offsetsTopicConfigs() {
        return service.groupMetadataTopicConfigs();
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
        groupConfigs.close();
    }
}
