package io.twinlog.campaign;

import io.twinlog.testkit.TestDirectories;
import io.twinlog.testkit.Waits;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

/**
 * The fault campaign (issue 25, point 11; docs/reliability.md): a 3-node ZooKeeper ensemble and two 3-broker Twinlog
 * clusters, all separate processes on loopback, with a topic mirrored from one to the other, a steady acks=all
 * producer and a consumer group on the writable one. Each round draws one {@link FaultKind} (the first rounds take
 * every kind once, in a seeded order, so that a short run covers them all), injects it with {@link Faults}, heals
 * everything and runs the {@link InvariantCheck}. Every random choice comes from one {@link Random} seeded with
 * {@code seed}, printed first.
 *
 * <p>A broken invariant, or a step that cannot complete within its bound (a failover that never finishes), stops
 * the campaign with the seed, the round, what was seen and the data dirs, which are kept; a campaign that passes
 * deletes them unless asked to keep them.
 */
final class FaultCampaign {
    private static final Logger log = LoggerFactory.getLogger(FaultCampaign.class);
    static final String TOPIC = "campaign";
    static final int PARTITIONS = 3;

    /** How a campaign ended: {@code failure} is null when every round held. */
    record Result(long seed, CampaignStats stats, String failure, File workDir) {
        boolean passed() {
            return failure == null;
        }
    }

    private final long seed;
    private final Duration duration;
    private final List<FaultKind> kinds;
    private final File workDir;
    private final boolean keepData;
    private final PrintStream out;
    private final Random random;
    private final CampaignStats stats = new CampaignStats();
    private final List<String> history = new ArrayList<>();
    private int round;
    private final boolean netns;

    /** @param kinds the faults to draw from (all, for the campaign; fewer to chase one finding) */
    FaultCampaign(long seed, Duration duration, List<FaultKind> kinds, File workDir, boolean keepData,
                  PrintStream out) {
        this(seed, duration, kinds, workDir, keepData, false, out);
    }

    /** @param netns each process in a network namespace of its own ({@link NetnsHosts}); else all on loopback */
    FaultCampaign(long seed, Duration duration, List<FaultKind> kinds, File workDir, boolean keepData, boolean netns,
                  PrintStream out) {
        this.netns = netns;
        if (kinds.isEmpty()) {
            throw new IllegalArgumentException("The campaign needs at least one kind of fault");
        }
        this.seed = seed;
        this.duration = duration;
        this.kinds = List.copyOf(kinds);
        this.workDir = workDir;
        this.keepData = keepData;
        this.out = out;
        this.random = new Random(seed);
    }

    /** Where the processes run: a network namespace each (ZooKeeper nodes, brokers of a, of b), or loopback. */
    private Hosts hosts() throws IOException, InterruptedException {
        if (!netns) {
            return new LoopbackHosts();
        }
        List<String> names = new ArrayList<>();
        for (int id = 1; id <= ZooKeeperEnsemble.SIZE; id++) {
            names.add(ZooKeeperEnsemble.hostName(id));
        }
        for (String cluster : List.of("a", "b")) {
            for (int id = 0; id < ProcessCluster.BROKERS; id++) {
                names.add(BrokerNode.hostName(cluster, id));
            }
        }
        return new NetnsHosts(names);
    }

