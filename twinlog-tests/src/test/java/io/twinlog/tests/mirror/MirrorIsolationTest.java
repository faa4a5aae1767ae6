package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.FaultProxy;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mirrors are isolated from each other (issue 25, point 3): a peer that times out — the test kit's proxy
 * blackholed, so connections are accepted and no byte crosses — delays only its own mirror. Its failback's peer
 * lookups run on that mirror's own thread, so another mirror's failover on the same broker takes its usual time;
 * and a {@code --start} waiting on an unreachable source does not hold a {@code --stop} behind it.
 */
@Timeout(300)
class MirrorIsolationTest {
    private static final List<String> FAILBACK_TOPICS = List.of("back-a", "back-b", "back-c");

    /**
     * Destination D (brokers 0 and 1) and one source X reached through two proxies, one per mirror. m2 mirrors two
     * topics from X; m1 fails back three topics D once served and X failed over. Broker 1 leads every partition of
     * both. With m1's proxy blackholed while its partitions ask X what it last mirrored from D (LastMirroredEpochs,
     * 5 s per topic, one after the other), m2's failover of its second topic takes no longer than that of its first,
     * measured without the fault.
     */
    @Test
    void aBlackholedPeerOfOneMirrorDoesNotDelayAnotherMirrorsFailover() throws Exception {
        try (TestCluster d = TestCluster.builder().brokers(2).build().start();
             TestCluster x = TestCluster.builder().brokers(1).build().start();
             FaultProxy m1Peer = new FaultProxy("m1-peer", "127.0.0.1", x.broker(0).boundPort("PLAINTEXT"));
             FaultProxy m2Source = new FaultProxy("m2-source", "127.0.0.1", x.broker(0).boundPort("PLAINTEXT"));
             Admin dAdmin = d.admin();
             Admin xAdmin = x.admin();
             MirrorAdmin onX = MirrorAdmin.create(x.bootstrapServers(), Duration.ofSeconds(60))) {
            // D serves the topics m1 fails back later, on broker 1; X mirrors them and fails over
            for (String topic : FAILBACK_TOPICS) {
                dAdmin.createTopics(List.of(new NewTopic(topic, Map.of(0, List.of(1))))).all().get();
                produce(d, topic, 50);
            }
            onX.createClusterMirror("back", Map.of("bootstrap.servers", d.bootstrapServers()));
            assertEquals(Map.of(), onX.startMirrorTopics("back", FAILBACK_TOPICS, List.of(), List.of()));
            for (String topic : FAILBACK_TOPICS) {
                Waits.waitUntil("X holds " + topic, () -> end(x, 0, topic) == 50);
                MirrorSteps.failOver(onX, "back", topic);
                produce(x, topic, 10);
            }
            // m2: two topics of X mirrored to D, led by broker 1
            xAdmin.createTopics(List.of(new NewTopic("m2-a", 1, (short) 1), new NewTopic("m2-b", 1, (short) 1)))
                    .all().get();
            produce(x, "m2-a", 20);
            produce(x, "m2-b", 20);
            try (MirrorAdmin onD = MirrorAdmin.create(d.bootstrapServers(), Duration.ofSeconds(60))) {
                onD.createClusterMirror("m2", Map.of("bootstrap.servers", m2Source.address()));
                assertEquals(Map.of(), onD.startMirrorTopics("m2", List.of("m2-a", "m2-b"), List.of(), List.of()));
                for (String topic : List.of("m2-a", "m2-b")) {
                    TopicPartition tp = new TopicPartition(topic, 0);
                    Waits.waitUntil(topic + " exists on D", () -> dAdmin.listTopics().names().get().contains(topic));
                    dAdmin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(
                            List.of(1))))).all().get();
                    Waits.waitUntil(topic + " led by broker 1 and mirrored", () -> leader(dAdmin, topic) == 1
                            && end(d, 1, topic) == 20 && state(onD, "m2", topic).equals("MIRRORING"));
                }
                onD.createClusterMirror("m1", Map.of("bootstrap.servers", m1Peer.address()));

                long usual = timeFailover(onD, "m2", "m2-a");

                // m1's failback is started while broker 1 is away, so that its partitions ask the peer only once
                // the peer is blackholed (the start itself reads X's topics through the same proxy)
                d.stopBroker(1);
                try (MirrorAdmin onBroker0 = MirrorAdmin.create(d.bootstrapServers(), Duration.ofSeconds(60))) {
                    assertEquals(Map.of(), onBroker0.startMirrorTopics("m1", FAILBACK_TOPICS, List.of(), List.of()));
                }
                m1Peer.blackhole();
                d.startBroker(1);
                Waits.waitUntil("m1's partitions in LOG_TRUNCATION, asking the blackholed peer, and m2-b mirroring",
                        () -> FAILBACK_TOPICS.stream().allMatch(t -> state(onD, "m1", t).equals("LOG_TRUNCATION"))
                                && state(onD, "m2", "m2-b").equals("MIRRORING") && leader(dAdmin, "m2-b") == 1);

