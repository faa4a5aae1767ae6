package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.Quarantined;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.TestSeed;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static io.twinlog.tests.mirror.MirrorPartitions.described;
import static io.twinlog.tests.mirror.MirrorPartitions.isr;
import static io.twinlog.tests.mirror.MirrorPartitions.leaderOf;

/**
 * A seeded randomized loop over two real in-process clusters of three brokers each, mirroring one topic with
 * {@code mirror.support.unclean.leader.election} (issue 12, point 7). Each round does one thing to them: produce,
 * a clean or an unclean election on either side, a broker whose disk is lost, pause and resume, or failover with
 * writes on both clusters followed by failback (the clusters swap roles). After every round it heals them (every
 * broker up, mirroring resumed, a partition FAILED for good restarted as an operator would) and checks:
 * <ul>
 *   <li>every replica of both clusters holds the same log, batch for batch;</li>
 *   <li>every record ever acknowledged is in that log or in a quarantine, except those only Kafka's own unclean
 *       election on the writable cluster could lose (written while the replica elected later was away);</li>
 *   <li>no record twice, nothing that was not produced, batch epochs never decrease along the log.</li>
 * </ul>
 * Each run draws a fresh seed (CI explores a new run every time), logged at the start; {@code -Dtwinlog.seed=S}
 * replays one and {@code -Dtwinlog.loop.rounds=N} (default {@value #DEFAULT_ROUNDS}) sets the rounds. A failure
 * names its seed and round, and the operations so far. Real clusters have their own timing, so a seed replays the
 * same operations, not the same interleavings.
 */
@Timeout(300)
class RandomizedMirrorLoopTest {
    private static final Logger log = LoggerFactory.getLogger(RandomizedMirrorLoopTest.class);
    private static final int DEFAULT_ROUNDS = 20; // CI; a longer run: -Dtwinlog.loop.rounds
    private static final String TOPIC = "loop";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final Duration CONVERGENCE = Duration.ofSeconds(90);
    private static final String FLAG = "mirror.support.unclean.leader.election";
    private static final String SEED_PROPERTY = "twinlog.seed";

