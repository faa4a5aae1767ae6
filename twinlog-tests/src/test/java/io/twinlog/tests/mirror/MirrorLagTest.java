package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.replication.Partition;
import io.twinlog.testkit.MirroredClusters;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Lag in DescribeClusterMirrors is the same whichever destination broker answers: all report the source high
 * watermark and log end the partition leader records; after the source moves on while paused,
 * every broker reports the gap, and after resume every broker reports it closed. A follower that has fallen behind
 * reports the leader's progress, not its own log end. The newest mirrored timestamp is the last record's
 * CreateTime on every broker, the RPO of an idle, caught-up partition stays small although its records are an hour
 * old (decision 122), and a new leader knows the newest timestamp from its own log.
 */
@Timeout(300)
class MirrorLagTest {
    private static final String TOPIC = "metrics";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    /**
     * Under this, the RPO of a caught-up partition: its leader records the mirrored-up-to time at most every 5 s
     * (the progress interval), after a fetch that waits up to 500 ms at the source.
     */
    private static final long SMALL_RPO_MS = 15_000;

    @Test
    void everyDestinationBrokerReportsTheSameLag() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(1),
                TestCluster.builder().brokers(3).brokerProperty("default.replication.factor", "3"))) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            MirrorAdmin mirrors = clusters.mirrors();
            clusters.createSourceTopics(new NewTopic(TOPIC, 1, (short) 1));
            // records an hour old: only a fetch that finds the partition caught up keeps its RPO small
            long first = System.currentTimeMillis() - 3_600_000L;
            produceAt(source, 500, first);
            clusters.mirror("m", TOPIC);
            for (int id = 0; id < 3; id++) {
                awaitReported(destination, id, 500, 500, 0);
            }
            clusters.awaitMirrored(TP);
            for (int id = 0; id < 3; id++) {
                awaitMirroredTime(destination, id, first + 499, -1L);
            }
            // idle and caught up: the mirrored-up-to time moves on with the fetches, the RPO stays small
            long upTo = partition(mirrors).mirroredUpToMs();
            MirrorAdmin.PartitionDescription idle = Waits.waitFor("the mirrored-up-to time moves on while idle",
                    () -> partition(mirrors), p -> p.mirroredUpToMs() >= upTo + 2_000);
            assertTrue(idle.rpoMs() >= 0 && idle.rpoMs() < SMALL_RPO_MS, "an idle, caught-up partition: " + idle);
            assertEquals(first + 499, idle.newestMirroredTimestamp());

            assertEquals(Map.of(), mirrors.pauseMirrorTopics("m", List.of(TOPIC), List.of()));
            Waits.waitUntil("paused", () -> partition(mirrors).state().equals("PAUSED"));
            produceAt(source, 300, first + 1_000);
            // paused: nothing is fetched, so the source's new end is not known: the last known lag (0) stays
            for (int id = 0; id < 3; id++) {
                awaitReported(destination, id, 500, 500, 0);
            }
            assertEquals(Map.of(), mirrors.resumeMirrorTopics("m", List.of(TOPIC), List.of()));
            for (int id = 0; id < 3; id++) {
                awaitReported(destination, id, 800, 800, 0);
            }
            clusters.awaitMirrored(TP);
            for (int id = 0; id < 3; id++) {
                awaitMirroredTime(destination, id, first + 1_299, -1L);
            }

            // a new leader knows the newest timestamp from its own log (the source is idle: nothing is appended)
            int leader = MirrorPartitions.leaderOf(destination, TP);
            long stoppedAt = System.currentTimeMillis();
            destination.stopBroker(leader);
            int other = destination.runningBrokerIds().get(0);
            Waits.waitUntil("another destination broker leads", () -> MirrorPartitions.leaderOf(destination, TP) >= 0
                    && MirrorPartitions.leaderOf(destination, TP) != leader);
            awaitMirroredTime(destination, other, first + 1_299, stoppedAt);
        }
    }

    /**
     * Waits until broker {@code id}, asked alone, reports {@code newest} as the partition's newest mirrored
     * timestamp (exactly: the last record's CreateTime), a mirrored-up-to time recorded after {@code after} and
     * at or after that timestamp, and a small RPO.
     */
    private static void awaitMirroredTime(TestCluster destination, int id, long newest, long after) throws Exception {
        try (MirrorAdmin viaOne = MirrorAdmin.create(destination.broker(id).bootstrapServers(), Duration.ofSeconds(30))) {
            Waits.waitFor("broker " + id + " reports newest mirrored timestamp " + newest + ", mirrored up to after "
                    + after + " and an RPO under " + SMALL_RPO_MS + " ms", () -> partition(viaOne),
                    p -> p.newestMirroredTimestamp() == newest && p.mirroredUpToMs() > after
                    && p.mirroredUpToMs() >= newest && p.rpoMs() >= 0 && p.rpoMs() < SMALL_RPO_MS);
        }
    }

    /** Writes {@code count} records with CreateTime {@code firstTimestamp}, +1 ms each, and waits for every ack. */
    private static void produceAt(TestCluster cluster, int count, long firstTimestamp) throws Exception {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 5))) {
            for (int i = 0; i < count; i++) {
                sent.add(p.send(new ProducerRecord<>(TOPIC, 0, firstTimestamp + i, null,
                        ("r" + i).getBytes(StandardCharsets.UTF_8))));
            }
        }
        for (Future<RecordMetadata> f : sent) {
            f.get();
        }
    }

    /**
     * A follower that has fallen behind (cut off from its leader) still reports the leader's destination end and
     * lag, not its own log end: the answer does not depend on which broker is asked; once out of the ISR it is
     * named in describe, and no longer once it has caught up.
     */
    @Test
    void aFollowerThatFellBehindReportsTheLeadersProgress() throws Exception {
        try (MirroredClusters clusters = MirroredClusters.start(TestCluster.builder().brokers(1),
                TestCluster.builder().brokers(3).withFaultProxies().brokerProperty("default.replication.factor", "3")
                        .brokerProperty("replica.lag.time.max.ms", "3000"))) {
            TestCluster source = clusters.source();
            TestCluster destination = clusters.destination();
            MirrorAdmin mirrors = clusters.mirrors();
            clusters.createSourceTopics(new NewTopic(TOPIC, 1, (short) 1));
            produce(source, 200);
            clusters.mirror("m", TOPIC);
            int leader = Waits.waitFor("a destination leader", () -> leaderOf(destination, TP), id -> id >= 0);
            // the leader's ISR change goes to the controller: cut a follower that is not the controller
            int controller = destination.broker(leader).metadata().image().controllerId();
            int follower = IntStream.range(0, 3).filter(id -> id != leader && id != controller).findFirst()
                    .orElseThrow();
            Waits.waitUntil("the follower holds all 200 records", () -> logEnd(destination, follower, TP) == 200);
            clusters.awaitMirrored(TP);

            int recordVersion = stateRecordVersion(destination, leader);
            destination.cutNetwork(leader, follower);
            produce(source, 300);
            awaitReported(destination, leader, 500, 500, 0);
            awaitReported(destination, follower, 500, 500, 0);
            assertEquals(recordVersion, stateRecordVersion(destination, leader),
                    "progress alone does not rewrite the state record every broker watches");
            assertEquals(200, logEnd(destination, follower, TP), "the cut follower has not moved");
            // out of the ISR once it has lagged replica.lag.time.max.ms: describe names it, from any broker
            Waits.waitFor("describe names the cut follower out of sync", () -> partition(mirrors),
                    p -> p.outOfSyncReplicas().equals(List.of(follower)));

            destination.healNetwork(leader, follower);
            Waits.waitFor("describe shows every replica in sync again", () -> partition(mirrors),
                    p -> p.outOfSyncReplicas().isEmpty());
            clusters.awaitMirrored(TP); // the cut follower caught up batch for batch
        }
    }

    /** The ZooKeeper version of the partition's mirror state record, as broker {@code id}'s image has it. */
    private static int stateRecordVersion(TestCluster cluster, int id) {
        return cluster.broker(id).metadata().image().mirrors().partitions().get(TP).version();
    }

    private static int leaderOf(TestCluster cluster, TopicPartition tp) {
        for (Integer id : cluster.runningBrokerIds()) {
            if (cluster.broker(id).replicaManager().partition(tp).map(Partition::isLeader).orElse(false)) {
                return id;
            }
        }
        return -1;
    }

    private static long logEnd(TestCluster cluster, int id, TopicPartition tp) {
        return cluster.broker(id).replicaManager().partition(tp).map(p -> p.log().logEndOffset()).orElse(-1L);
    }

    /** Waits until broker {@code id}, asked alone, reports these offsets and lag. */
    private static void awaitReported(TestCluster destination, int id, long sourceEnd, long destinationEnd, long lag)
            throws Exception {
        try (MirrorAdmin viaOne = MirrorAdmin.create(destination.broker(id).bootstrapServers(), Duration.ofSeconds(30))) {
            Waits.waitFor("broker " + id + " reports source end " + sourceEnd + ", destination end "
                    + destinationEnd + ", lag " + lag, () -> partition(viaOne), p -> p.sourceLogEndOffset() == sourceEnd
                    && p.destinationLogEndOffset() == destinationEnd && p.lag() == lag);
        }
    }

    private static MirrorAdmin.PartitionDescription partition(MirrorAdmin admin) throws Exception {
        return MirroredClusters.partition(admin, "m", TP);
    }

    private static void produce(TestCluster cluster, int count) throws Exception {
        cluster.produce(TOPIC, 0, count, "r");
    }
}
