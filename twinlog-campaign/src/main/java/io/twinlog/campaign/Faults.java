package io.twinlog.campaign;

import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Injects one round's fault, every choice (cluster, broker, node, partition, how long) drawn from the campaign's one
 * seeded {@link Random}, and leaves the clusters with every fault healed (processes restarted, proxies healed) for the
 * invariant check. Real processes have their own timing: a seed replays the same faults in the same order, not the
 * same interleavings.
 */
final class Faults {
    private static final Logger log = LoggerFactory.getLogger(Faults.class);

    private final MirrorPair pair;
    private final ZooKeeperEnsemble zooKeeper;
    private final Workload workload;
    private final Random random;
    private final Consumer<String> note;
    private int round;
    private List<FaultKind> pairedKinds = List.of();

    Faults(MirrorPair pair, ZooKeeperEnsemble zooKeeper, Workload workload, Random random, Consumer<String> note) {
        this.pair = pair;
        this.zooKeeper = zooKeeper;
        this.workload = workload;
        this.random = random;
        this.note = note;
    }

    void inject(FaultKind kind, int round) throws Exception {
        this.round = round;
        switch (kind) {
            case BROKER_KILL -> brokerKill();
            case ZOOKEEPER_FOLLOWER_KILL -> zooKeeperKill(false);
            case ZOOKEEPER_LEADER_KILL -> zooKeeperKill(true);
            case BROKER_PARTITION -> brokerPartition();
            case ZOOKEEPER_PARTITION -> zooKeeperPartition();
            case CLUSTER_PARTITION -> clusterPartition();
            case FAILOVER_FAILBACK -> failoverAndFailback();
            case SEED_000_CLEAN -> seed000Clean();
            case SEED_000_UNCLEAN -> seed000Unclean();
            case SEED_003 -> seed003();
            case DISK_FULL -> diskFull();
            case CLOCK_STEP -> clockStep();
            case TWO_AT_ONCE -> twoAtOnce();
        }
    }

    /** Everything back: proxies healed, every process running, the ensemble with a leader. */
    void healAll() throws Exception {
        for (ProcessCluster c : pair.both()) {
            c.healNetwork();
        }
        zooKeeper.startStopped();
        zooKeeper.awaitQuorum();
        for (ProcessCluster c : pair.both()) {
            c.startStopped();
        }
    }

    private void brokerKill() throws Exception {
        ProcessCluster c = anyCluster();
        BrokerNode b = c.broker(random.nextInt(ProcessCluster.BROKERS));
        note.accept("kill -9 " + b.name() + " under load");
        b.kill();
        hold(1_000, 15_000);
        b.start();
    }

    private void zooKeeperKill(boolean leader) throws Exception {
        zooKeeper.awaitQuorum();
        int node;
        if (leader) {
            node = zooKeeper.nodeIn(ZooKeeperEnsemble.Mode.LEADER).orElseThrow();
        } else {
            List<Integer> followers = zooKeeper.followers();
            node = followers.get(random.nextInt(followers.size()));
        }
        note.accept("kill -9 ZooKeeper node " + node + " (the " + (leader ? "leader" : "follower") + ")");
        zooKeeper.kill(node);
        hold(1_000, 20_000);
        zooKeeper.restart(node);
        zooKeeper.awaitQuorum();
    }

    private void brokerPartition() throws Exception {
        ProcessCluster c = anyCluster();
        int a = random.nextInt(ProcessCluster.BROKERS);
        int b = (a + 1 + random.nextInt(ProcessCluster.BROKERS - 1)) % ProcessCluster.BROKERS;
        note.accept("network partition between " + c.broker(a).name() + " and " + c.broker(b).name());
        c.cutBetween(a, b);
        hold(2_000, 25_000);
        c.healNetwork();
    }

    private void zooKeeperPartition() throws Exception {
        ProcessCluster c = anyCluster();
        BrokerNode b = c.broker(random.nextInt(ProcessCluster.BROKERS));
        note.accept("network partition between " + b.name() + " and every ZooKeeper node (session timeout 6 s)");
        c.cutFromZooKeeper(b.id());
        hold(2_000, 20_000);
        c.healNetwork();
    }

