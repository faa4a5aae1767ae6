package io.twinlog.group;

import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.internals.Plugin;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.common.runtime.CoordinatorLoaderImpl;
import org.apache.kafka.coordinator.group.GroupConfigManager;
import org.apache.kafka.coordinator.group.GroupCoordinator;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.GroupCoordinatorService;
import org.apache.kafka.coordinator.group.metrics.GroupCoordinatorMetrics;
import org.apache.kafka.coordinator.group.metrics.GroupCoordinatorRuntimeMetrics;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfig;
import org.apache.kafka.server.authorizer.Authorizer;
import org.apache.kafka.server.share.persister.NoOpStatePersister;
import org.apache.kafka.server.util.PartitionMetadataClient;
import org.apache.kafka.server.util.timer.SystemTimer;
import org.apache.kafka.server.util.timer.SystemTimerReaper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Hosts Apache Kafka's group coordinator ({@code kafka-group-coordinator}, the one Kafka brokers run) on a Twinlog
 * broker: classic and consumer (KIP-848) groups, offset commits, session and rebalance timeouts, static membership
 * and offset retention all come from the library; Twinlog supplies the log ({@link CoordinatorPartitionWriter} over
 * the {@code __consumer_offsets} partitions this broker leads), the loader over those partitions, and the
 * metadata ({@link KafkaImageBridge}). See docs/decisions.md for why it is hosted rather than written.
 *
 * <p>Leadership follows the metadata image: when this broker becomes leader of a {@code __consumer_offsets}
 * partition the coordinator loads the groups of that partition from the log ({@code onElection}); when it stops
 * leading it unloads them ({@code onResignation}) and clients move to the new leader (NOT_COORDINATOR).
 *
 * <p>Threading: metadata changes are applied on one event thread of this class (never the metadata thread, since
 * the coordinator may block there while it writes tombstones for deleted topics); requests go to the library's own
 * threads and answer through futures.
 */
public final class GroupCoordinatorHost implements AutoCloseable {
    public static final String OFFSETS_TOPIC = Topic.GROUP_METADATA_TOPIC_NAME;
    private static final Logger log = LoggerFactory.getLogger(GroupCoordinatorHost.class);

    private final int brokerId;
    private final ReplicaManager replicaManager;
    private final Time time;
    private final GroupCoordinatorConfig config;
    private final GroupCoordinatorService service;
    private final Metrics metrics;
    private final GroupConfigManager groupConfigs;
    private final KafkaImageBridge bridge = new KafkaImageBridge();
    private final ExecutorService events;
    /** __consumer_offsets partitions this broker coordinates, with the leader epoch it was elected in. */
    private final Map<Integer, Integer> elected = new HashMap<>();
    private volatile boolean started;
    private volatile boolean closed;

