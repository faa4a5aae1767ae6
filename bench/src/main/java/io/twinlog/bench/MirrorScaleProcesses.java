package io.twinlog.bench;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Mirroring at a scale one JVM cannot hold (issue 27 point 6: 10,000 partitions): the two clusters run as separate
 * processes ({@code bench/mirror-scale-processes.sh} starts a ZooKeeper and three brokers per cluster, each its own
 * process, so each stays below the per-process open-file limit), and this program drives them from outside, as an
 * operator's tools would, seeing their state only through the Admin API and DescribeClusterMirrors:
 *
 * <ol>
 *   <li>the {@code scale-*} topics on the source ({@code --mirror-partitions}, {@code --mirror-topic-partitions},
 *       {@code --mirror-replication-factor}), 10 records per partition;</li>
 *   <li>start: StartMirrorTopics of {@code scale-.*} on the destination, until DescribeClusterMirrors shows every
 *       partition MIRRORING (polled every {@value #POLL_MS} ms);</li>
 *   <li>steady: {@code --mirror-steady-seconds} of 1,000 records/s spread over all partitions, ZooKeeper write
 *       transactions per second on each side (zxid delta);</li>
 *   <li>describe: DescribeClusterMirrors of all partitions, {@value #DESCRIBES} times;</li>
 *   <li>failover: StopMirrorTopics {@code .*}, until every partition is STOPPED;</li>
 *   <li>failback: a mirror on the old source from the destination, StartMirrorTopics of {@code scale-.*} there,
 *       until every partition of the source is MIRRORING again (each cut to its last mirrored epoch first).</li>
 * </ol>
 *
 * With {@code -Dscale.heap=twinlog|kafka} it measures instead the heap the partitions take: one 3-broker cluster of
 * that system in this JVM, the heap used after a full GC before and after creating the topics (both systems in the
 * same way), per partition.
 *
 * <p>System properties: {@code scale.source} / {@code scale.destination} (bootstrap servers),
 * {@code scale.sourceZk} / {@code scale.destinationZk} (ZooKeeper ports), {@code scale.output} (markdown file). Other
 * options as {@link BenchOptions}.
 */
public final class MirrorScaleProcesses {
    private static final Logger log = LoggerFactory.getLogger(MirrorScaleProcesses.class);
    static final long POLL_MS = 500;
    static final int DESCRIBES = 5;
    private static final long TIMEOUT_MS = 1_800_000;
    private static final String MIRROR = "scale";
    private static final String BACK = "scale-back";

    private final BenchOptions options;
    private final ScaleTopics topics;
    private final List<String[]> rows = new ArrayList<>();
    private int describeFailures;

    private MirrorScaleProcesses(BenchOptions options) {
        this.options = options;
        this.topics = new ScaleTopics(options, new Payloads(options.recordSizeBytes(), options.seed()));
    }

    public static void main(String[] args) throws Exception {
        BenchOptions options = BenchOptions.parse(args);
        MirrorScaleProcesses run = new MirrorScaleProcesses(options);
        String heap = System.getProperty("scale.heap", "");
        if (heap.isEmpty()) {
            run.mirror(property("scale.source"), property("scale.destination"),
                    Integer.parseInt(property("scale.sourceZk")), Integer.parseInt(property("scale.destinationZk")));
        } else {
            run.heap(heap);
        }
        run.write(Path.of(System.getProperty("scale.output", "bench/results/mirror-scale-processes.md")));
        System.exit(0); // the Kafka test kit leaves non-daemon threads behind
    }

    private static String property(String name) {
        String value = System.getProperty(name);
        if (value == null) {
            throw new IllegalArgumentException("-D" + name + " is required");
        }
        return value;
    }

    private void add(String name, double value, String unit) {
        rows.add(new String[] {name, String.format(Locale.ROOT, "%,.1f", value), unit});
        log.info("mirror-scale-processes: {} = {} {}", name, String.format(Locale.ROOT, "%.1f", value), unit);
    }

    private void mirror(String source, String destination, int sourceZk, int destinationZk) throws Exception {
        int partitions = topics.partitions();
        try (Admin src = admin(source); MirrorAdmin mirrors = MirrorAdmin.create(destination, Duration.ofSeconds(600));
             MirrorAdmin back = MirrorAdmin.create(source, Duration.ofSeconds(600))) {
            long start = System.nanoTime();
            topics.create(src);
            awaitLed(src);
            topics.produce(source, (long) partitions * MirrorScaleBenchmark.RECORDS_PER_PARTITION, 0);
            add(partitions + " source partitions created and filled", seconds(start), "s");

            mirrors.createClusterMirror(MIRROR, Map.of("bootstrap.servers", source));
            start = System.nanoTime();
            Map<String, ?> errors = mirrors.startMirrorTopics(MIRROR, List.of(), List.of(ScaleTopics.PATTERN),
                    List.of());
            add("StartMirrorTopics call", seconds(start), "s");
            check("StartMirrorTopics", errors);
            awaitStates(mirrors, MIRROR, "MIRRORING");
            add("StartMirrorTopics until all MIRRORING (described)", seconds(start), "s");

            ZooKeeperWrites sourceWrites = new ZooKeeperWrites(sourceZk);
            ZooKeeperWrites destinationWrites = new ZooKeeperWrites(destinationZk);
            ZooKeeperWrites.Snapshot sourceBefore = sourceWrites.zxidOnly();
            ZooKeeperWrites.Snapshot destinationBefore = destinationWrites.zxidOnly();
            long steadyRecords = (long) MirrorScaleBenchmark.STEADY_RECORDS_PER_S * options.mirrorSteadySeconds();
            long steadyStart = System.nanoTime();
            topics.produce(source, steadyRecords, MirrorScaleBenchmark.STEADY_RECORDS_PER_S);
            add("steady: records/s the producer reached (asked " + MirrorScaleBenchmark.STEADY_RECORDS_PER_S + ")",
                    steadyRecords / seconds(steadyStart), "/s");
            ZooKeeperWrites.Snapshot sourceAfter = sourceWrites.zxidOnly();
            ZooKeeperWrites.Snapshot destinationAfter = destinationWrites.zxidOnly();
            add("steady (" + MirrorScaleBenchmark.STEADY_RECORDS_PER_S + " records/s): source ZooKeeper write "
                    + "transactions/s", sourceAfter.writesSince(sourceBefore) / sourceAfter.secondsSince(sourceBefore),
                    "/s");
            add("steady: destination ZooKeeper write transactions/s",
                    destinationAfter.writesSince(destinationBefore) / destinationAfter.secondsSince(destinationBefore),
                    "/s");

            List<Double> describes = new ArrayList<>();
            for (int i = 0; i < DESCRIBES; i++) {
                long d = System.nanoTime();
                int described = countStates(mirrors, MIRROR).values().stream().mapToInt(Integer::intValue).sum();
                describes.add(seconds(d) * 1000);
                if (described != partitions) {
                    throw new IllegalStateException("Describe showed " + described + " partitions, not " + partitions);
                }
            }
            describes.sort(Double::compare);
            add("describe " + partitions + " partitions: median", describes.get(describes.size() / 2), "ms");
            add("describe " + partitions + " partitions: max", describes.get(describes.size() - 1), "ms");

            start = System.nanoTime();
            errors = mirrors.stopMirrorTopics(MIRROR, List.of(), List.of(".*"));
            add("failover (StopMirrorTopics .*) call", seconds(start), "s");
            // a failover that outlasts the call's bound (30 s) is answered REQUEST_TIMED_OUT per topic not yet
            // STOPPED and goes on: counted, and waited for below like the rest
            Map<String, ?> stillGoing = errors.entrySet().stream()
                    .filter(e -> e.getValue() instanceof MirrorException m
                            && m.errorCode() == Errors.REQUEST_TIMED_OUT.code())
                    .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
            if (!stillGoing.isEmpty()) {
                add("failover: topics the call answered still in progress (REQUEST_TIMED_OUT)", stillGoing.size(),
                        "");
            }
            check("StopMirrorTopics", errors.entrySet().stream().filter(e -> !stillGoing.containsKey(e.getKey()))
                    .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)));
            awaitStates(mirrors, MIRROR, "STOPPED");
            add("failover until all STOPPED (described)", seconds(start), "s");

            back.createClusterMirror(BACK, Map.of("bootstrap.servers", destination));
            start = System.nanoTime();
            errors = back.startMirrorTopics(BACK, List.of(), List.of(ScaleTopics.PATTERN), List.of());
            add("failback (StartMirrorTopics on the old source) call", seconds(start), "s");
            check("StartMirrorTopics (failback)", errors);
            awaitStates(back, BACK, "MIRRORING");
            add("failback until all MIRRORING on the old source (described)", seconds(start), "s");
        }
    }

    /**
     * Heap the partitions take in one 3-broker cluster of {@code system} in this JVM: used heap after a full GC once
     * every broker accepts requests, and again once every partition of the topics has a leader.
     */
    private void heap(String system) throws Exception {
        ReplicatedCluster cluster = switch (system) {
            case "twinlog" -> new TwinlogReplicatedCluster(TempDirectories.create("heap-twinlog"),
                    options.sessionTimeoutMs(), null, new Properties());
            case "kafka" -> new KafkaReplicatedCluster(TempDirectories.create("heap-kafka"),
                    options.sessionTimeoutMs(), null);
            default -> throw new IllegalArgumentException("scale.heap must be twinlog or kafka, not " + system);
        };
        try (cluster) {
            cluster.start();
            try (Admin admin = admin(cluster.bootstrapServers())) {
                double before = usedHeapAfterGc();
                long start = System.nanoTime();
                topics.create(admin);
                awaitLed(admin);
                add(system + ": " + topics.partitions() + " partitions created and led", seconds(start), "s");
                double after = usedHeapAfterGc();
                add(system + ": heap used after a full GC, 3 brokers, before the topics", before / (1 << 20), "MiB");
                add(system + ": heap used after a full GC, with the topics", after / (1 << 20), "MiB");
                add(system + ": heap per partition (replication factor " + options.mirrorReplicationFactor() + ")",
                        (after - before) / topics.partitions() / 1024, "KiB");
            }
        }
    }

    private static double usedHeapAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 3; i++) {
            System.gc(); // several: a collection can leave what finalization freed for the next one
        }
        return memory.getHeapMemoryUsage().getUsed();
    }

    private void awaitLed(Admin admin) throws Exception {
        topics.awaitPartitions(admin, "every partition led", p -> p.leader() != null && !p.leader().isEmpty());
    }

    /** Polls DescribeClusterMirrors until every partition of the scale topics is in {@code state}. */
    private void awaitStates(MirrorAdmin mirrors, String mirror, String state) throws Exception {
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        long nextReport = System.currentTimeMillis() + 10_000;
        Map<String, Integer> counts = Map.of();
        while (System.currentTimeMillis() < deadline) {
            try {
                counts = countStates(mirrors, mirror);
            } catch (IOException e) {
                // one poll failing is reported, not the end of the run: the next one may answer
                log.warn("mirror-scale-processes: DescribeClusterMirrors of {} failed; polling on", mirror, e);
                describeFailures++;
                Thread.sleep(POLL_MS);
                continue;
            }
            if (counts.getOrDefault(state, 0) == topics.partitions()) {
                return;
            }
            if (System.currentTimeMillis() > nextReport) {
                log.info("mirror-scale-processes: waiting for {} partitions {} on mirror {}: {}", topics.partitions(),
                        state, mirror, counts);
                nextReport += 10_000;
            }
            Thread.sleep(POLL_MS);
        }
        throw new IllegalStateException("Timed out waiting for all partitions " + state + "; last " + counts);
    }

    private static Map<String, Integer> countStates(MirrorAdmin mirrors, String mirror) throws IOException {
        Map<String, Integer> counts = new TreeMap<>();
        MirrorAdmin.MirrorDescription d = mirrors.describeClusterMirrors(List.of(mirror)).get(mirror);
        if (d != null) {
            d.topics().values().forEach(t -> t.partitions().forEach(p -> counts.merge(p.state(), 1, Integer::sum)));
        }
        return counts;
    }

    private static void check(String call, Map<String, ?> errors) {
        if (!errors.isEmpty()) {
            throw new IllegalStateException(call + " failed for " + errors.size() + " topics, e.g. "
                    + errors.entrySet().iterator().next());
        }
    }

    private static double seconds(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    private static Admin admin(String bootstrap) {
        Map<String, Object> config = new HashMap<>();
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(AdminClientConfig.CLIENT_ID_CONFIG, "bench-mirror-scale-processes");
        config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "600000");
        config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "300000");
        return Admin.create(config);
    }

    private void write(Path output) throws IOException {
        if (describeFailures > 0) {
            add("DescribeClusterMirrors polls that failed (see the log)", describeFailures, "");
        }
        MarkdownTable table = MarkdownTable.withColumns("Figure", "value", "unit");
        rows.forEach(r -> table.row(r[0], r[1], r[2]));
        String markdown = "### Mirroring at scale, clusters in separate processes ("
                + ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME) + ")\n\n"
                + String.format(Locale.ROOT, "%,d partitions (%,d topics x %d, replication factor %d)%n%n",
                topics.partitions(), topics.count(), options.mirrorTopicPartitions(),
                options.mirrorReplicationFactor())
                + table.render();
        Path parent = output.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(output, markdown, StandardCharsets.UTF_8);
        System.out.println(markdown);
    }
}
