package io.twinlog.testkit;

import io.twinlog.clients.mirror.MirrorAdmin;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The two clusters of a mirroring test: a source and a destination, each with an {@link Admin}, and a
 * {@link MirrorAdmin} on each (the destination's creates mirrors of the source; the source's one mirrors back at a
 * failback), with the steps those tests share. Closing it closes the clients, then the destination, then the source.
 *
 * <pre>
 * try (MirroredClusters clusters = MirroredClusters.start()) {
 *     clusters.createSourceTopics(new NewTopic("orders", 1, (short) 1));
 *     clusters.source().produce("orders", 0, 100, "a");
 *     clusters.mirror("dr", "orders");
 *     clusters.awaitMirrored(new TopicPartition("orders", 0));
 *     clusters.failOver("dr", "orders");       // the destination takes writes
 *     clusters.failBack("back", "orders");     // the source mirrors the destination
 * }
 * </pre>
 */
public class MirroredClusters implements AutoCloseable {
    /** The deadline of the mirror clients' calls and of the waits here. */
    public static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final TestCluster source;
    private final TestCluster destination;
    private final Admin sourceAdmin;
    private final Admin destinationAdmin;
    private final MirrorAdmin mirrors;
    private MirrorAdmin mirrorsOnSource; // opened when first asked for: by a failback

    /**
     * Opens the clients of two started clusters, which it then owns. For a subclass's constructor; tests start one
     * with {@link #start(TestCluster.Builder, TestCluster.Builder, Opener)}.
     */
    protected MirroredClusters(TestCluster source, TestCluster destination) {
        this.source = source;
        this.destination = destination;
        this.sourceAdmin = source.admin();
        this.destinationAdmin = destination.admin();
        this.mirrors = MirrorAdmin.create(destination.bootstrapServers(), TIMEOUT);
    }

    /** Makes the fixture (or a subclass of it) of two started clusters, after whatever a test does to them first. */
    @FunctionalInterface
    public interface Opener<T extends MirroredClusters> {
        T open(TestCluster source, TestCluster destination) throws Exception;
    }

    /** Two one-broker clusters. */
    public static MirroredClusters start() throws Exception {
        return start(TestCluster.builder().brokers(1), TestCluster.builder().brokers(1));
    }

    /** Two clusters as the builders say. */
    public static MirroredClusters start(TestCluster.Builder source, TestCluster.Builder destination)
            throws Exception {
        return start(source, destination, MirroredClusters::new);
    }

    /** Two clusters as the builders say, opened by {@code open}; both are closed if a step fails. */
    public static <T extends MirroredClusters> T start(TestCluster.Builder source, TestCluster.Builder destination,
                                                      Opener<T> open) throws Exception {
        TestCluster startedSource = source.build().start();
        TestCluster startedDestination = null;
        try {
            startedDestination = destination.build().start();
            return open.open(startedSource, startedDestination);
        } catch (Exception | Error e) {
            // broad: whatever failed, the clusters started so far are closed before it goes on
            if (startedDestination != null) {
                startedDestination.close();
            }
            startedSource.close();
            throw e;
        }
    }

    public TestCluster source() {
        return source;
    }

    public TestCluster destination() {
        return destination;
    }

    public Admin sourceAdmin() {
        return sourceAdmin;
    }

    public Admin destinationAdmin() {
        return destinationAdmin;
    }

    /** The destination's mirror client: it creates, starts, fails over and describes the mirrors of the source. */
    public MirrorAdmin mirrors() {
        return mirrors;
    }

    /** The source's mirror client: after a failover, the source mirrors the destination back with it. */
    public MirrorAdmin mirrorsOnSource() {
        if (mirrorsOnSource == null) {
            mirrorsOnSource = MirrorAdmin.create(source.bootstrapServers(), TIMEOUT);
        }
        return mirrorsOnSource;
    }

    /** Creates topics on the source and waits until they are created. */
    public void createSourceTopics(NewTopic... topics) throws Exception {
        sourceAdmin.createTopics(List.of(topics)).all().get();
    }

    /**
     * Creates mirror {@code name} of the source on the destination with {@code configs} (besides the source's
     * {@code bootstrap.servers}), without topics: for tests of the mirror's own configs (topic filters, group sync).
     */
    public void createMirror(String name, Map<String, String> configs) throws Exception {
        Map<String, String> all = new HashMap<>();
        all.put("bootstrap.servers", source.bootstrapServers());
        all.putAll(configs);
        mirrors.createClusterMirror(name, all);
    }

    /** Creates mirror {@code name} of the source on the destination and starts {@code topics}; a refusal fails. */
    public void mirror(String name, String... topics) throws Exception {
        createMirror(name, Map.of());
        startTopics(mirrors, name, List.of(topics));
    }

    /** Fails {@code topic} over to the destination and waits until every partition is STOPPED, so writable. */
    public void failOver(String name, String topic) throws Exception {
        MirrorSteps.failOver(mirrors, name, topic);
    }

    /**
     * Fails back after a failover: creates mirror {@code name} of the destination on the source and starts
     * {@code topic}, which the source then cuts to what it shares with the destination and mirrors from there.
     */
    public void failBack(String name, String topic) throws Exception {
        MirrorSteps.startMirroring(mirrorsOnSource(), name, destination, topic);
    }

    /** The destination's mirror {@code name}'s view of one partition. */
    public MirrorAdmin.PartitionDescription partition(String name, TopicPartition tp) throws Exception {
        return partition(mirrors, name, tp);
    }

    /** Waits until every partition of {@code topic} in the destination's mirror {@code name} is in {@code state}. */
    public void awaitState(String name, String topic, String state) {
        awaitState(mirrors, name, topic, state);
    }

    /**
     * Waits until the destination's every replica of {@code tp} holds the source leader's log batch for batch,
     * and returns it.
     */
    public List<ReplicaLogs.Batch> awaitMirrored(TopicPartition tp) {
        return MirrorInvariants.awaitMirrored(source, destination, tp);
    }

    /** A mirror's view of one partition, on the cluster {@code admin} talks to. */
    public static MirrorAdmin.PartitionDescription partition(MirrorAdmin admin, String name, TopicPartition tp)
            throws Exception {
        return admin.describeClusterMirrors(List.of(name)).get(name).topics().get(tp.topic()).partitions().stream()
                .filter(p -> p.partition() == tp.partition()).findFirst()
                .orElseThrow(() -> new AssertionError("mirror " + name + " does not describe " + tp));
    }

    /**
     * Waits until every partition of {@code topic} in mirror {@code name} on {@code admin}'s cluster is in
     * {@code state}.
     */
    public static void awaitState(MirrorAdmin admin, String name, String topic, String state) {
        Waits.waitFor(topic + " " + state + " in mirror " + name, () -> admin.describeClusterMirrors(List.of(name))
                .get(name).topics().get(topic).partitions(), partitions -> !partitions.isEmpty()
                && partitions.stream().allMatch(p -> p.state().equals(state)), TIMEOUT);
    }

    private static void startTopics(MirrorAdmin admin, String name, List<String> topics) throws Exception {
        Map<String, ?> errors = admin.startMirrorTopics(name, topics, List.of(), List.of());
        if (!errors.isEmpty()) {
            throw new AssertionError("starting " + topics + " on mirror " + name + " was refused: " + errors);
        }
    }

    @Override
    public void close() {
        if (mirrorsOnSource != null) {
            mirrorsOnSource.close();
        }
        mirrors.close();
        sourceAdmin.close();
        destinationAdmin.close();
        destination.close();
        source.close();
    }
}