    private void clusterPartition() throws Exception {
        boolean blackhole = random.nextBoolean();
        ProcessCluster source = pair.source();
        note.accept("network partition between the clusters: " + source + "'s mirror listeners "
                + (blackhole ? "blackholed (timeouts)" : "refused"));
        source.cutMirrorLinks(blackhole);
        hold(2_000, 30_000);
        source.healNetwork();
    }

    private void failoverAndFailback() throws Exception {
        note.accept("failover to " + pair.destination() + " under load, then failback of " + pair.source());
        hold(0, 5_000);
        failOverWithWrites();
        pair.failBack();
    }

    /** The producer moves to the destination once it is writable; records not yet mirrored go at failback. */
    private void failOverWithWrites() throws Exception {
        workload.pause();
        pair.failOver();
        workload.switchTo(pair.destination());
        workload.resume();
        hold(1_000, 8_000);
    }

    /**
     * Seed 000, clean: the destination stops fetching (paused) while the source goes on; a clean leadership change
     * on the source (SIGTERM of the leader of a drawn partition, restarted); the source goes down (kill -9 of every
     * broker); failover; writes on the destination; the old source returns and fails back: what it took after the
     * pause is cut into its quarantine.
     */
    private void seed000Clean() throws Exception {
        ProcessCluster source = pair.source();
        TopicPartition tp = anyPartition();
        note.accept("seed 000, clean election: " + pair.destination() + "'s mirror paused, clean leader change of "
                + tp + " on " + source + ", source down, failover, failback");
        pair.pauseMirror();
        int leader = MirrorPair.awaitLeader(source, tp, -1);
        source.broker(leader).terminate();
        int next = awaitLeaderOtherThan(source, tp, leader);
        note.accept("  " + tp + " on " + source + ": leader " + leader + " stopped cleanly, " + next + " leads");
        hold(500, 5_000);
        source.broker(leader).start();
        workload.pause();
        for (BrokerNode b : source.brokers()) {
            b.kill();
        }
        pair.failOver();
        workload.switchTo(pair.destination());
        workload.resume();
        hold(1_000, 8_000);
        source.startStopped();
        pair.failBack();
    }