                long withFault = timeFailover(onD, "m2", "m2-b");
                System.out.printf("m2's failover: %d ms without the fault, %d ms with m1's peer blackholed%n", usual,
                        withFault);
                // before this change m2's failover waited behind m1's three lookups: 15,183 ms against 24 ms
                assertTrue(withFault < 2 * usual + 1_000, "m2's failover took " + withFault + " ms with m1's peer "
                        + "blackholed, " + usual + " ms without");
                assertEquals("LOG_TRUNCATION", state(onD, "m1", FAILBACK_TOPICS.get(2)),
                        "m1's last topic still waits on its peer: the fault held while m2 failed over");

                // the peer back: m1's failback goes on from the lookups it retries
                m1Peer.heal();
                for (String topic : FAILBACK_TOPICS) {
                    Waits.waitUntil("m1 mirrors " + topic + " again", () -> state(onD, "m1", topic)
                            .equals("MIRRORING"), Duration.ofSeconds(90));
                }
            }
        }
    }

    /**
     * A start reads the source's topics before it writes; with the source blackholed it waits out its timeouts. A
     * pause, a resume and a stop sent meanwhile to the same broker are answered at once, the topic failed over, and
     * the start that finishes later does not undo it.
     */
    @Test
    void aStopIsNotQueuedBehindAStartWaitingOnAnUnreachableSource() throws Exception {
        try (TestCluster source = TestCluster.builder().brokers(1).build().start();
             TestCluster destination = TestCluster.builder().brokers(1).build().start();
             FaultProxy address = new FaultProxy("source-address", "127.0.0.1",
                     source.broker(0).boundPort("PLAINTEXT"));
             Admin sourceAdmin = source.admin();
             MirrorAdmin starts = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60));
             MirrorAdmin stops = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
            sourceAdmin.createTopics(List.of(new NewTopic("orders", 1, (short) 1))).all().get();
            produce(source, "orders", 20);
            starts.createClusterMirror("m", Map.of("bootstrap.servers", address.address()));
            assertEquals(Map.of(), starts.startMirrorTopics("m", List.of("orders"), List.of(), List.of()));
            Waits.waitUntil("orders mirrored", () -> end(destination, 0, "orders") == 20
                    && state(stops, "m", "orders").equals("MIRRORING"));

            address.blackhole();
            CompletableFuture<Object> pendingStart = startInBackground(starts, "m", "orders");
            Waits.waitUntil("the broker's start waits on the source", () -> startWaitsOnTheSource("m"));

            // pause and resume write metadata only, on the same admin thread as stop: neither waits for the start
            long pausedAt = System.nanoTime();
            assertEquals(Map.of(), stops.pauseMirrorTopics("m", List.of("orders"), List.of()));
            long pauseMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - pausedAt);
            long resumedAt = System.nanoTime();
            assertEquals(Map.of(), stops.resumeMirrorTopics("m", List.of("orders"), List.of()));
            long resumeMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - resumedAt);
            System.out.printf("--pause and --resume behind a pending --start: %d and %d ms%n", pauseMs, resumeMs);
            assertTrue(pauseMs < 2_000 && resumeMs < 2_000, "--pause took " + pauseMs + " ms and --resume "
                    + resumeMs + " ms behind a start waiting on its source");
            assertTrue(startWaitsOnTheSource("m"), "the start was still waiting on the source");

            long began = System.nanoTime();
            assertEquals(Map.of(), stops.stopMirrorTopics("m", List.of("orders"), List.of()));
            long stopMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
            System.out.printf("--stop behind a pending --start: %d ms%n", stopMs);
            assertTrue(stopMs < 2_000, "the stop took " + stopMs + " ms behind a start waiting on its source");
            assertEquals("STOPPED", state(stops, "m", "orders"));
            assertFalse(pendingStart.isDone(), "the start was still waiting on the source");
            assertTrue(callsThreadAlive("m"), "the new leader compared its log with the source on m's own thread");

            Object startOutcome = pendingStart.get(120, TimeUnit.SECONDS);
            assertTrue(startOutcome instanceof Exception || !((Map<?, ?>) startOutcome).isEmpty(),
                    "the start waiting on a blackholed source fails: " + startOutcome);
            assertEquals("STOPPED", state(stops, "m", "orders"), "the late start did not undo the failover");
            assertEquals("STOPPED", stops.describeClusterMirrors(List.of("m")).get("m").topics().get("orders")
                    .desiredState());

            // the mirror's own calls thread ends with the mirror (or, idle, 30 s after its last call)
            stops.deleteClusterMirror("m");
            Waits.waitUntil("m's calls thread ended with the mirror", () -> !callsThreadAlive("m"));
        }
    }

    /**
     * Starts and the controller's metadata sync run per mirror too. With m1's source blackholed, a start of m1
     * waits out its source calls and so does m1's metadata sync (it lists the source's topics for its include
     * pattern); meanwhile m2, on the same broker with the same source at another address, starts a topic at once and
     * discovers a topic created on the source within a few of its one-second refresh intervals. Before, one start
     * thread and one sync thread served every mirror, and m2 waited for m1's timeouts (15 s per source call).
     */
    @Test
    void aBlackholedSourceOfOneMirrorDoesNotDelayAnotherMirrorsStartOrSync() throws Exception {
        try (TestCluster source = TestCluster.builder().brokers(1).build().start();
             TestCluster destination = TestCluster.builder().brokers(1).build().start();
             FaultProxy m1Address = new FaultProxy("m1-source", "127.0.0.1", source.broker(0).boundPort("PLAINTEXT"));
             Admin sourceAdmin = source.admin();
             MirrorAdmin m1Starts = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60));
             MirrorAdmin admin = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
            sourceAdmin.createTopics(List.of(new NewTopic("m1-orders", 1, (short) 1),
                    new NewTopic("m2-orders", 1, (short) 1))).all().get();
            admin.createClusterMirror("m1", Map.of("bootstrap.servers", m1Address.address(),
                    "mirror.topic.include", "m1-.*", "mirror.metadata.refresh.interval.ms", "1000"));
            m1Address.blackhole();
            CompletableFuture<Object> pendingStart = startInBackground(m1Starts, "m1", "m1-orders");
            Waits.waitUntil("m1's start waits on its source", () -> startWaitsOnTheSource("m1"));
            Waits.waitUntil("m1's metadata sync waits on its source", () -> syncWaitsOnTheSource("m1"));

            admin.createClusterMirror("m2", Map.of("bootstrap.servers", source.bootstrapServers(),
                    "mirror.topic.include", "m2-new-.*", "mirror.metadata.refresh.interval.ms", "1000"));
            long began = System.nanoTime();
            assertEquals(Map.of(), admin.startMirrorTopics("m2", List.of("m2-orders"), List.of(), List.of()));
            long startMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
            System.out.printf("m2's --start beside m1's start waiting on a blackholed source: %d ms%n", startMs);
            assertTrue(startMs < 5_000, "m2's start took " + startMs + " ms behind m1's");

            sourceAdmin.createTopics(List.of(new NewTopic("m2-new-1", 1, (short) 1))).all().get();
            began = System.nanoTime();
            Waits.waitUntil("m2 discovered m2-new-1", () -> admin.describeClusterMirrors(List.of("m2")).get("m2")
                    .topics().containsKey("m2-new-1"), Duration.ofSeconds(10));
            System.out.printf("m2's discovery beside m1's sync waiting on a blackholed source: %d ms%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began));
            assertTrue(syncWaitsOnTheSource("m1") || !pendingStart.isDone(), "m1 was still waiting on its source");
            m1Address.heal();
            pendingStart.get(120, TimeUnit.SECONDS);
        }
    }

    /**
     * Mirror m1 fetches from source X through a proxy in front of X's MIRROR listener (advertised at the proxy, so
     * its fetches cross it, as in the campaign); m2 mirrors from source Y. With X blackholed, m1's fetch threads sit
     * in a fetch the source never answers; m1 fails over, and its fetcher, needed no more, is closed. m2's failover
     * right after takes no longer than without the fault: the closing is off the mirror manager's thread (decision
     * 79), which every mirror's passes need, and m1's threads end at once, their fetch abandoned.
     */
    @Test
    void aFailoverBehindABlackholedSourceDoesNotDelayAnotherMirrorsFailover() throws Exception {
        try (FaultProxy xMirror = new FaultProxy("x-mirror-listener", "127.0.0.1", 1); // retargeted at X's start
             TestCluster x = MirrorSteps.startSourceBehind(xMirror, TestCluster.builder());
             TestCluster y = TestCluster.builder().brokers(1).build().start();
             TestCluster d = TestCluster.builder().brokers(1).build().start();
             Admin xAdmin = x.admin();
             Admin yAdmin = y.admin();
             MirrorAdmin onD = MirrorAdmin.create(d.bootstrapServers(), Duration.ofSeconds(60))) {
            xAdmin.createTopics(List.of(new NewTopic("far", 1, (short) 1))).all().get();
            yAdmin.createTopics(List.of(new NewTopic("near-a", 1, (short) 1), new NewTopic("near-b", 1, (short) 1)))
                    .all().get();
            produce(x, "far", 20);
            produce(y, "near-a", 20);
            produce(y, "near-b", 20);
            onD.createClusterMirror("m1", Map.of("bootstrap.servers", xMirror.address()));
            onD.createClusterMirror("m2", Map.of("bootstrap.servers", y.bootstrapServers()));
            assertEquals(Map.of(), onD.startMirrorTopics("m1", List.of("far"), List.of(), List.of()));
            assertEquals(Map.of(), onD.startMirrorTopics("m2", List.of("near-a", "near-b"), List.of(), List.of()));
            for (String[] mt : new String[][] {{"m1", "far"}, {"m2", "near-a"}, {"m2", "near-b"}}) {
                Waits.waitUntil(mt[1] + " mirrored", () -> end(d, 0, mt[1]) == 20
                        && state(onD, mt[0], mt[1]).equals("MIRRORING"));
            }
            long usual = timeFailover(onD, "m2", "near-a");

            xMirror.blackhole();
            timeFailover(onD, "m1", "far"); // needs nothing of the source
            long withFault = timeFailover(onD, "m2", "near-b");
            System.out.printf("m2's failover: %d ms without the fault, %d ms behind m1's failover from a blackholed "
                    + "source%n", usual, withFault);
            assertTrue(withFault < 2 * usual + 1_000, "m2's failover took " + withFault + " ms behind m1's, "
                    + usual + " ms without");
            // m1's fetcher, needed no more, is closed at the manager's next tick: its fetch held by the blackholed
            // source is abandoned, not waited out for its 30 s request timeout
            Waits.waitUntil("m1's fetch threads end without waiting out their fetch", () -> !fetchThreadsAlive("m1"),
                    Duration.ofSeconds(10));
        }
    }

    /** Whether a fetch thread of mirror {@code mirror} (its metadata loop or a source-broker fetcher) is alive. */
    private static boolean fetchThreadsAlive(String mirror) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.isAlive()
                && t.getName().startsWith("twinlog-mirror-fetcher-" + mirror));
    }

    /** A {@code --start} of one topic, sent now and answered later: its answer, or the exception it threw. */
    private static CompletableFuture<Object> startInBackground(MirrorAdmin admin, String mirror, String topic) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return admin.startMirrorTopics(mirror, List.of(topic), List.of(), List.of());
            } catch (Exception e) {
                return e;
            }
        });
    }

    /** The broker's start thread of mirror {@code mirror} is inside a start, waiting (it runs in this JVM). */
    private static boolean startWaitsOnTheSource(String mirror) {
        return Thread.getAllStackTraces().entrySet().stream().anyMatch(e -> e.getKey().getName()
                .equals("twinlog-mirror-start-" + mirror) && Arrays.stream(e.getValue()).anyMatch(f -> f.getClassName()
                .endsWith("MirrorTopicHandlers") && f.getMethodName().equals("start")));
    }

    /** The controller broker's sync thread of mirror {@code mirror} is inside that mirror's turn. */
    private static boolean syncWaitsOnTheSource(String mirror) {
        return Thread.getAllStackTraces().entrySet().stream().anyMatch(e -> e.getKey().getName()
                .matches("twinlog-mirror-sync-\\d+-" + mirror) && Arrays.stream(e.getValue()).anyMatch(f ->
                f.getClassName().endsWith("MirrorMetadataSync") && f.getMethodName().equals("sync")));
    }

    /** Whether a broker of this JVM runs a calls thread for mirror {@code mirror} (it ends 30 s after its last call). */
    private static boolean callsThreadAlive(String mirror) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.isAlive()
                && t.getName().matches("twinlog-mirror-calls-\\d+-" + mirror + "-\\d+"));
    }

    /** A failover of {@code topic} as the operator runs it (stop, then every partition STOPPED), in ms. */
    private static long timeFailover(MirrorAdmin admin, String mirror, String topic) throws Exception {
        long began = System.nanoTime();
        MirrorSteps.failOver(admin, mirror, topic);
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
    }

    private static String state(MirrorAdmin admin, String mirror, String topic) {
        MirrorAdmin.TopicDescription description;
        try {
            description = admin.describeClusterMirrors(List.of(mirror)).get(mirror).topics().get(topic);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return description == null || description.partitions().isEmpty() ? "NONE"
                : description.partitions().get(0).state();
    }

    private static int leader(Admin admin, String topic) throws Exception {
        var leader = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().get(0)
                .leader();
        return leader == null ? -1 : leader.id();
    }

    private static long end(TestCluster cluster, int broker, String topic) {
        return cluster.broker(broker).logStore().log(new TopicPartition(topic, 0)).map(l -> l.logEndOffset())
                .orElse(-1L);
    }

    private static void produce(TestCluster cluster, String topic, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("linger.ms", 5))) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(topic, 0, null, (topic + "-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
    }
}