    /**
     * @param brokerProperties the broker's configuration; Kafka's group coordinator keys ({@code offsets.*},
     *                         {@code group.*}) keep Kafka's names and defaults, except that the coordinator runs one
     *                         thread and one background thread unless configured otherwise
     * @param authorizer       the broker's authorizer, if any: the coordinator resolves a member's regex
     *                         subscription only to the topics its principal may describe, as Kafka's does
     * @param verification     how a transactional offset commit is verified with its transaction coordinator
     */
    public GroupCoordinatorHost(int brokerId, Map<String, ?> brokerProperties, ReplicaManager replicaManager,
                                Optional<Authorizer> authorizer, TransactionalOffsetVerification verification,
                                BrokerMetrics brokerMetrics, Time time) {
        this.brokerId = brokerId;
        this.metrics = brokerMetrics.kafkaMetrics();
        this.replicaManager = replicaManager;
        this.time = time;
        Map<String, Object> props = new HashMap<>(brokerProperties);
        props.putIfAbsent(GroupCoordinatorConfig.GROUP_COORDINATOR_NUM_THREADS_CONFIG, "1");
        props.putIfAbsent(GroupCoordinatorConfig.GROUP_COORDINATOR_NUM_BACKGROUND_THREADS_CONFIG, "1");
        this.config = GroupCoordinatorConfig.fromProps(props);
        this.groupConfigs = new GroupConfigManager(config, ShareGroupConfig.fromProps(props));
        CoordinatorPartitionWriter writer = new CoordinatorPartitionWriter(replicaManager, verification);
        replicaManager.addHighWatermarkListener(writer);
        this.service = new GroupCoordinatorService.Builder(brokerId, config)
                .withTime(time)
                .withTimer(new SystemTimerReaper("twinlog-group-reaper-" + brokerId,
                        new SystemTimer("twinlog-group-timer-" + brokerId)))
                .withWriter(writer)
                .withLoader(new CoordinatorLoaderImpl<>(time,
                        tp -> replicaManager.partition(tp).map(Partition::log),
                        tp -> replicaManager.partition(tp).map(p -> p.log().logEndOffset()),
                        new GroupCoordinatorRecordSerde(), config.offsetsLoadBufferSize(),
                        CoordinatorLoaderImpl.DEFAULT_COMMIT_INTERVAL_OFFSETS))
                .withCoordinatorRuntimeMetrics(new GroupCoordinatorRuntimeMetrics(metrics))
                // the broker's registry, not Kafka's JVM-wide one: brokers sharing a JVM must not share gauges
                .withGroupCoordinatorMetrics(new GroupCoordinatorMetrics(brokerMetrics.registry(), metrics))
                .withGroupConfigManager(groupConfigs)
                .withPersister(new NoOpStatePersister())
                .withAuthorizerPlugin(authorizer.map(a -> Plugin.wrapInstance(a, null, "authorizer.class.name")))
                .withPartitionMetadataClient(new NoShareGroupOffsets())
                .build();
        this.events = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "twinlog-group-events-" + brokerId);
            t.setDaemon(true);
            return t;
        });
    }

    /** The coordinator, for request handlers; check {@link #isStarted()} first. */
    public GroupCoordinator coordinator() {
        return service;
    }

    public boolean isStarted() {
        return started;
    }

    public GroupCoordinatorConfig config() {
        return config;
    }

    /** The {@code __consumer_offsets} partition that holds a group. */
    public int partitionFor(String groupId) {
        return service.partitionFor(groupId);
    }

    /** Configs of a new {@code __consumer_offsets} topic (compacted, segment size, compression). */
    public Map<String, String> offsetsTopicConfigs() {
        return service.groupMetadataTopicConfigs();
    }

    /** Metadata listener: queues the image for the event thread. */
    public void onImage(MetadataImage previous, MetadataImage next) {
        if (closed) {
            return;
        }
        try {
            events.execute(() -> apply(next));
        } catch (java.util.concurrent.RejectedExecutionException ignored) {
            // closing
        }
    }

    private void apply(MetadataImage image) {
        try {
            if (!started) {
                // the partition count is read once: the topic's if it exists, else the one it will be created with
                int partitions = image.topic(OFFSETS_TOPIC).map(t -> t.partitions().size())
                        .orElse(config.offsetsTopicPartitions());
                service.startup(() -> partitions);
                started = true;
                log.info("Group coordinator started on broker {} ({} partitions of {})", brokerId, partitions,
                        OFFSETS_TOPIC);
            }
            bridge.update(image, time.milliseconds()).ifPresent(u -> service.onMetadataUpdate(u.delta(), u.image()));
            applyLeadership(image.topic(OFFSETS_TOPIC));
        } catch (RuntimeException e) {
            log.error("Could not apply metadata to the group coordinator on broker {}", brokerId, e);
        }
    }

    private void applyLeadership(Optional<TopicImage> topic) {
        Set<Integer> partitions = topic.map(t -> t.partitions().keySet()).orElse(Set.of());
        for (Integer p : partitions) {
            Optional<Partition> local = replicaManager.partition(new TopicPartition(OFFSETS_TOPIC, p));
            Integer electedIn = elected.get(p);
            if (local.isPresent() && local.get().isLeader()) {
                int epoch = local.get().leaderEpoch();
                if (electedIn == null || electedIn != epoch) {
                    log.info("Broker {} now coordinates the groups of {}-{} (leader epoch {}); loading them", brokerId,
                            OFFSETS_TOPIC, p, epoch);
                    service.onElection(p, epoch);
                    elected.put(p, epoch);
                }
            } else if (electedIn != null) {
                resign(p, local.map(l -> OptionalInt.of(l.leaderEpoch())).orElse(OptionalInt.empty()));
            }
        }
        for (Integer p : Set.copyOf(elected.keySet())) {
            if (!partitions.contains(p)) {
                resign(p, OptionalInt.empty());
            }
        }
    }

    private void resign(int partition, OptionalInt epoch) {
        log.info("Broker {} no longer coordinates the groups of {}-{}; unloading them", brokerId, OFFSETS_TOPIC,
                partition);
        service.onResignation(partition, epoch);
        elected.remove(partition);
    }

    @Override
    public void close() {
        closed = true;
        events.shutdown();
        try {
            events.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (started) {
            service.shutdown(); // also closes the timer and the loader
        }
        groupConfigs.close();
    }

    /** Share groups are not hosted: nothing asks for their partitions' offsets. */
    private static final class NoShareGroupOffsets implements PartitionMetadataClient {
        @Override
        public Map<TopicPartition, CompletableFuture<OffsetResponse>> listLatestOffsets(Set<TopicPartition> partitions) {
            return Map.of();
        }

        @Override
        public void close() {
        }
    }
}