    private final List<String> history = new ArrayList<>();
    private final Set<String> acknowledged = new LinkedHashSet<>();
    /** Acknowledged while a replica that was later elected uncleanly on that cluster was away. */
    private final Set<String> atRisk = new HashSet<>();
    private final TestCluster[] clusters = new TestCluster[2];
    private final MirrorAdmin[] mirrors = new MirrorAdmin[2];
    private final boolean[] mirrorCreated = new boolean[2];
    private Random random;
    private int source; // the cluster that takes writes; the other mirrors it
    private int round;
    private int sequence;

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES)
    void mirroredClustersConvergeAfterEveryRound() throws Exception {
        TestSeed seed = TestSeed.fromProperty(SEED_PROPERTY);
        int rounds = Integer.getInteger("twinlog.loop.rounds", DEFAULT_ROUNDS);
        random = seed.random();
        log.info("Randomized mirror loop: {}, {} rounds", seed, rounds);
        try (TestCluster a = cluster().start();
             TestCluster b = cluster().start();
             MirrorAdmin onA = MirrorAdmin.create(a.bootstrapServers(), Duration.ofSeconds(30));
             MirrorAdmin onB = MirrorAdmin.create(b.bootstrapServers(), Duration.ofSeconds(30));
             Admin aAdmin = a.admin()) {
            clusters[0] = a;
            clusters[1] = b;
            mirrors[0] = onA;
            mirrors[1] = onB;
            aAdmin.createTopics(List.of(new NewTopic(TOPIC, Map.of(0, List.of(0, 1, 2))).configs(Map.of(FLAG,
                    "true")))).all().get();
            source = 0;
            produce(source, 20);
            startMirror(1);
            try (Admin bAdmin = b.admin()) {
                Waits.waitUntil("B's mirror topic", () -> bAdmin.listTopics().names().get().contains(TOPIC));
                ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, TOPIC);
                bAdmin.incrementalAlterConfigs(Map.of(topic, List.of(new AlterConfigOp(new ConfigEntry(FLAG, "true"),
                        AlterConfigOp.OpType.SET)))).all().get();
            }
            healAndCheck();
            for (round = 1; round <= rounds; round++) {
                try {
                    oneRound();
                    healAndCheck();
                } catch (Throwable t) {
                    throw new AssertionError("Randomized mirror loop failed at round " + round + " of " + seed
                            + " (replay: " + seed.replayOption() + " -Dtwinlog.loop.rounds=" + round + ")\n"
                            + String.join("\n", history), t);
                }
            }
        }
    }

    private static TestCluster cluster() {
        return TestCluster.builder().brokers(3)
                .brokerProperty("default.replication.factor", "3")
                .brokerProperty("unclean.leader.election.enable", "true")
                .build();
    }

    private void oneRound() throws Exception {
        int dice = random.nextInt(100);
        int side = random.nextInt(2);
        if (dice < 15) {
            note("produce on " + name(source));
            produce(source, 1 + random.nextInt(30));
        } else if (dice < 35) {
            cleanElection(side);
        } else if (dice < 60) {
            uncleanElection(side);
        } else if (dice < 70) {
            lostDisk(side);
        } else if (dice < 80) {
            pauseAndResume();
        } else {
            failoverAndFailback();
        }
    }

    private void cleanElection(int side) throws Exception {
        TestCluster c = clusters[side];
        int leader = awaitLeader(side);
        note("clean election on " + name(side) + ": leader " + leader + " stops");
        c.stopBroker(leader);
        produce(source, 1 + random.nextInt(10));
        c.startBroker(leader);
    }

    /**
     * A follower goes away, records are written meanwhile (on this cluster, or mirrored into it), then the leader and
     * the other follower crash and the stale follower is the only replica left: Kafka elects it uncleanly.
     */
    private void uncleanElection(int side) throws Exception {
        TestCluster c = clusters[side];
        int leader = awaitLeader(side);
        int stale = otherThan(leader, -1);
        int other = otherThan(leader, stale);
        note("unclean election on " + name(side) + ": follower " + stale + " away, then leader " + leader
                + " and " + other + " crash");
        c.stopBroker(stale);
        List<String> written = produce(source, 1 + random.nextInt(20));
        if (side == source) {
            atRisk.addAll(written); // only Kafka's own unclean election can lose these
        } else if (partition(side).state().equals("MIRRORING")) {
            // the leader about to crash holds what the stale follower lacks
            long end = clusters[source].broker(awaitLeader(source)).logStore().log(TP).orElseThrow().logEndOffset();
            Waits.waitUntil(name(side) + "'s leader mirrors up to " + end, () -> c.broker(leader).logStore().log(TP)
                    .orElseThrow().logEndOffset() >= end, CONVERGENCE);
        }
        c.killBroker(leader);
        c.killBroker(other);
        c.startBroker(stale);
        Waits.waitUntil("broker " + stale + " of " + name(side) + " leads uncleanly",
                () -> leaderOf(c, TP) == stale, CONVERGENCE);
        if (side == source) {
            produce(source, 1 + random.nextInt(5)); // in the unclean leader's new epoch
        }
        c.startBroker(leader);
        c.startBroker(other);
    }

    private void lostDisk(int side) throws Exception {
        TestCluster c = clusters[side];
        int leader = awaitLeader(side);
        int follower = otherThan(leader, -1);
        Waits.waitUntil("a full ISR on " + name(side) + " before a disk is lost", () -> isr(c, TP).size() == 3,
                CONVERGENCE);
        note("broker " + follower + " of " + name(side) + " loses its disk");
        c.killBroker(follower);
        c.wipeBroker(follower);
        produce(source, 1 + random.nextInt(10));
        c.startBroker(follower);
    }

    private void pauseAndResume() throws Exception {
        int destination = 1 - source;
        note("pause " + name(destination) + "'s mirror, produce, resume");
        mirrors[destination].pauseMirrorTopics(mirrorOn(destination), List.of(TOPIC), List.of());
        Waits.waitUntil("paused", () -> partition(destination).state().equals("PAUSED"), CONVERGENCE);
        produce(source, 1 + random.nextInt(20));
        mirrors[destination].resumeMirrorTopics(mirrorOn(destination), List.of(TOPIC), List.of());
    }

    /** Failover with writes on both clusters, then failback: the old source follows the new one (roles swap). */
    private void failoverAndFailback() throws Exception {
        int destination = 1 - source;
        note("failover to " + name(destination) + ", writes on both, failback of " + name(source));
        produce(source, random.nextInt(10));
        Map<String, ?> errors = mirrors[destination].stopMirrorTopics(mirrorOn(destination), List.of(TOPIC),
                List.of());
        if (!errors.isEmpty()) {
            throw new AssertionError("failover refused: " + errors);
        }
        Waits.waitUntil(name(destination) + " failed over", () -> partition(destination).state().equals("STOPPED"),
                CONVERGENCE);
        produce(source, 1 + random.nextInt(10)); // the old source goes on: these are cut at failback (quarantine)
        produce(destination, 1 + random.nextInt(20));
        int oldSource = source;
        source = destination;
        startMirror(oldSource);
    }

    private void startMirror(int destination) throws Exception {
        String mirror = mirrorOn(destination);
        if (!mirrorCreated[destination]) {
            mirrors[destination].createClusterMirror(mirror, Map.of("bootstrap.servers",
                    clusters[1 - destination].bootstrapServers()));
            mirrorCreated[destination] = true;
        }
        Map<String, ?> errors = mirrors[destination].startMirrorTopics(mirror, List.of(TOPIC), List.of(), List.of());
        if (!errors.isEmpty()) {
            throw new AssertionError("starting " + mirror + " refused: " + errors);
        }
    }

    /** Every broker up, the mirror going; then the checks of the class comment. */
    private void healAndCheck() throws Exception {
        int destination = 1 - source;
        for (TestCluster c : clusters) {
            for (int id = 0; id < 3; id++) {
                if (!c.runningBrokerIds().contains(id)) {
                    c.startBroker(id);
                }
            }
        }
        MirrorAdmin.PartitionDescription p = Waits.waitFor(name(destination) + " mirrors, or waits for the "
                + "operator", () -> partition(destination), d -> d.state().equals("MIRRORING")
                || d.state().equals("PAUSED") || d.state().equals("FAILED") && d.retryAttempt() < 0, CONVERGENCE);
        if (p.state().equals("PAUSED")) {
            mirrors[destination].resumeMirrorTopics(mirrorOn(destination), List.of(TOPIC), List.of());
        } else if (p.state().equals("FAILED")) {
            note("  " + name(destination) + " FAILED for good (" + p.lastError() + "): the operator starts it again");
            startMirror(destination);
        }
        Waits.waitUntil(name(destination) + " MIRRORING", () -> partition(destination).state().equals("MIRRORING"),
                CONVERGENCE);
        List<ReplicaLogs.Batch> converged = awaitConverged();
        List<String> values = new ArrayList<>();
        int epoch = -1;
        for (ReplicaLogs.Batch batch : converged) {
            if (batch.partitionLeaderEpoch() < epoch) {
                throw new AssertionError("batch epochs go down at offset " + batch.baseOffset() + ": " + converged);
            }
            epoch = batch.partitionLeaderEpoch();
            if (!batch.control()) {
                values.addAll(batch.values());
            }
        }
        Set<String> inLog = new HashSet<>(values);
        if (inLog.size() != values.size()) {
            throw new AssertionError("a record appears twice in the log: " + values);
        }
        if (!acknowledged.containsAll(inLog)) {
            Set<String> unknown = new HashSet<>(inLog);
            unknown.removeAll(acknowledged);
            throw new AssertionError("records nobody produced: " + unknown);
        }
        Set<String> quarantined = new HashSet<>(quarantine(clusters[0]));
        quarantined.addAll(quarantine(clusters[1]));
        List<String> lost = new ArrayList<>();
        for (String v : acknowledged) {
            if (!inLog.contains(v) && !quarantined.contains(v) && !atRisk.contains(v)) {
                lost.add(v);
            }
        }
        if (!lost.isEmpty()) {
            throw new AssertionError("acknowledged records neither in the log nor in a quarantine: " + lost);
        }
        note("  converged at offset " + (converged.isEmpty() ? 0 : converged.get(converged.size() - 1).lastOffset()
                + 1) + ": " + inLog.size() + " records, " + quarantined.size() + " quarantined, source " + name(source));
    }

    /** Every running replica of both clusters holds the same log. */
    private List<ReplicaLogs.Batch> awaitConverged() throws Exception {
        // the state polled is a summary per replica (offsets@epoch#crc per batch), so a timeout says who differs
        Waits.waitFor("every replica of " + TP + " on both clusters holds the same log", () -> {
            Map<String, String> logs = new TreeMap<>();
            for (int c = 0; c < 2; c++) {
                for (int id = 0; id < 3; id++) {
                    if (clusters[c].broker(id).logStore().log(TP).isEmpty()) {
                        throw new IllegalStateException(name(c) + id + " has no replica of " + TP + " yet");
                    }
                    logs.put(name(c) + id, summary(ReplicaLogs.read(clusters[c].broker(id), TP)));
                }
            }
            return logs;
        }, logs -> logs.values().stream().distinct().count() == 1, CONVERGENCE);
        return ReplicaLogs.read(clusters[source].broker(awaitLeader(source)), TP);
    }

    private static String summary(List<ReplicaLogs.Batch> batches) {
        StringBuilder out = new StringBuilder();
        for (ReplicaLogs.Batch b : batches) {
            out.append(' ').append(b.baseOffset()).append('-').append(b.lastOffset()).append('@')
                    .append(b.partitionLeaderEpoch()).append('#').append(Long.toHexString(b.crc() & 0xffff));
        }
        return out.toString();
    }

    /** The values in a cluster's quarantine, read to its end. */
    private static List<String> quarantine(TestCluster c) throws Exception {
        TopicPartition q = new TopicPartition(Quarantined.TOPIC, 0);
        List<String> out = new ArrayList<>();
        try (Admin admin = c.admin()) {
            if (!admin.listTopics().names().get().contains(Quarantined.TOPIC)) {
                return out;
            }
        }
        try (KafkaConsumer<byte[], byte[]> consumer = c.consumer(Map.of())) {
            consumer.assign(List.of(q));
            consumer.seekToBeginning(List.of(q));
            long end = consumer.endOffsets(List.of(q)).get(q);
            Waits.waitUntil("the quarantine of " + c.bootstrapServers() + " read to offset " + end, () -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    if (r.value() != null) {
                        out.add(new String(r.value(), StandardCharsets.UTF_8));
                    }
                }
                return consumer.position(q) >= end;
            });
        }
        return out;
    }

    /** Writes {@code count} new records on cluster {@code side}, acks=all; returns them once acknowledged. */
    private List<String> produce(int side, int count) throws Exception {
        List<String> written = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = clusters[side].producer(Map.of("acks", "all"))) {
            for (int i = 0; i < count; i++) {
                String v = "r" + round + "-" + name(side) + "-" + sequence++;
                p.send(new ProducerRecord<>(TOPIC, 0, null, v.getBytes(StandardCharsets.UTF_8))).get(60,
                        TimeUnit.SECONDS);
                written.add(v);
            }
        }
        acknowledged.addAll(written);
        return written;
    }

    private int awaitLeader(int side) {
        return Waits.waitFor("a leader on " + name(side), () -> leaderOf(clusters[side], TP), id -> id >= 0,
                CONVERGENCE);
    }

    private int otherThan(int a, int b) {
        List<Integer> candidates = new ArrayList<>();
        for (int id = 0; id < 3; id++) {
            if (id != a && id != b) {
                candidates.add(id);
            }
        }
        return candidates.get(random.nextInt(candidates.size()));
    }

    private MirrorAdmin.PartitionDescription partition(int destination) throws Exception {
        return described(mirrors[destination], mirrorOn(destination), TP);
    }

    private static String mirrorOn(int destination) {
        return destination == 0 ? "from-b" : "from-a";
    }

    private static String name(int side) {
        return side == 0 ? "A" : "B";
    }

    private void note(String what) {
        String line = "round " + round + ": " + what;
        history.add(line);
        log.info("[Loop] {}", line);
    }
}
