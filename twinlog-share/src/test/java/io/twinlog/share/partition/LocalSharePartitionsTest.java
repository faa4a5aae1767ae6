package io.twinlog.share.partition;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.replication.Partition;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.GroupConfig;
import org.apache.kafka.coordinator.group.GroupConfigManager;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfig;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfigProvider;
import org.apache.kafka.server.share.acknowledge.ShareAcknowledgementBatch;
import org.apache.kafka.server.share.fetch.DelayedShareFetchGroupKey;
import org.apache.kafka.server.share.fetch.DelayedShareFetchKey;
import org.apache.kafka.server.share.fetch.DelayedShareFetchPartitionKey;
import org.apache.kafka.server.share.fetch.ShareAcquiredRecords;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.server.util.timer.SystemTimer;
import org.apache.kafka.server.util.timer.SystemTimerReaper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The manager over real partitions and Kafka's group config provider: share partitions made on the leader only,
 * group configs applied, dropped and loaded again when the persister fences them, fenced when an image moves the
 * leadership or deletes the topic, released per member, dropped when the group empties.
 */
@Timeout(60)
class LocalSharePartitionsTest {
    private static final int LEADER_EPOCH = 3;

    @TempDir
    File dir;
    private ShareTestLog log;
    private final InMemoryPersister persister = new InMemoryPersister();
    private final ManualTimer timer = new ManualTimer();
    private final Set<DelayedShareFetchKey> wakeups = ConcurrentHashMap.newKeySet();
    private GroupConfigManager groupConfigManager;
    private LocalSharePartitions partitions;

    @BeforeEach
    void start() throws Exception {
        log = new ShareTestLog(dir, "orders", LEADER_EPOCH);
        Map<String, Object> props = Map.of();
        GroupCoordinatorConfig coordinatorConfig = GroupCoordinatorConfig.fromProps(props);
        ShareGroupConfig shareConfig = ShareGroupConfig.fromProps(props);
        groupConfigManager = new GroupConfigManager(coordinatorConfig, shareConfig);
        partitions = new LocalSharePartitions(ShareTestLog.BROKER,
                tp -> tp.equals(log.partition.topicPartition()) ? Optional.of(log.replica) : Optional.empty(),
                persister, new ShareGroupConfigProvider(groupConfigManager), shareConfig, timer.time,
                group -> groupConfigManager.groupConfig(group).flatMap(GroupConfig::shareIsolationLevel)
                        .orElse(GroupConfig.defaultShareIsolationLevel()), timer);
        partitions.setWakeupListener(wakeups::add);
    }

    @AfterEach
    void stop() throws Exception {
        partitions.close();
        groupConfigManager.close();
        log.close();
    }

    /** Replaces the group's configs (as an AlterConfigs of the group resource does) with {@code keyValues}. */
    private void setGroupConfig(String group, String... keyValues) {
        Properties props = new Properties();
        for (int i = 0; i < keyValues.length; i += 2) {
            props.put(keyValues[i], keyValues[i + 1]);
        }
        groupConfigManager.updateGroupConfig(group, props);
    }

    private ShareAcquiredRecords fetch(String group, String member) throws Exception {
        Optional<SharePartitions.FetchLock> lock = partitions.tryFetchLock(group, log.partition);
        if (lock.isEmpty()) {
            return ShareAcquiredRecords.empty();
        }
        try (SharePartitions.FetchLock held = lock.get()) {
            long offset = held.nextFetchOffset();
            return held.acquire(member, 500, 100, offset, log.read(offset, 1 << 20, FetchIsolation.HIGH_WATERMARK));
        }
    }

    private SharePartitionState state(String group) {
        return partitions.state(group, log.partition).orElseThrow();
    }

    private MetadataImage image(int leader, int leaderEpoch, boolean withTopic) {
        Map<String, TopicImage> topics = new TreeMap<>();
        if (withTopic) {
            TreeMap<Integer, PartitionImage> ps = new TreeMap<>();
            ps.put(0, new PartitionImage(0, List.of(leader), new PartitionState(leader, leaderEpoch, List.of(leader),
                    leaderEpoch), 0));
            topics.put(log.partition.topic(), new TopicImage(log.partition.topic(), log.partition.topicId(), ps,
                    Map.of(), 0));
        }
        return new MetadataImage("cluster", Map.of(), topics, Map.of(), 1, MirrorImage.EMPTY);
    }