    Result run() throws Exception {
        out.println("Fault campaign: seed " + seed + ", duration " + duration + ", data in " + workDir
                + " (replay: bin/twinlog-fault-campaign.sh --seed " + seed + " --duration " + duration.toSeconds()
                + "s" + (kinds.size() == FaultKind.values().length ? "" : " --faults " + String.join(",",
                kinds.stream().map(Enum::name).toList())) + (netns ? " --netns" : "") + ")");
        long deadline = System.nanoTime() + duration.toNanos();
        String failure = null;
        try (Hosts hosts = hosts();
             ZooKeeperEnsemble zooKeeper = new ZooKeeperEnsemble(workDir, hosts)) {
            zooKeeper.start();
            createChroots(zooKeeper, "a", "b");
            Map<String, String> brokerProperties = brokerProperties();
            boolean smallDisks = kinds.contains(FaultKind.DISK_FULL);
            boolean clocks = kinds.contains(FaultKind.CLOCK_STEP);
            try (ProcessCluster a = new ProcessCluster("a", workDir, zooKeeper, brokerProperties, smallDisks, clocks,
                    hosts);
                 ProcessCluster b = new ProcessCluster("b", workDir, zooKeeper, brokerProperties, smallDisks, clocks,
                         hosts);
                 Workload workload = new Workload(TOPIC, PARTITIONS)) {
                a.start();
                b.start();
                MirrorPair pair = new MirrorPair(a, b, TOPIC, PARTITIONS);
                pair.setUp();
                workload.start(pair.source());
                Faults faults = new Faults(pair, zooKeeper, workload, random, this::note);
                InvariantCheck check = new InvariantCheck(pair, stats);
                out.println("Set up: ZooKeeper " + zooKeeper.connectString() + ", cluster a " + a.bootstrapServers()
                        + ", cluster b " + b.bootstrapServers() + "; " + b + " mirrors " + TOPIC + " from " + a);
                List<FaultKind> firstRounds = new ArrayList<>(kinds);
                Collections.shuffle(firstRounds, random);
                out.println("The first " + firstRounds.size() + " rounds take every fault once: " + firstRounds);
                while (System.nanoTime() < deadline) {
                    round++;
                    FaultKind kind = round <= firstRounds.size() ? firstRounds.get(round - 1)
                            : kinds.get(random.nextInt(kinds.size()));
                    long started = System.nanoTime();
                    try {
                        note(kind.name());
                        faults.inject(kind, round);
                        stats.countFault(kind);
                        if (kind == FaultKind.TWO_AT_ONCE) {
                            faults.pairedKinds().forEach(stats::countFault);
                        }
                        faults.healAll();
                        workload.pause();
                        InvariantCheck.Outcome outcome = check.check(workload.acknowledged());
                        workload.resume();
                        stats.rounds = round;
                        stats.acknowledged = outcome.acknowledged();
                        stats.quarantined = outcome.quarantined();
                        stats.failedSends = workload.failedSends();
                        stats.consumed = workload.consumed();
                        out.printf("round %d %s: held in %.1f s; %d acknowledged, %d in %s's log, %d quarantined, "
                                        + "%d duplicates in the log, 0 lost, 0 divergent%s%n", round, kind,
                                (System.nanoTime() - started) / 1e9, outcome.acknowledged(), outcome.inLog(),
                                pair.source(), outcome.quarantined(), outcome.duplicatesInLog(), outcome.note());
                    } catch (Throwable t) {
                        // broad: an Error in a round too ends the campaign with its history and the data kept
                        failure = "seed " + seed + ", round " + round + " (" + kind + "): " + t;
                        log.error("[Campaign] seed {} round {} ({}) failed", seed, round, kind, t);
                        out.println("FAILED at " + failure);
                        out.println("What the campaign did:\n  " + String.join("\n  ", history));
                        out.println("Data dirs and process logs kept in " + workDir);
                        break;
                    }
                }
            }
        }
        if (failure == null && stats.rounds == 0) {
            // a run that checked nothing must not read as a pass (a loaded machine can spend the duration starting)
            failure = "seed " + seed + ": no round ran within " + duration + "; the set-up took it all";
            out.println("FAILED: " + failure);
        }
        out.println((failure == null ? "Campaign passed" : "Campaign FAILED") + ": seed " + seed + ", "
                + stats.line());
        out.println("For docs/reliability.md's Results table:\n" + stats.tableRow(LocalDate.now(ZoneOffset.UTC), seed,
                duration, failure == null ? "passed" : "**failed** at round " + round));
        if (failure == null && !keepData) {
            TestDirectories.delete(workDir);
        }
        return new Result(seed, stats, failure, workDir);
    }

    /** Why {@code kind} cannot run on this machine (what it needs and what is missing), or empty if it can. */
    static Optional<String> unavailableReason(FaultKind kind) {
        return switch (kind) {
            case DISK_FULL -> SmallDisk.unavailableReason();
            case CLOCK_STEP -> BrokerClock.unavailableReason();
            default -> Optional.empty();
        };
    }

    /** Synchronized: the two faults of a {@link FaultKind#TWO_AT_ONCE} round note from two threads. */
    private synchronized void note(String what) {
        String line = "round " + round + ": " + what;
        history.add(line);
        out.println(line);
        log.info("[Campaign] {}", line);
    }

    /** The brokers' settings: timeouts short enough that a fault resolves within a round. */
    private static Map<String, String> brokerProperties() {
        return Map.ofEntries(
                Map.entry("default.replication.factor", "3"),
                Map.entry("offsets.topic.replication.factor", "3"),
                Map.entry("offsets.topic.num.partitions", "3"),
                Map.entry("transaction.state.log.num.partitions", "3"),
                Map.entry("group.initial.rebalance.delay.ms", "0"),
                Map.entry("zookeeper.session.timeout.ms", "6000"),
                Map.entry("replica.lag.time.max.ms", "10000"),
                Map.entry("mirror.state.timeout.ms", "30000"),
                Map.entry("num.io.threads", "2"),
                Map.entry("num.network.threads", "2"),
                Map.entry("log.segment.bytes", "1048576"));
    }

    /** Each cluster lives under its own chroot of the shared ensemble; ZooKeeper needs the chroot node to exist. */
    private static void createChroots(ZooKeeperEnsemble ensemble, String... names) throws Exception {
        ZooKeeper zk = new ZooKeeper(ensemble.connectString(), 10_000, event -> { });
        try {
            Waits.waitUntil("the campaign's ZooKeeper client to connect", () -> zk.getState().isConnected(),
                    Duration.ofSeconds(60));
            for (String name : names) {
                try {
                    zk.create("/" + name, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                } catch (KeeperException.NodeExistsException e) {
                    // a rerun in the same work dir
                }
            }
        } finally {
            zk.close();
        }
    }
}
