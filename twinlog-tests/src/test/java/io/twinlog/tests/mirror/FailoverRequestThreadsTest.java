package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.replication.Partition;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mirror API calls that wait do not hold request threads: with two request handler threads, four failovers waiting
 * for a partition whose leader is down (they answer "still in progress" after their bound), or four mirror
 * creations waiting on a source that accepts connections and never answers, leave produce to the same broker
 * answered at once.
 */
@Timeout(300)
class FailoverRequestThreadsTest {
    private static final String MIRRORED = "orders";
    private static final String PLAIN = "audit";

    @Test
    void waitingFailoversLeaveProduceAnswered() throws Exception {
        try (TestCluster source = TestCluster.builder().brokers(1).build().start();
             TestCluster destination = TestCluster.builder().brokers(2)
                     .brokerProperty("default.replication.factor", "1").brokerProperty("num.io.threads", "2")
                     .build().start();
             Admin sourceAdmin = source.admin();
             Admin destinationAdmin = destination.admin();
             MirrorAdmin mirrors = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(60))) {
            sourceAdmin.createTopics(List.of(new NewTopic(MIRRORED, 1, (short) 1))).all().get();
            MirrorSteps.startMirroring(mirrors, "dr", source, MIRRORED);
            TopicPartition tp = new TopicPartition(MIRRORED, 0);
            int mirrorLeader = Waits.waitFor("a leader of the mirror partition", () -> leaderOf(destination, tp),
                    id -> id >= 0);
            int survivor = 1 - mirrorLeader;
            destinationAdmin.createTopics(List.of(new NewTopic(PLAIN, Map.of(0, List.of(survivor))))).all().get();
            destination.killBroker(mirrorLeader); // the mirror partition has no leader: its failover cannot finish

            List<CompletableFuture<Map<String, MirrorException>>> failovers = new ArrayList<>();
            List<MirrorAdmin> clients = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                MirrorAdmin client = MirrorAdmin.create(destination.broker(survivor).bootstrapServers(),
                        Duration.ofSeconds(60));
                clients.add(client);
                failovers.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return client.stopMirrorTopics("dr", List.of(MIRRORED), List.of());
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
            try (KafkaProducer<byte[], byte[]> producer = producerTo(destination, survivor)) {
                long slowestMs = slowestProduceMs(producer); // while the four failovers wait (their bound is 30 s)
                assertTrue(failovers.stream().noneMatch(CompletableFuture::isDone),
                        "the failovers were still waiting while the records were produced");
                assertTrue(slowestMs < 3_000, "a produce waited " + slowestMs + " ms behind the failovers");
            }
            for (CompletableFuture<Map<String, MirrorException>> f : failovers) {
                Map<String, MirrorException> result = f.get(60, TimeUnit.SECONDS);
                assertEquals(Errors.REQUEST_TIMED_OUT.code(), result.get(MIRRORED).errorCode(),
                        "failover still in progress: " + result);
            }
            for (MirrorAdmin client : clients) {
                client.close();
            }
        }
    }

    @Test
    void mirrorCreationsWaitingOnASilentSourceLeaveProduceAnswered() throws Exception {
        // a listening socket nobody accepts from: the kernel completes the connection, no answer ever comes
        try (ServerSocket silentSource = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
             TestCluster destination = TestCluster.builder().brokers(1).brokerProperty("num.io.threads", "2")
                     .build().start();
             Admin destinationAdmin = destination.admin()) {
            destinationAdmin.createTopics(List.of(new NewTopic(PLAIN, 1, (short) 1))).all().get();
            String silent = "127.0.0.1:" + silentSource.getLocalPort();
            List<MirrorAdmin> clients = new ArrayList<>();
            List<CompletableFuture<Void>> creations = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                MirrorAdmin client = MirrorAdmin.create(destination.bootstrapServers(), Duration.ofSeconds(90));
                clients.add(client);
                String name = "silent-" + i;
                creations.add(CompletableFuture.runAsync(() -> {
                    try {
                        client.createClusterMirror(name, Map.of("bootstrap.servers", silent));
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
            try (KafkaProducer<byte[], byte[]> producer = producerTo(destination, 0)) {
                long slowestMs = slowestProduceMs(producer);
                assertTrue(creations.stream().noneMatch(CompletableFuture::isDone),
                        "the creations were still waiting on the source while the records were produced");
                assertTrue(slowestMs < 3_000, "a produce waited " + slowestMs + " ms behind the creations");
            }
            for (CompletableFuture<Void> c : creations) {
                c.get(90, TimeUnit.SECONDS); // created anyway: the source's ID is recorded at first contact
            }
            assertEquals(4, clients.get(0).listClusterMirrors(false).size());
            for (MirrorAdmin client : clients) {
                client.close();
            }
        }
    }

    /** Produces one record after another for 5 s; the slowest acknowledgement. */
    private static long slowestProduceMs(KafkaProducer<byte[], byte[]> producer) throws Exception {
        long slowestMs = 0;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        for (int i = 0; System.nanoTime() < end; i++) {
            long start = System.nanoTime();
            producer.send(new ProducerRecord<>(PLAIN, ("r" + i).getBytes(StandardCharsets.UTF_8)))
                    .get(30, TimeUnit.SECONDS);
            slowestMs = Math.max(slowestMs, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        }
        return slowestMs;
    }

    private static int leaderOf(TestCluster cluster, TopicPartition tp) {
        for (Integer id : cluster.runningBrokerIds()) {
            if (cluster.broker(id).replicaManager().partition(tp).map(Partition::isLeader).orElse(false)) {
                return id;
            }
        }
        return -1;
    }

    private static KafkaProducer<byte[], byte[]> producerTo(TestCluster cluster, int broker) {
        return cluster.producer(Map.of("bootstrap.servers", cluster.broker(broker).bootstrapServers(),
                "delivery.timeout.ms", 30_000, "request.timeout.ms", 29_000));
    }
}