    private static void awaitTrue(BooleanSupplier condition, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(5);
        }
    }

    @Test
    void onlyTheLeaderMakesShareStatesAndAnUnknownOneCannotBeAcknowledged() throws Exception {
        TopicIdPartition elsewhere = new TopicIdPartition(Uuid.randomUuid(), new TopicPartition("other", 0));
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> partitions.initialize("g", elsewhere).get(10, TimeUnit.SECONDS));
        assertInstanceOf(NotLeaderOrFollowerException.class, e.getCause());
        assertTrue(partitions.tryFetchLock("g", log.partition).isEmpty(), "not initialized");
        ExecutionException unknown = assertThrows(ExecutionException.class, () -> partitions.acknowledge("g", "m",
                log.partition, List.of()).get(10, TimeUnit.SECONDS));
        assertInstanceOf(UnknownTopicOrPartitionException.class, unknown.getCause());
    }

    @Test
    void groupConfigsApplyPerGroup() throws Exception {
        log.append(10);
        setGroupConfig("early", GroupConfig.SHARE_AUTO_OFFSET_RESET_CONFIG, "earliest",
                GroupConfig.SHARE_ISOLATION_LEVEL_CONFIG, "read_committed");
        partitions.initialize("early", log.partition).get(10, TimeUnit.SECONDS);
        partitions.initialize("late", log.partition).get(10, TimeUnit.SECONDS);
        assertEquals(0, state("early").startOffset());
        assertEquals(10, state("late").startOffset(), "share.auto.offset.reset is latest by default");
        assertEquals(IsolationLevel.READ_COMMITTED, partitions.isolationLevel("early"));
        assertEquals(IsolationLevel.READ_UNCOMMITTED, partitions.isolationLevel("late"));
        assertEquals(10, fetch("early", "m").count());
    }

    @Test
    void aFencedStateEpochDropsTheStateAndTheNextInitializeLoadsTheNewOne() throws Exception {
        log.append(10);
        setGroupConfig("g", GroupConfig.SHARE_AUTO_OFFSET_RESET_CONFIG, "earliest");
        partitions.initialize("g", log.partition).get(10, TimeUnit.SECONDS);
        assertEquals(10, fetch("g", "m").count());
        persister.resetStartOffset("g", log.partition.topicId(), 0, 7); // kafka-share-groups.sh --reset-offsets
        ExecutionException e = assertThrows(ExecutionException.class, () -> partitions.acknowledge("g", "m",
                log.partition, List.of(new ShareAcknowledgementBatch(0, 9,
                        List.of(SharePartitionStateTest.ACCEPT)))).get(10, TimeUnit.SECONDS));
        assertInstanceOf(NotLeaderOrFollowerException.class, e.getCause());
        assertTrue(partitions.state("g", log.partition).isEmpty(), "dropped");
        assertTrue(wakeups.contains(new DelayedShareFetchGroupKey("g", log.partition)));
        assertEquals(0, timer.size(), "the dropped state's locks are cancelled");

        partitions.initialize("g", log.partition).get(10, TimeUnit.SECONDS);
        assertEquals(2, persister.reads.get());
        assertEquals(7, state("g").startOffset());
        assertEquals(3, fetch("g", "m").count());
    }

    @Test
    void anImageMovingTheLeadershipAwayOrDeletingTheTopicFencesTheShareStates() throws Exception {
        log.append(5);
        partitions.initialize("a", log.partition).get(10, TimeUnit.SECONDS);
        partitions.initialize("b", log.partition).get(10, TimeUnit.SECONDS);
        partitions.onImage(MetadataImage.EMPTY, image(ShareTestLog.BROKER, LEADER_EPOCH, true));
        partitions.onImage(MetadataImage.EMPTY, image(ShareTestLog.BROKER, LEADER_EPOCH, true));
        // the same leadership changes nothing (the fencer runs in order: a later image would be seen after it)
        partitions.onImage(MetadataImage.EMPTY, image(2, LEADER_EPOCH + 1, true));
        awaitTrue(() -> partitions.state("a", log.partition).isEmpty()
                && partitions.state("b", log.partition).isEmpty(), "both groups' states are fenced");
        assertTrue(wakeups.contains(new DelayedShareFetchPartitionKey(log.partition)));

        partitions.initialize("a", log.partition).get(10, TimeUnit.SECONDS);
        partitions.onImage(MetadataImage.EMPTY, image(ShareTestLog.BROKER, LEADER_EPOCH, false));
        awaitTrue(() -> partitions.state("a", log.partition).isEmpty(), "the deleted topic's state is fenced");
    }

    @Test
    void aNewLeaderEpochSeenOnTheFetchPathFencesTheOldState() throws Exception {
        log.append(5);
        partitions.initialize("g", log.partition).get(10, TimeUnit.SECONDS);
        SharePartitionState old = state("g");
        Partition replica = log.replica;
        replica.applyLeadership(2, LEADER_EPOCH + 1, 1, List.of(ShareTestLog.BROKER, 2), List.of(2), 0L);
        replica.applyLeadership(ShareTestLog.BROKER, LEADER_EPOCH + 2, 2, List.of(ShareTestLog.BROKER, 2),
                List.of(ShareTestLog.BROKER, 2), 0L);
        assertTrue(partitions.tryFetchLock("g", log.partition).isEmpty());
        assertEquals(SharePartitionState.Status.FENCED, old.status());
        partitions.initialize("g", log.partition).get(10, TimeUnit.SECONDS);
        assertEquals(LEADER_EPOCH + 2, state("g").leaderEpoch());
    }

    @Test
    void aMemberLeavingReleasesItsRecordsAndAnEmptyGroupIsDropped() throws Exception {
        log.append(5);
        setGroupConfig("g", GroupConfig.SHARE_AUTO_OFFSET_RESET_CONFIG, "earliest");
        partitions.initialize("g", log.partition).get(10, TimeUnit.SECONDS);
        assertEquals(5, fetch("g", "m1").count());
        assertEquals(0, fetch("g", "m2").count());
        partitions.releaseAcquiredRecords("g", "m1").get(10, TimeUnit.SECONDS);
        assertEquals(5, fetch("g", "m2").count(), "m1's records went back");
        partitions.onGroupEmpty("g");
        assertFalse(partitions.state("g", log.partition).isPresent());
        assertEquals(0, timer.size());
    }

    @Test
    void kafkasTimerExpiresTheLocksAndWakesTheGroupsFetches() throws Exception {
        Map<String, Object> props = Map.of("group.share.record.lock.duration.ms", "1000",
                "group.share.min.record.lock.duration.ms", "1000");
        ShareGroupConfig shareConfig = ShareGroupConfig.fromProps(props);
        try (GroupConfigManager configs = new GroupConfigManager(GroupCoordinatorConfig.fromProps(props), shareConfig);
             LocalSharePartitions real = new LocalSharePartitions(ShareTestLog.BROKER,
                     tp -> Optional.of(log.replica), persister, new ShareGroupConfigProvider(configs), shareConfig,
                     Time.SYSTEM, group -> IsolationLevel.READ_UNCOMMITTED,
                     new SystemTimerReaper("share-test-lock", new SystemTimer("share-test-lock")))) {
            real.setWakeupListener(wakeups::add);
            log.append(3);
            Properties earliest = new Properties();
            earliest.put(GroupConfig.SHARE_AUTO_OFFSET_RESET_CONFIG, "earliest");
            configs.updateGroupConfig("g", earliest);
            real.initialize("g", log.partition).get(10, TimeUnit.SECONDS);
            ShareAcquiredRecords first;
            try (SharePartitions.FetchLock lock = real.tryFetchLock("g", log.partition).orElseThrow()) {
                first = lock.acquire("m1", 500, 100, 0, log.read(0, 1 << 20, FetchIsolation.HIGH_WATERMARK));
            }
            assertEquals(3, first.count());
            awaitTrue(() -> wakeups.contains(new DelayedShareFetchGroupKey("g", log.partition)),
                    "the 1 s lock expires on Kafka's timer and wakes the group's fetches");
            try (SharePartitions.FetchLock lock = real.tryFetchLock("g", log.partition).orElseThrow()) {
                ShareAcquiredRecords again = lock.acquire("m2", 500, 100, lock.nextFetchOffset(),
                        log.read(lock.nextFetchOffset(), 1 << 20, FetchIsolation.HIGH_WATERMARK));
                assertEquals(2, again.acquiredRecords().get(0).deliveryCount());
            }
        }
    }
}
