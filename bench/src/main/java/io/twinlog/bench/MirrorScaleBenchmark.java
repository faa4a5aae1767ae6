package io.twinlog.bench;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.common.BrokerConfig;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.server.BrokerServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Phase {@code mirror-scale} (Twinlog only): many mirror partitions between two 3-broker Twinlog clusters, each with
 * its embedded ZooKeeper, all in this JVM.
 *
 * <ol>
 *   <li>Set-up: {@code topics} x {@code partitionsPerTopic} source partitions (replication factor
 *       {@code replicationFactor}), a few records each, one cluster mirror mirroring them all (StartMirrorTopics
 *       with {@code .*}), awaited until every partition is MIRRORING in the destination's image and caught up.</li>
 *   <li><b>steady</b>: for {@code steadySeconds} a producer writes {@link #STEADY_RECORDS_PER_S} records/s spread
 *       over all source partitions; measured: ZooKeeper write transactions/s on each side (zxid delta) and where
 *       they went (setData per subtree), metadata image rebuilds/s per broker, the time they took and the partition
 *       records the {@code PartitionApplier} applied.</li>
 *   <li><b>describe</b>: DescribeClusterMirrors of the mirror (all partitions), {@link #DESCRIBES} times.</li>
 *   <li><b>failover, source up</b>: StopMirrorTopics with the pattern {@code .*} (the CLI's
 *       {@code --remove --topic '.*'}); the call's time, and until every destination broker's image shows every
 *       partition STOPPED (polled in-process every millisecond or so), and the destination's metadata rebuilds
 *       meanwhile.</li>
 *   <li><b>failover, source down</b>: the same on fresh clusters (set-up B) after the source cluster was
 *       closed.</li>
 * </ol>
 */
final class MirrorScaleBenchmark {
    private static final Logger log = LoggerFactory.getLogger(MirrorScaleBenchmark.class);
    static final String SYSTEM = "twinlog";
    static final int STEADY_RECORDS_PER_S = 1000;
    static final int RECORDS_PER_PARTITION = 10;
    static final int DESCRIBES = 5;
    /** After closing the source: time for the mirror fetchers to have failed against it at least once. */
    static final long SOURCE_DOWN_SETTLE_MS = 2000;
    private static final long TIMEOUT_MS = 600_000;
    private static final String MIRROR = "scale";

    private final int round;
    private final BenchOptions options;
    private final ScaleTopics topics;
    private final ScaleFigures figures;
    private final List<String> notes = new ArrayList<>();

    MirrorScaleBenchmark(int round, BenchOptions options, Payloads payloads) {
        this.round = round;
        this.options = options;
        this.topics = new ScaleTopics(options, payloads);
        this.figures = new ScaleFigures(SYSTEM, round);
    }

    List<MirrorBenchmark.Figure> figures() {
        return figures.list();
    }

    List<String> notes() {
        return notes;
    }

    private int partitions() {
        return options.mirrorPartitions();
    }

    private void add(String name, double value, String unit) {
        figures.add(name, value, unit);
    }

    void run() throws Exception {
        try (Pair pair = Pair.start(options)) {
            mirrorAll(pair, "set-up A");
            steady(pair);
            describe(pair);
            failover(pair, "source up");
        }
        try (Pair pair = Pair.start(options)) {
            mirrorAll(pair, "set-up B");
            log.info("[{}] mirror-scale: closing the source cluster", SYSTEM);
            pair.closeSource();
            awaitSourceNoticed();
            failover(pair, "source down");
        }
    }

    /** Two 3-broker clusters, and the clients this phase uses on them. */
    private static final class Pair implements AutoCloseable {
        final TwinlogReplicatedCluster source;
        final TwinlogReplicatedCluster destination;
        Admin sourceAdmin;
        MirrorAdmin mirrors;
        private boolean sourceClosed;

        private Pair(TwinlogReplicatedCluster source, TwinlogReplicatedCluster destination) {
            this.source = source;
            this.destination = destination;
        }

        static Pair start(BenchOptions options) throws Exception {
            Properties overrides = new Properties();
            overrides.setProperty(BrokerConfig.DEFAULT_REPLICATION_FACTOR,
                    Integer.toString(options.mirrorReplicationFactor()));
            overrides.setProperty(BrokerConfig.NUM_REPLICA_FETCHERS, Integer.toString(options.mirrorReplicaFetchers()));
            Pair pair = new Pair(
                    new TwinlogReplicatedCluster(TempDirectories.create("mirror-scale-src"),
                            options.sessionTimeoutMs(), null, overrides),
                    new TwinlogReplicatedCluster(TempDirectories.create("mirror-scale-dst"),
                            options.sessionTimeoutMs(), null, overrides));
            try {
                pair.source.start();
                pair.destination.start();
                Properties p = new Properties();
                p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, pair.source.bootstrapServers());
                p.put(AdminClientConfig.CLIENT_ID_CONFIG, "bench-mirror-scale");
                p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "300000");
                p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "120000");
                pair.sourceAdmin = Admin.create(p);
                pair.mirrors = MirrorAdmin.create(pair.destination.bootstrapServers(), Duration.ofSeconds(300));
                return pair;
            } catch (Exception e) {
                // broad: whatever failed, the clusters started so far are closed before it goes on
                pair.close();
                throw e;
            }
        }

        /**
         * Stops the source cluster, keeping its data until the end (deleting its thousands of files made every file
         * operation of the failover that followed two to five times slower: strace of the barrier threads), then has
         * the OS write out what its shutdown left in the page cache: on this one machine both would otherwise share
         * the disk with the destination's failover, which a source in another data centre never does.
         */
        void closeSource() throws IOException, InterruptedException {
            sourceAdmin.close(Duration.ZERO);
            source.stopKeepingData(); // its data is deleted after the failover, by close()
            sourceClosed = true;
            Process sync = new ProcessBuilder("sync").inheritIO().start();
            if (sync.waitFor() != 0) {
                throw new IOException("sync exited with " + sync.exitValue());
            }
        }

        @Override
        public void close() {
            if (mirrors != null) {
                mirrors.close();
            }
            destination.close();
            if (!sourceClosed && sourceAdmin != null) {
                sourceAdmin.close(Duration.ZERO);
            }
            source.close(); // after closeSource: deletes the data it left
        }
    }

    /** Creates the source topics, fills them, mirrors them all and waits until every partition is MIRRORING. */
    private void mirrorAll(Pair pair, String label) throws Exception {
        long start = System.nanoTime();
        topics.create(pair.sourceAdmin);
        awaitAllLed(pair.source, "source");
        topics.produce(pair.source.bootstrapServers(), (long) partitions() * RECORDS_PER_PARTITION, 0);
        add(label + ": " + partitions() + " source partitions created and filled", (System.nanoTime() - start) / 1e6,
                "ms");
        pair.mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", pair.source.bootstrapServers()));
        ClusterReading before = ClusterReading.of(pair.destination);
        long mirrorStart = System.nanoTime();
        Map<String, ?> errors = pair.mirrors.startMirrorTopics(MIRROR, List.of(), List.of(ScaleTopics.PATTERN), List.of());
        if (!errors.isEmpty()) {
            throw new IllegalStateException("StartMirrorTopics failed for " + errors.size() + " topics, e.g. "
                    + errors.entrySet().iterator().next());
        }
        add(label + ": StartMirrorTopics call", (System.nanoTime() - mirrorStart) / 1e6, "ms");
        awaitAllLed(pair.destination, "destination");
        add(label + ": StartMirrorTopics until all destination partitions led", (System.nanoTime() - mirrorStart) / 1e6,
                "ms");
        awaitMirrorStates(pair, MirrorPartitionState.MIRRORING);
        add(label + ": StartMirrorTopics until all MIRRORING", (System.nanoTime() - mirrorStart) / 1e6, "ms");
        metadataFigures(label + ": destination", before, ClusterReading.of(pair.destination), false);
    }

    /** One broker's counters at one moment. */
    private record BrokerReading(int brokerId, MetadataWatcher.RebuildStats rebuilds, long partitionsApplied) {
        static BrokerReading of(BrokerServer broker) {
            return new BrokerReading(broker.config().brokerId(), broker.metadata().rebuildStats(),
                    broker.partitionApplier().partitionsApplied());
        }
    }

    /** Every broker's counters of one cluster, and when they were read. */
    private record ClusterReading(List<BrokerReading> brokers, long nanoTime) {
        static ClusterReading of(TwinlogReplicatedCluster cluster) {
            List<BrokerReading> out = new ArrayList<>();
            cluster.brokers().forEach(b -> out.add(BrokerReading.of(b)));
            return new ClusterReading(out, System.nanoTime());
        }
    }

    private void steady(Pair pair) throws Exception {
        int seconds = options.mirrorSteadySeconds();
        ZooKeeperWrites sourceZk = new ZooKeeperWrites(pair.source.zooKeeperPort());
        ZooKeeperWrites destinationZk = new ZooKeeperWrites(pair.destination.zooKeeperPort());
        ZooKeeperWrites.Snapshot sourceBefore = sourceZk.snapshot();
        ZooKeeperWrites.Snapshot destinationBefore = destinationZk.snapshot();
        ClusterReading sourceStart = ClusterReading.of(pair.source);
        ClusterReading destinationStart = ClusterReading.of(pair.destination);
        topics.produce(pair.source.bootstrapServers(), (long) STEADY_RECORDS_PER_S * seconds, STEADY_RECORDS_PER_S);
        ClusterReading destinationEnd = ClusterReading.of(pair.destination);
        ClusterReading sourceEnd = ClusterReading.of(pair.source);
        ZooKeeperWrites.Snapshot sourceAfter = sourceZk.snapshot();
        ZooKeeperWrites.Snapshot destinationAfter = destinationZk.snapshot();

        zooKeeperFigures("source", sourceBefore, sourceAfter);
        zooKeeperFigures("destination", destinationBefore, destinationAfter);
        metadataFigures("steady: destination", destinationStart, destinationEnd, true);
        metadataFigures("steady: source", sourceStart, sourceEnd, true);
    }

    /**
     * Rebuilds, build time, listener time and partition records applied between two readings, of the busiest broker
     * (per second if {@code perSecond}, else totals), every broker in a note.
     */
    private void metadataFigures(String label, ClusterReading start, ClusterReading end, boolean perSecond) {
        double divisor = perSecond ? (end.nanoTime() - start.nanoTime()) / 1e9 : 1;
        String per = perSecond ? "/s" : "";
        double[] max = new double[4];
        List<String> perBroker = new ArrayList<>();
        for (int i = 0; i < end.brokers().size(); i++) {
            MetadataWatcher.RebuildStats s = end.brokers().get(i).rebuilds();
            MetadataWatcher.RebuildStats e = start.brokers().get(i).rebuilds();
            double[] values = {
                (s.rebuilds() - e.rebuilds()) / divisor,
                (s.rebuildNanos() - e.rebuildNanos()) / 1e6 / divisor,
                (s.listenerNanos() - e.listenerNanos()) / 1e6 / divisor,
                (end.brokers().get(i).partitionsApplied() - start.brokers().get(i).partitionsApplied()) / divisor};
            for (int v = 0; v < values.length; v++) {
                max[v] = Math.max(max[v], values[v]);
            }
            perBroker.add(String.format("broker %d: %.1f rebuilds%s, %.1f ms%s building, %.1f ms%s in listeners, "
                    + "%.0f partitions applied%s", end.brokers().get(i).brokerId(), values[0], per, values[1], per,
                    values[2], per, values[3], per));
        }
        add(label + " metadata rebuilds (busiest broker)", max[0], per.isEmpty() ? "" : per);
        add(label + " image build time (busiest broker)", max[1], "ms" + per);
        add(label + " listener time (busiest broker)", max[2], "ms" + per);
        add(label + " partitions applied (busiest broker)", max[3], per.isEmpty() ? "" : per);
        notes.add("Round " + round + ", " + label + ": " + String.join("; ", perBroker) + ".");
    }

    private void zooKeeperFigures(String side, ZooKeeperWrites.Snapshot before, ZooKeeperWrites.Snapshot after) {
        double elapsed = after.secondsSince(before);
        add("steady: " + side + " ZooKeeper write transactions/s", after.writesSince(before) / elapsed, "/s");
        List<String> parts = new ArrayList<>();
        after.setDataSince(before).forEach((path, n) -> parts.add(path + " " + String.format("%.1f", n / elapsed)));
        notes.add("Round " + round + ", " + side + " ZooKeeper setData/s by subtree over " + String.format("%.1f",
                elapsed) + " s: " + String.join(", ", parts) + ".");
    }

    private void describe(Pair pair) throws Exception {
        List<Double> millis = new ArrayList<>();
        for (int i = 0; i < DESCRIBES; i++) {
            long start = System.nanoTime();
            MirrorAdmin.MirrorDescription d = pair.mirrors.describeClusterMirrors(List.of(MIRROR)).get(MIRROR);
            millis.add((System.nanoTime() - start) / 1e6);
            int described = d.topics().values().stream().mapToInt(t -> t.partitions().size()).sum();
            if (described != partitions()) {
                throw new IllegalStateException("Describe showed " + described + " partitions, not " + partitions());
            }
        }
        millis.sort(Double::compare);
        add("describe " + partitions() + " partitions: median", millis.get(millis.size() / 2), "ms");
        add("describe " + partitions() + " partitions: max", millis.get(millis.size() - 1), "ms");
    }

    private void failover(Pair pair, String label) throws Exception {
        ClusterReading before = ClusterReading.of(pair.destination);
        long start = System.nanoTime();
        Map<String, ?> errors = pair.mirrors.stopMirrorTopics(MIRROR, List.of(), List.of(".*"));
        long callNanos = System.nanoTime() - start;
        if (!errors.isEmpty()) {
            notes.add("Round " + round + ": StopMirrorTopics (" + label + ") answered with errors for "
                    + errors.size() + " topics, e.g. " + errors.entrySet().iterator().next());
        }
        long allStoppedNanos = awaitMirrorStates(pair, MirrorPartitionState.STOPPED) - start;
        metadataFigures("failover, " + label + ": destination", before, ClusterReading.of(pair.destination), false);
        add("failover " + partitions() + " partitions, " + label + ": StopMirrorTopics call", callNanos / 1e6, "ms");
        add("failover " + partitions() + " partitions, " + label + ": until all STOPPED on every broker",
                allStoppedNanos / 1e6, "ms");
    }

    /**
     * Waits until the source's brokers have been gone long enough for the mirror fetchers to have failed at least
     * once; there is no state to poll for that, so it is a fixed pause (this is a benchmark, not a test).
     */
    private static void awaitSourceNoticed() throws InterruptedException {
        Thread.sleep(SOURCE_DOWN_SETTLE_MS);
    }

    /** Why an image does not yet show what is awaited, or null once it does. */
    private interface ImageCheck {
        String missing(MetadataImage image);
    }

    /** Polls every broker's image of {@code cluster} until every partition of the phase's topics has a leader. */
    private void awaitAllLed(TwinlogReplicatedCluster cluster, String side) throws InterruptedException {
        awaitImage(cluster, "all " + partitions() + " " + side + " partitions led", image -> {
            long led = image.topics().values().stream().filter(t -> t.name().startsWith("scale-"))
                    .flatMap(t -> t.partitions().values().stream()).filter(p -> p.leader() >= 0).count();
            return led == partitions() ? null : led + " led";
        });
    }

    /** Polls every destination broker's image until all mirror partitions are in {@code state}; returns nanoTime. */
    private long awaitMirrorStates(Pair pair, MirrorPartitionState state) throws InterruptedException {
        return awaitImage(pair.destination, "all " + partitions() + " mirror partitions " + state, image -> {
            Map<MirrorPartitionState, Integer> counts = new TreeMap<>();
            int matching = 0;
            for (Map.Entry<TopicPartition, MirrorImage.MirrorPartition> e : image.mirrors().partitions().entrySet()) {
                counts.merge(e.getValue().state(), 1, Integer::sum);
                if (e.getValue().state() == state) {
                    matching++;
                }
            }
            return matching == partitions() ? null : counts.toString();
        });
    }

    private static long awaitImage(TwinlogReplicatedCluster cluster, String what, ImageCheck check)
            throws InterruptedException {
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        Map<Integer, String> last = new HashMap<>();
        while (System.currentTimeMillis() < deadline) {
            last.clear();
            for (BrokerServer b : cluster.brokers()) {
                String missing = check.missing(b.metadata().image());
                if (missing != null) {
                    last.put(b.config().brokerId(), missing);
                }
            }
            if (last.isEmpty()) {
                return System.nanoTime();
            }
            Thread.sleep(1);
        }
        throw new IllegalStateException("Timed out after " + TIMEOUT_MS + " ms waiting for " + what
                + "; last seen per broker: " + last);
    }
}
