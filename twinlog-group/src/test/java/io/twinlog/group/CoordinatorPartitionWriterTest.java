package io.twinlog.group;

import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaFetcherManager;
import io.twinlog.replication.ReplicaManager;
import io.twinlog.storage.LogStore;
import io.twinlog.storage.LogStoreConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.network.PlaintextChannelBuilder;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.common.runtime.PartitionWriter;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The high-watermark notifications Kafka's coordinator runtime gets from {@link CoordinatorPartitionWriter}, over a
 * real replica manager and log: this broker leads a coordinator partition with one follower, whose fetches move
 * the high watermark. The runtime registers its listener only after it has loaded a partition, so a move between
 * its loader's last look and the registration must still reach it (else a new coordinator whose last loaded
 * records were not yet committed holds its answers until the next write).
 */
@Timeout(60)
class CoordinatorPartitionWriterTest {
    private static final int LEADER = 1;
    private static final int FOLLOWER = 2;
    private static final TopicPartition LED = new TopicPartition("__share_group_state", 0);
    private static final TopicPartition FOLLOWED = new TopicPartition("__share_group_state", 1);

    @TempDir
    File dir;
    private LogStore store;
    private ReplicaManager replicaManager;
    private CoordinatorPartitionWriter writer;

    @BeforeEach
    void start() throws Exception {
        store = new LogStore(new LogStoreConfig(LEADER, List.of(new File(dir, "broker-" + LEADER)), Map.of(),
                300_000L, 60_000L, 5_000L, false, new LogStoreConfig.CleanerSettings(1, 16L << 20, 0.9, 512 * 1024,
                Double.MAX_VALUE, 15_000L, 1_048_588), 86_400_000, 600_000, 900_000, false, 1, 10_000L),
                (ConfigResource resource) -> new Properties(), Time.SYSTEM);
        store.startup();
        ReplicaFetcherManager fetchers = new ReplicaFetcherManager(LEADER, id -> Optional.empty(), () -> 1L, 1, 100, 1,
                1 << 20, 1 << 20, 10_000, clientId -> {
                    PlaintextChannelBuilder builder = new PlaintextChannelBuilder(
                            ListenerName.normalised("PLAINTEXT"));
                    builder.configure(Map.of());
                    return builder;
                }, Time.SYSTEM);
        replicaManager = new ReplicaManager(LEADER, store, fetchers, (partition, leaderEpoch, partitionEpoch,
                newIsr) -> { }, 600_000L, Time.SYSTEM);
        Uuid topicId = Uuid.randomUuid();
        List<Integer> replicas = List.of(LEADER, FOLLOWER);
        replicaManager.applyPartition(LED, topicId, LEADER, 1, 1, replicas, replicas);
        replicaManager.applyPartition(FOLLOWED, topicId, FOLLOWER, 1, 1, replicas, replicas);
        writer = new CoordinatorPartitionWriter(replicaManager, (tp, transactionalId, producerId, producerEpoch,
                version) -> CompletableFuture.failedFuture(new IllegalStateException("no transactions")));
        replicaManager.addHighWatermarkListener(writer);
    }

    @AfterEach
    void stop() throws Exception {
        replicaManager.close();
        store.close();
    }

    @Test
    void aListenerRegisteredAfterTheHighWatermarkMovedIsToldItAtOnce() throws IOException {
        append(2);
        followerFetchesFrom(2); // the high watermark moves to 2 before anyone listens (during a load)
        assertEquals(2, leader().log().highWatermark());

        Recorder runtime = new Recorder();
        writer.registerListener(LED, runtime);
        assertEquals(List.of(2L), runtime.told);

        append(1);
        followerFetchesFrom(3);
        assertEquals(List.of(2L, 3L), runtime.told);
    }

    @Test
    void aListenerIsNeverToldALowerHighWatermarkThanBefore() throws IOException {
        Recorder runtime = new Recorder();
        writer.registerListener(LED, runtime);
        append(2);
        followerFetchesFrom(2);
        // a notification that lost the race with a later one, or with the registration, is not passed on
        writer.onHighWatermarkUpdated(LED, 1);
        writer.onHighWatermarkUpdated(LED, 2);
        assertEquals(List.of(0L, 2L), runtime.told);

        writer.deregisterListener(LED, runtime);
        append(1);
        followerFetchesFrom(3);
        assertEquals(List.of(0L, 2L), runtime.told);
    }

    @Test
    void aListenerOfAPartitionThisBrokerFollowsIsNotToldTheFollowersHighWatermark() {
        Recorder runtime = new Recorder();
        writer.registerListener(FOLLOWED, runtime);
        assertEquals(List.of(), runtime.told);
    }

    private Partition leader() {
        return replicaManager.partition(LED).orElseThrow();
    }

    private void append(int count) {
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            records[i] = new SimpleRecord(("state-" + i).getBytes(StandardCharsets.UTF_8));
        }
        writer.append(LED, VerificationGuard.SENTINEL, MemoryRecords.withRecords(Compression.NONE, records),
                (short) 0);
    }

    private void followerFetchesFrom(long offset) throws IOException {
        leader().readForFollower(FOLLOWER, 1L, offset, Optional.of(1), Optional.empty(), 1 << 20, true,
                Time.SYSTEM.milliseconds(), (partition, leaderEpoch, partitionEpoch, newIsr) -> { });
    }

    /** What Kafka's runtime listener would be told. */
    private static final class Recorder implements PartitionWriter.Listener {
        final List<Long> told = new CopyOnWriteArrayList<>();

        @Override
        public void onHighWatermarkUpdated(TopicPartition tp, long offset) {
            told.add(offset);
        }
    }
}
