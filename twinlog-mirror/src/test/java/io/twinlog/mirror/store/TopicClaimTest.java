package io.twinlog.mirror.store;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.controller.zk.EmbeddedZooKeeper;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * One topic, one mirror at a time (issue 25, point 3's consequence: starts of different mirrors now run at once,
 * decision 84): {@link MirrorStore#claimTopicAt} on a real ZooKeeper refuses a topic another mirror mirrors, lets a
 * mirror take a topic another mirror has stopped (a failback through a mirror of another name), and of two mirrors
 * claiming a new topic at the same moment, exactly one wins.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TopicClaimTest {
    @TempDir
    File dir;
    private EmbeddedZooKeeper zooKeeper;
    private CuratorFramework zk;
    private MirrorStore store;

    @BeforeEach
    void start() throws Exception {
        zooKeeper = EmbeddedZooKeeper.start(dir, 0);
        zk = zooKeeper.connectedClient();
        store = new MirrorStore(zk);
        for (String mirror : List.of("m1", "m2")) {
            zk.create().creatingParentsIfNeeded().forPath(MirrorStore.mirrorPath(mirror));
        }
    }

    @AfterEach
    void stop() {
        zk.close();
        zooKeeper.close();
    }

    @Test
    void aRenamedTopicKeepsItsSourceNameThroughStopsPausesAndResumes() throws Exception {
        assertEquals(MirrorStore.TopicClaim.WRITTEN, store.claimTopicAt("m1", "west.orders", "orders",
                DesiredMirrorState.MIRRORING, -1));
        assertEquals(MirrorStore.TopicClaim.WRITTEN, claim("m1", "payments"));
        assertEquals(Map.of("west.orders", "orders"), store.sourceTopics("m1"), "payments keeps its name");
        store.setTopics("m1", List.of("west.orders", "payments"), DesiredMirrorState.PAUSED);
        store.setTopic("m1", "west.orders", DesiredMirrorState.STOPPED);
        assertEquals(Map.of("west.orders", "orders"), store.sourceTopics("m1"));
        assertEquals(DesiredMirrorState.STOPPED, store.topics("m1").get("west.orders"));
    }

    @Test
    void skippedTopicsAreRecordedUntilConsideredAgainAndNotSkipped() throws Exception {
        store.recordSkippedTopics("m1", Map.of("b.payments", "a loop"), List.of("b.payments", "orders"));
        assertEquals(Map.of("b.payments", "a loop"), store.skippedTopics("m1"));
        store.recordSkippedTopics("m1", Map.of(), List.of("orders"));
        assertEquals(Map.of("b.payments", "a loop"), store.skippedTopics("m1"), "not considered: kept");
        store.recordSkippedTopics("m1", Map.of(), List.of("b.payments"));
        assertEquals(Map.of(), store.skippedTopics("m1"));
        store.recordSkippedTopics("m1", Map.of("x", "why"), List.of("x"));
        store.delete("m1");
        assertEquals(Map.of(), store.skippedTopics("m1"), "gone with the mirror");
    }

    @Test
    void aTopicIsMirroredByOneMirrorUntilItStopsThere() throws Exception {
        assertEquals(MirrorStore.TopicClaim.WRITTEN, claim("m1", "orders"));
        assertEquals(MirrorStore.TopicClaim.HELD_BY_ANOTHER_MIRROR, claim("m2", "orders"));
        store.setTopic("m1", "orders", DesiredMirrorState.STOPPED); // failed over
        assertEquals(MirrorStore.TopicClaim.WRITTEN, claim("m2", "orders"), "mirrored back by another mirror");
        assertEquals(MirrorStore.TopicClaim.CHANGED, store.claimTopicAt("m2", "orders",
                DesiredMirrorState.MIRRORING, -1), "m2's own node exists now: a start that read none is stale");
    }

    @Test
    void ofTwoMirrorsClaimingANewTopicAtOnceExactlyOneWins() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            for (int i = 0; i < 30; i++) {
                String topic = "t" + i;
                CyclicBarrier together = new CyclicBarrier(2);
                CompletableFuture<MirrorStore.TopicClaim> first = CompletableFuture.supplyAsync(
                        () -> claimTogether(together, "m1", topic), threads);
                CompletableFuture<MirrorStore.TopicClaim> second = CompletableFuture.supplyAsync(
                        () -> claimTogether(together, "m2", topic), threads);
                List<MirrorStore.TopicClaim> outcomes = List.of(first.get(30, TimeUnit.SECONDS),
                        second.get(30, TimeUnit.SECONDS));
                assertEquals(1, outcomes.stream().filter(c -> c == MirrorStore.TopicClaim.WRITTEN).count(),
                        topic + ": " + outcomes);
                assertEquals(1, List.of("m1", "m2").stream().filter(m -> exists(m, topic)).count(),
                        topic + " is under one mirror only");
            }
        } finally {
            threads.shutdownNow();
        }
    }

    private MirrorStore.TopicClaim claim(String mirror, String topic) throws Exception {
        return store.claimTopicAt(mirror, topic, DesiredMirrorState.MIRRORING, store.topicVersion(mirror, topic));
    }

    private MirrorStore.TopicClaim claimTogether(CyclicBarrier together, String mirror, String topic) {
        try {
            together.await(10, TimeUnit.SECONDS);
            return claim(mirror, topic);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private boolean exists(String mirror, String topic) {
        try {
            return zk.checkExists().forPath(MirrorStore.topicsPath(mirror) + "/" + topic) != null;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