    /**
     * Seed 000, unclean: the destination has mirrored everything and is paused; on the source a drawn follower of a
     * drawn partition loses its disk, the leader and the other follower crash, and the empty one is elected uncleanly
     * and takes acks=1 writes (the seed's C at offset 0); the source goes down; failover; the source returns with the
     * unclean leader first and fails back: C is cut into its quarantine, nothing mirrored is lost.
     */
    private void seed000Unclean() throws Exception {
        ProcessCluster source = pair.source();
        TopicPartition tp = anyPartition();
        workload.pause();
        pair.awaitCaughtUp();
        pair.pauseMirror();
        pair.setTopicConfig(source, "unclean.leader.election.enable", "true");
        int leader = MirrorPair.awaitLeader(source, tp, -1);
        List<Integer> followers = others(leader);
        int empty = followers.remove(random.nextInt(followers.size()));
        int other = followers.get(0);
        note.accept("seed 000, unclean election: " + tp + " on " + source + ": follower " + empty
                + " loses its disk, leader " + leader + " and " + other + " crash, " + empty + " leads uncleanly");
        source.broker(empty).kill();
        source.broker(empty).wipe();
        source.broker(leader).kill();
        source.broker(other).kill();
        source.broker(empty).start();
        MirrorPair.awaitLeader(source, tp, empty);
        int count = 1 + random.nextInt(5);
        try (KafkaProducer<String, String> producer = acksOneProducer(source)) {
            for (int i = 0; i < count; i++) {
                String value = "c" + round + "-" + i;
                producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), null, value)).get(60, TimeUnit.SECONDS);
                workload.recordAcknowledged(value, source.name());
            }
        }
        note.accept("  " + count + " records acknowledged (acks=1) by the unclean leader " + empty);
        source.broker(empty).kill();
        pair.failOver();
        workload.switchTo(pair.destination());
        workload.resume();
        hold(1_000, 8_000);
        source.broker(empty).start();
        MirrorPair.awaitLeader(source, tp, empty);
        source.startStopped();
        pair.setTopicConfig(source, "unclean.leader.election.enable", "false");
        pair.failBack();
    }

    /**
     * Seed 003, with {@code mirror.support.unclean.leader.election}: failover; a drawn replica of a drawn partition
     * of the old source is away (kill -9) when its failback starts, so the truncation waits for it (FAILED after
     * {@code mirror.state.timeout.ms} if it stays away long enough); it returns, and then the leader and the other
     * replica crash and it is elected uncleanly.
     */
    private void seed003() throws Exception {
        failOverWithWrites();
        ProcessCluster oldSource = pair.source();
        TopicPartition tp = anyPartition();
        int leader = MirrorPair.awaitLeader(oldSource, tp, -1);
        List<Integer> followers = others(leader);
        int away = followers.remove(random.nextInt(followers.size()));
        int other = followers.get(0);
        note.accept("seed 003: failover done; " + oldSource.broker(away).name() + " (replica of " + tp
                + ") away during the failback; back, then elected uncleanly");
        oldSource.broker(away).kill();
        pair.failBack();
        hold(2_000, 40_000);
        oldSource.broker(away).start();
        hold(0, 10_000);
        pair.setTopicConfig(oldSource, "unclean.leader.election.enable", "true");
        oldSource.broker(leader).kill();
        oldSource.broker(other).kill();
        MirrorPair.awaitLeader(oldSource, tp, away);
        note.accept("  " + tp + " on " + oldSource + " led uncleanly by " + away);
        hold(0, 5_000);
        oldSource.startStopped();
        pair.setTopicConfig(oldSource, "unclean.leader.election.enable", "false");
    }

    /**
     * A broker's second log dir fills up (a filler file takes every free byte of its small filesystem). Expected,
     * as Kafka does with JBOD: the broker's next write there fails, the dir goes offline (DescribeLogDirs answers
     * KAFKA_STORAGE_ERROR for it), the broker stays up and serves its other dir, and the partitions of the full dir
     * are led by other brokers and their ISR lose it. The operator then frees the disk and restarts the broker,
     * since an offline dir comes back only with a restart.
     */
    private void diskFull() throws Exception {
        ProcessCluster c = anyCluster();
        BrokerNode b = c.smallDiskBroker();
        SmallDisk disk = b.smallDisk().orElseThrow();
        note.accept("the disk of " + b.name() + "'s second log dir fills up (" + disk + ")");
        long filled = disk.fill();
        note.accept("  filler of " + filled / (1 << 20) + " MiB; " + disk.usableBytes() + " bytes left");
        long started = System.nanoTime();
        String dir = disk.logDir().getAbsolutePath();
        // a broker that exits ends the wait at once: that is the finding, not a timeout
        Waits.waitUntil("log dir " + dir + " of " + b.name() + " to go offline (KAFKA_STORAGE_ERROR in "
                + "DescribeLogDirs), or the broker to exit", () -> !b.isAlive() || LogDirs.isOffline(c, b.id(), dir),
                MirrorPair.BOUND);
        if (!b.isAlive()) {
            throw new IllegalStateException(b.name() + " exited on a full disk instead of taking " + dir
                    + " offline:\n" + b.logTail(40));
        }
        List<TopicPartition> held = LogDirs.partitionsIn(disk.logDir());
        LogDirs.awaitNotLedBy(c, b.id(), held);
        note.accept("  " + dir + " offline after " + (System.nanoTime() - started) / 1_000_000 + " ms; "
                + held.size() + " partitions there " + held + " now led by other brokers, without "
                + b.name() + " in their ISR");
        hold(2_000, 20_000);
        disk.free();
        note.accept("  disk freed; " + b.name() + " restarted (SIGTERM, start), as an operator brings a dir back");
        b.terminate();
        b.start();
    }

    /**
     * The wall clock of broker 2 of a drawn cluster steps back or forward by 1 minute to 3 hours while it runs (an
     * NTP step, a wrong {@code date -s}), stays there for 5-30 s, then steps back to the real time. The records carry
     * the producer's own timestamps (CreateTime), so to the stepped broker they look up to 3 hours old or up to 3
     * hours ahead: Kafka's time-based retention (7 days) must delete none of them, and a leader stepped back more than
     * {@code log.message.timestamp.after.max.ms} (1 h) rightly refuses them (INVALID_TIMESTAMP: not acknowledged).
     */
    private void clockStep() throws Exception {
        BrokerNode b = anyCluster().clockBroker();
        BrokerClock clock = b.clock().orElseThrow();
        int minutes = (1 + random.nextInt(180)) * (random.nextBoolean() ? 1 : -1);
        note.accept("clock step on " + b.name() + ": its wall clock " + (minutes < 0 ? "back" : "forward") + " by "
                + Math.abs(minutes) + " min");
        clock.stepTo(minutes);
        hold(5_000, 30_000);
        clock.reset();
        note.accept("  " + b.name() + "'s clock stepped back to the real time");
    }

    /**
     * Two faults at once: a network partition and, in a thread of its own, a process fault, each with its own
     * {@link Random} drawn from this one (so the seed still decides both). The partition heals only what it cut.
     */
    private void twoAtOnce() throws Exception {
        FaultKind partition = FaultKind.PARTITIONS.get(random.nextInt(FaultKind.PARTITIONS.size()));
        List<FaultKind> others = new ArrayList<>(FaultKind.PAIRED_WITH_PARTITIONS);
        if (pair.source().broker(ProcessCluster.CLOCK_BROKER).clock().isEmpty()) {
            others.remove(FaultKind.CLOCK_STEP);
        }
        FaultKind other = others.get(random.nextInt(others.size()));
        note.accept("two faults at once: " + partition + " + " + other);
        pairedKinds = List.of(partition, other);
        Faults second = new Faults(pair, zooKeeper, workload, new Random(random.nextLong()), note);
        ExecutorService thread = Executors.newSingleThreadExecutor(r -> new Thread(r, "campaign-second-fault"));
        try {
            Future<?> beside = thread.submit(() -> {
                second.inject(other, round);
                return null;
            });
            inject(partition, round);
            beside.get();
        } finally {
            thread.shutdownNow();
        }
    }

    /** The two kinds of the last {@link FaultKind#TWO_AT_ONCE} round (counted under their own kinds too). */
    List<FaultKind> pairedKinds() {
        return pairedKinds;
    }

    private int awaitLeaderOtherThan(ProcessCluster c, TopicPartition tp, int old) {
        return Waits.waitFor(tp + " on " + c + " led by another broker than " + old,
                () -> MirrorPair.leaderOf(c, tp), id -> id >= 0 && id != old, MirrorPair.BOUND);
    }

    private static KafkaProducer<String, String> acksOneProducer(ProcessCluster c) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, c.bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "1");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        return new KafkaProducer<>(p);
    }

    private ProcessCluster anyCluster() {
        return pair.both().get(random.nextInt(2));
    }

    private TopicPartition anyPartition() {
        return new TopicPartition(pair.topic(), random.nextInt(pair.partitions()));
    }

    private static List<Integer> others(int broker) {
        List<Integer> out = new ArrayList<>();
        for (int id = 0; id < ProcessCluster.BROKERS; id++) {
            if (id != broker) {
                out.add(id);
            }
        }
        return out;
    }

    /** Holds the fault for a drawn time: the fault's duration, not a wait for state. */
    private void hold(int minMs, int maxMs) throws InterruptedException {
        long ms = minMs + (maxMs > minMs ? random.nextInt(maxMs - minMs) : 0);
        note.accept("  held " + ms + " ms");
        log.info("[Campaign] holding the fault for {} ms", ms);
        Thread.sleep(ms);
    }
}
