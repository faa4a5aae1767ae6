package io.twinlog.mirror.store;

import io.twinlog.controller.zk.EmbeddedZooKeeper;
import io.twinlog.controller.zk.ZkBatch;
import io.twinlog.controller.zk.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The mirror store's records outside {@code /mirrors}, on a real ZooKeeper: {@link MirrorProgressStore} (batched
 * writes that create what is missing, batched reads that leave out what was never written) and
 * {@link MirrorGroupSyncStore} (records by group ID whatever characters it holds, pruning, deletion).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MirrorSideStoresTest {
    @TempDir
    File dir;
    private EmbeddedZooKeeper zooKeeper;
    private CuratorFramework zk;
    private MirrorProgressStore progress;
    private MirrorGroupSyncStore groupSyncs;

    @BeforeEach
    void start() throws Exception {
        zooKeeper = EmbeddedZooKeeper.start(dir, 0);
        zk = zooKeeper.connectedClient();
        progress = new MirrorProgressStore(zk);
        groupSyncs = new MirrorGroupSyncStore(zk);
    }

    @AfterEach
    void stop() {
        zk.close();
        zooKeeper.close();
    }

    @Test
    void progressOfNewAndKnownPartitionsIsWrittenInBatchesAndReadBack() throws Exception {
        Map<TopicPartition, MirrorProgress> first = new LinkedHashMap<>();
        int partitions = ZkBatch.CHUNK + 20; // two batches
        for (int p = 0; p < partitions; p++) {
            first.put(new TopicPartition(p % 2 == 0 ? "a" : "b", p), new MirrorProgress(p, p - 1));
        }
        progress.write(new TopicPartition("a", 0), new MirrorProgress(-5, -5)); // one exists already
        progress.writeAll(first);
        assertEquals(first, progress.readAll(first.keySet()));

        Map<TopicPartition, MirrorProgress> next = Map.of(new TopicPartition("a", 0), new MirrorProgress(100, 99));
        progress.writeAll(next);
        assertEquals(next, progress.readAll(next.keySet()), "existing nodes are replaced");
    }

    @Test
    void partitionsWithoutProgressAreLeftOut() throws Exception {
        TopicPartition written = new TopicPartition("t", 0);
        progress.write(written, new MirrorProgress(10, 9));
        assertEquals(Map.of(written, new MirrorProgress(10, 9)),
                progress.readAll(List.of(written, new TopicPartition("t", 1), new TopicPartition("other", 0))));
        assertEquals(true, zk.checkExists().forPath(ZkPaths.mirrorProgress("t", 0)) != null);
    }

    @Test
    void groupSyncRecordsAreKeptByIdWhateverItsCharacters() throws Exception {
        assertEquals(Map.of(), groupSyncs.records("m1"), "before the first sync");
        assertEquals(Set.of(), groupSyncs.ids("m1"));
        GroupSyncRecord slash = new GroupSyncRecord("a/b", GroupSyncRecord.Type.CONSUMER, 1_000, 3, 0);
        GroupSyncRecord dots = new GroupSyncRecord("..", GroupSyncRecord.Type.SHARE, 2_000, 1, 1);
        groupSyncs.record("m1", slash);
        groupSyncs.record("m1", dots);
        groupSyncs.record("m2", slash);
        GroupSyncRecord again = new GroupSyncRecord("a/b", GroupSyncRecord.Type.CONSUMER, 3_000, 4, 0);
        groupSyncs.record("m1", again);
        assertEquals(Map.of("a/b", again, "..", dots), groupSyncs.records("m1"), "the last record replaces");
        assertEquals(Set.of("a/b", ".."), groupSyncs.ids("m1"));

        groupSyncs.remove("m1", List.of("..", "never-synced"));
        assertEquals(Set.of("a/b"), groupSyncs.ids("m1"));
        groupSyncs.deleteAll("m1");
        groupSyncs.deleteAll("m3"); // nothing to delete
        assertEquals(Map.of(), groupSyncs.records("m1"));
        assertEquals(Set.of("a/b"), groupSyncs.ids("m2"), "another mirror's records are its own");
    }
}
