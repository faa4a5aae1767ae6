package io.twinlog.share.partition;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownTopicIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.ShareFetchResponseData.AcquiredRecords;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.ShareGroupAutoOffsetResetStrategy;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfig;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfigProvider;
import org.apache.kafka.server.share.acknowledge.ShareAcknowledgementBatch;
import org.apache.kafka.server.share.fetch.DelayedShareFetchGroupKey;
import org.apache.kafka.server.share.fetch.DelayedShareFetchKey;
import org.apache.kafka.server.share.fetch.DelayedShareFetchPartitionKey;
import org.apache.kafka.server.share.persister.Persister;
import org.apache.kafka.server.util.timer.SystemTimer;
import org.apache.kafka.server.util.timer.SystemTimerReaper;
import org.apache.kafka.server.util.timer.Timer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * This broker's share partitions: one {@link SharePartitionState} per (group, partition) this broker leads, made on
 * the first {@link #initialize} and dropped when it is fenced: leadership left this broker or moved to a new epoch,
 * the topic was deleted (both from metadata images, {@link #onImage}, and checked again on each fetch lock), the
 * share coordinator fenced its state epoch, its state could not be loaded, or the group emptied.
 *
 * <p>Threads: callers' (request handlers, the session cache's listeners); {@code twinlog-share-lock-<id>} (Kafka's
 * timer, which expires acquisition locks on its executor); {@code twinlog-share-fence-<id>} for image changes, so the
 * image applier never waits on a share partition's lock. The wake-up listener is called from any of these and from
 * the persister's threads, never under a share partition's lock.
 */
public final class LocalSharePartitions implements SharePartitions {
    private static final Logger log = LoggerFactory.getLogger(LocalSharePartitions.class);

    private record Key(String groupId, TopicIdPartition partition) {
    }

    private final int brokerId;
    private final Function<TopicPartition, Optional<Partition>> partitions;
    private final Persister persister;
    private final ShareGroupConfigProvider groupConfigs;
    private final ShareGroupConfig brokerConfig;
    private final Function<String, IsolationLevel> isolationLevels;
    private final Time time;
    private final Timer timer;
    private final ExecutorService fencer;
    private final Map<Key, SharePartitionState> states = new ConcurrentHashMap<>();
    private final SharePartitionState.Listener stateListener = new SharePartitionState.Listener() {
        @Override
        public void onAcquirable(SharePartitionState state) {
            wake(new DelayedShareFetchGroupKey(state.groupId(), state.partition()));
        }

        @Override
        public void onFenced(SharePartitionState state) {
            states.remove(new Key(state.groupId(), state.partition()), state);
            wake(new DelayedShareFetchGroupKey(state.groupId(), state.partition()));
            wake(new DelayedShareFetchPartitionKey(state.partition()));
        }
    };
    private volatile Consumer<DelayedShareFetchKey> wakeupListener = key -> { };

    public LocalSharePartitions(int brokerId, ReplicaManager replicaManager, Persister persister,
                                ShareGroupConfigProvider groupConfigs, ShareGroupConfig brokerConfig, Time time) {
        this(brokerId, replicaManager, persister, groupConfigs, brokerConfig, time,
                group -> IsolationLevel.READ_UNCOMMITTED);
    }

    /**
     * @param isolationLevels each group's {@code share.isolation.level} (Kafka's {@code ShareGroupConfigProvider} does
     *                        not offer it; the broker reads it from its {@code GroupConfigManager})
     */
    public LocalSharePartitions(int brokerId, ReplicaManager replicaManager, Persister persister,
                                ShareGroupConfigProvider groupConfigs, ShareGroupConfig brokerConfig, Time time,
                                Function<String, IsolationLevel> isolationLevels) {
        this(brokerId, replicaManager::partition, persister, groupConfigs, brokerConfig, time, isolationLevels,
                new SystemTimerReaper("twinlog-share-lock-" + brokerId,
                        new SystemTimer("twinlog-share-lock-" + brokerId)));
    }

    /** Over any replicas (tests give real partitions without a replica manager) and any timer. */
    LocalSharePartitions(int brokerId, Function<TopicPartition, Optional<Partition>> partitions, Persister persister,
                         ShareGroupConfigProvider groupConfigs, ShareGroupConfig brokerConfig, Time time,
                         Function<String, IsolationLevel> isolationLevels, Timer timer) {
        this.brokerId = brokerId;
        this.partitions = partitions;
        this.persister = persister;
        this.groupConfigs = groupConfigs;
        this.brokerConfig = brokerConfig;
        this.isolationLevels = isolationLevels;
        this.time = time;
        this.timer = timer;
        this.fencer = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "twinlog-share-fence-" + brokerId);
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public CompletableFuture<Void> initialize(String groupId, TopicIdPartition partition) {
        Optional<Partition> replica = leader(partition);
        if (replica.isEmpty()) {
            return CompletableFuture.failedFuture(new NotLeaderOrFollowerException("Broker " + brokerId
                    + " is not the leader of " + partition.topicPartition()));
        }
        if (!replica.get().topicId().equals(partition.topicId())) {
            return CompletableFuture.failedFuture(new UnknownTopicIdException("Topic " + partition.topic()
                    + " has the id " + replica.get().topicId() + " here, not " + partition.topicId()));
        }
        Key key = new Key(groupId, partition);
        int leaderEpoch = replica.get().leaderEpoch();
        SharePartitionState existing = states.get(key);
        if (existing != null && existing.leaderEpoch() != leaderEpoch) {
            existing.fence("leader epoch " + leaderEpoch + " replaced " + existing.leaderEpoch());
        }
        if (existing != null && existing.status() == SharePartitionState.Status.FENCED) {
            // fenced on another thread a moment ago, its listener not yet run: do not hand it out again
            states.remove(key, existing);
        }
        SharePartitionState state = states.computeIfAbsent(key, k -> new SharePartitionState(groupId, partition,
                leaderEpoch, SharePartitionLog.of(replica.get()), persister, timer, time, settings(groupId),
                stateListener));
        return state.maybeInitialize();
    }

    @Override
    public Optional<FetchLock> tryFetchLock(String groupId, TopicIdPartition partition) {
        SharePartitionState state = states.get(new Key(groupId, partition));
        if (state == null) {
            return Optional.empty();
        }
        Optional<Partition> replica = leader(partition);
        if (replica.isEmpty() || replica.get().leaderEpoch() != state.leaderEpoch()) {
            state.fence("this broker no longer leads it in epoch " + state.leaderEpoch());
            return Optional.empty();
        }
        return state.tryFetchLock();
    }

    @Override
    public CompletableFuture<Void> acknowledge(String groupId, String memberId, TopicIdPartition partition,
                                               List<ShareAcknowledgementBatch> batches) {
        SharePartitionState state = states.get(new Key(groupId, partition));
        if (state == null) {
            // Kafka's answer when no share partition exists here for the group (never fetched, or dropped)
            return CompletableFuture.failedFuture(new UnknownTopicOrPartitionException("No share partition of group "
                    + groupId + " for " + partition + " on broker " + brokerId));
        }
        return state.acknowledge(memberId, batches);
    }

    @Override
    public void returnUndelivered(String groupId, String memberId, TopicIdPartition partition,
                                  List<AcquiredRecords> acquired) {
        SharePartitionState state = states.get(new Key(groupId, partition));
        if (state != null) {
            state.returnUndelivered(memberId, acquired);
        }
    }

    @Override
    public CompletableFuture<Void> releaseAcquiredRecords(String groupId, String memberId) {
        List<CompletableFuture<Void>> releases = new ArrayList<>();
        for (SharePartitionState state : states.values()) {
            if (state.groupId().equals(groupId)) {
                releases.add(state.releaseAcquiredRecords(memberId).exceptionally(e -> {
                    // one partition's failure does not keep the others' records: they are released regardless
                    log.warn("[SharePartitions broker={}] could not persist the release of {}'s records of {}",
                            brokerId, memberId, state, e);
                    return null;
                }));
            }
        }
        return CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new));
    }

    @Override
    public void onGroupEmpty(String groupId) {
        for (SharePartitionState state : List.copyOf(states.values())) {
            if (state.groupId().equals(groupId)) {
                state.fence("group " + groupId + " has no member left on this broker");
            }
        }
    }

    @Override
    public void setWakeupListener(Consumer<DelayedShareFetchKey> listener) {
        this.wakeupListener = listener;
    }

    @Override
    public IsolationLevel isolationLevel(String groupId) {
        return isolationLevels.apply(groupId);
    }

    /**
     * Fences the share partitions whose leadership left this broker, moved to another epoch, or whose topic was
     * deleted (its id is gone). Done on {@code twinlog-share-fence-<id>}: fencing takes share partitions' locks.
     */
    public void onImage(MetadataImage previous, MetadataImage next) {
        try {
            fencer.execute(() -> fenceStale(next));
        } catch (RejectedExecutionException e) {
            log.debug("[SharePartitions broker={}] closed: image not applied", brokerId);
        }
    }

    private void fenceStale(MetadataImage image) {
        for (SharePartitionState state : List.copyOf(states.values())) {
            TopicIdPartition tip = state.partition();
            Optional<TopicImage> topic = image.topic(tip.topicId());
            PartitionImage p = topic.map(t -> t.partitions().get(tip.partition())).orElse(null);
            if (p == null) {
                state.fence("topic " + tip.topic() + " (" + tip.topicId() + ") is gone");
            } else if (p.leader() != brokerId) {
                state.fence("broker " + p.leader() + " leads it now");
            } else if (p.leaderEpoch() > state.leaderEpoch()) {
                state.fence("leader epoch " + p.leaderEpoch() + " replaced " + state.leaderEpoch());
            }
        }
    }

    private Optional<Partition> leader(TopicIdPartition partition) {
        return partitions.apply(partition.topicPartition()).filter(Partition::isLeader);
    }

    private void wake(DelayedShareFetchKey key) {
        try {
            wakeupListener.accept(key);
        } catch (RuntimeException e) {
            // broad: the listener's failure must not fail the acknowledgement that woke it
            log.error("[SharePartitions broker={}] the wake-up listener failed for {}", brokerId, key, e);
        }
    }

    private SharePartitionState.GroupSettings settings(String groupId) {
        return new SharePartitionState.GroupSettings() {
            @Override
            public int recordLockDurationMs() {
                return groupConfigs.recordLockDurationMsOrDefault(groupId,
                        brokerConfig.shareGroupRecordLockDurationMs());
            }

            @Override
            public int deliveryCountLimit() {
                return groupConfigs.deliveryCountLimitOrDefault(groupId, brokerConfig.shareGroupDeliveryCountLimit());
            }

            @Override
            public int maxRecordLocks() {
                return groupConfigs.partitionMaxRecordLocksOrDefault(groupId,
                        brokerConfig.shareGroupPartitionMaxRecordLocks());
            }

            @Override
            public ShareGroupAutoOffsetResetStrategy autoOffsetReset() {
                return groupConfigs.autoOffsetReset(groupId);
            }

            @Override
            public boolean renewAcknowledgeEnabled() {
                return groupConfigs.isRenewAcknowledgeEnabled(groupId);
            }
        };
    }

    /** The share partition of a group, if this broker holds one (tests). */
    Optional<SharePartitionState> state(String groupId, TopicIdPartition partition) {
        return Optional.ofNullable(states.get(new Key(groupId, partition)));
    }

    @Override
    public void close() {
        fencer.shutdownNow();
        try {
            fencer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (SharePartitionState state : List.copyOf(states.values())) {
            state.close();
        }
        states.clear();
        try {
            timer.close();
        } catch (Exception e) {
            // broad: Kafka's timer close throws Exception; closing goes on
            log.warn("[SharePartitions broker={}] could not stop the acquisition lock timer", brokerId, e);
        }
    }
}
