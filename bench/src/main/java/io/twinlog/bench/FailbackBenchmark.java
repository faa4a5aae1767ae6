package io.twinlog.bench;

import io.twinlog.cli.MirrorsCommand;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.common.BrokerConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * Failback cost (issue 12, point 8; phase {@code failback}, Twinlog only): a partition with a large shared prefix
 * (default 1 GiB) is mirrored A → B, B fails over, both clusters take 1,000 records of their own, and A fails back
 * from B. The failback's cost must follow the divergent tail, not the log: the time from StartMirrorTopics on A to
 * A holding B's log end and MIRRORING, and the bytes A's log gained meanwhile (what it fetched); then
 * {@code twinlog-mirrors.sh --verify} of that partition on A. Two 3-broker clusters, replication factor 1 (the
 * cost being measured is the mirror's, not replication's).
 */
final class FailbackBenchmark {
    private static final Logger log = LoggerFactory.getLogger(FailbackBenchmark.class);
    static final String SYSTEM = "twinlog";
    private static final String TOPIC = "failback";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final int RECORD_BYTES = 1024;
    private static final int TAIL_RECORDS = 1000;
    private static final long TIMEOUT_MS = 600_000;

    private final int round;
    private final BenchOptions options;
    private final List<MirrorBenchmark.Figure> figures = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    FailbackBenchmark(int round, BenchOptions options) {
        this.round = round;
        this.options = options;
    }

    List<MirrorBenchmark.Figure> figures() {
        return figures;
    }

    List<String> notes() {
        return notes;
    }

    private void add(String name, double value, String unit) {
        figures.add(new MirrorBenchmark.Figure(SYSTEM, round, name, value, unit));
        log.info("[{}] failback: {} = {} {}", SYSTEM, name, String.format("%.1f", value), unit);
    }

    void run() throws Exception {
        Properties overrides = new Properties();
        overrides.setProperty(BrokerConfig.DEFAULT_REPLICATION_FACTOR, "1");
        long prefixBytes = options.failbackPrefixMiB() * 1024L * 1024L;
        try (TwinlogReplicatedCluster a = new TwinlogReplicatedCluster(TempDirectories.create("failback-a"),
                options.sessionTimeoutMs(), null, overrides);
             TwinlogReplicatedCluster b = new TwinlogReplicatedCluster(TempDirectories.create("failback-b"),
                     options.sessionTimeoutMs(), null, overrides)) {
            a.start();
            b.start();
            try (Admin aAdmin = admin(a); Admin bAdmin = admin(b);
                 MirrorAdmin onB = MirrorAdmin.create(b.bootstrapServers(), Duration.ofSeconds(300));
                 MirrorAdmin onA = MirrorAdmin.create(a.bootstrapServers(), Duration.ofSeconds(300))) {
                aAdmin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
                long start = System.nanoTime();
                long records = produce(a, prefixBytes / RECORD_BYTES);
                add("shared prefix written on A (" + records + " records of " + RECORD_BYTES + " B)",
                        millisSince(start), "ms");

                start = System.nanoTime();
                onB.createClusterMirror("fb", Map.of("bootstrap.servers", a.bootstrapServers()));
                onB.startMirrorTopics("fb", List.of(TOPIC), List.of(), List.of());
                await("B mirrored the prefix", () -> end(bAdmin) == records);
                add("prefix mirrored A -> B", millisSince(start), "ms");

                onB.stopMirrorTopics("fb", List.of(TOPIC), List.of());
                await("B failed over", () -> state(onB, "fb").equals("STOPPED"));
                long aPrefixSize = size(aAdmin);
                produce(a, TAIL_RECORDS); // A's own tail, never mirrored: cut and quarantined at failback
                produce(b, TAIL_RECORDS); // B's records after the failover: what A fetches
                long bEnd = end(bAdmin);

                start = System.nanoTime();
                onA.createClusterMirror("back", Map.of("bootstrap.servers", b.bootstrapServers()));
                onA.startMirrorTopics("back", List.of(TOPIC), List.of(), List.of());
                await("A failed back and caught up", () -> state(onA, "back").equals("MIRRORING")
                        && end(aAdmin) == bEnd);
                add("failback: StartMirrorTopics on A until A holds B's log end and is MIRRORING",
                        millisSince(start), "ms");
                long fetched = size(aAdmin) - aPrefixSize;
                add("failback: bytes A's log gained (fetched from B)", fetched, "B");
                add("failback: shared prefix kept", aPrefixSize, "B");

                start = System.nanoTime();
                StringWriter out = new StringWriter();
                int status = MirrorsCommand.newCommandLine().setOut(new PrintWriter(out, true))
                        .execute("--bootstrap-server", a.bootstrapServers(), "--verify", "--mirror", "back");
                add("--verify of the partition on A", millisSince(start), "ms");
                notes.add("failback --verify (exit " + status + "): " + out.toString().trim());
                if (status != 0) {
                    throw new IllegalStateException("--verify after failback found a difference: " + out);
                }
            }
        }
    }

    private long produce(TwinlogReplicatedCluster cluster, long count) throws Exception {
        Map<String, Object> configs = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "1", ProducerConfig.LINGER_MS_CONFIG, 20,
                ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024, ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        byte[] value = new byte[RECORD_BYTES];
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(configs, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (long i = 0; i < count; i++) {
                value[(int) (i % RECORD_BYTES)]++;
                producer.send(new ProducerRecord<>(TOPIC, 0, null, value.clone()));
            }
            producer.flush();
        }
        return count;
    }

    private static Admin admin(TwinlogReplicatedCluster cluster) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "120000");
        return Admin.create(p);
    }

    private static long end(Admin admin) throws Exception {
        return admin.listOffsets(Map.of(TP, OffsetSpec.latest())).partitionResult(TP).get().offset();
    }

    /** The partition's log size on its (only) replica, from DescribeLogDirs. */
    private static long size(Admin admin) throws Exception {
        List<Integer> brokers = admin.describeCluster().nodes().get().stream().map(n -> n.id()).toList();
        long size = 0;
        for (Map<String, LogDirDescription> dirs : admin.describeLogDirs(brokers).allDescriptions().get().values()) {
            for (LogDirDescription dir : dirs.values()) {
                ReplicaInfo info = dir.replicaInfos().get(TP);
                if (info != null) {
                    size += info.size();
                }
            }
        }
        return size;
    }

    private static String state(MirrorAdmin admin, String mirror) throws Exception {
        return admin.describeClusterMirrors(List.of(mirror)).get(mirror).topics().get(TOPIC).partitions().get(0)
                .state();
    }

    private interface Check {
        boolean done() throws Exception;
    }

    private static void await(String what, Check check) throws Exception {
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        while (!check.done()) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("Timed out waiting until " + what);
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }

    private static double millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000.0;
    }
}
