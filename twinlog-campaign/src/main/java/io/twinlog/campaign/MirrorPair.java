package io.twinlog.campaign;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The two clusters and the mirror between them, with the operator's verbs as {@code twinlog-mirrors.sh} runs them
 * through {@link MirrorAdmin}: which cluster takes writes (the source), failover (the destination stops mirroring
 * and becomes writable) and failback (the old source mirrors from the new one: the roles swap). The mirror on
 * cluster X is named {@code from-Y}.
 */
final class MirrorPair {
    private static final Logger log = LoggerFactory.getLogger(MirrorPair.class);
    static final String FLAG = "mirror.support.unclean.leader.election";
    static final Duration BOUND = Duration.ofSeconds(120);

    private final ProcessCluster[] clusters;
    private final String topic;
    private final int partitions;
    private final boolean[] mirrorCreated = new boolean[2];
    private int source;

    MirrorPair(ProcessCluster a, ProcessCluster b, String topic, int partitions) {
        this.clusters = new ProcessCluster[] {a, b};
        this.topic = topic;
        this.partitions = partitions;
    }

    ProcessCluster source() {
        return clusters[source];
    }

    ProcessCluster destination() {
        return clusters[1 - source];
    }

    List<ProcessCluster> both() {
        return List.of(clusters);
    }

    String topic() {
        return topic;
    }

    int partitions() {
        return partitions;
    }

    /** The topic on cluster a, mirrored by b; {@code FLAG} set on both sides. */
    void setUp() throws Exception {
        try (Admin admin = source().admin()) {
            NewTopic newTopic = new NewTopic(topic, partitions, (short) 3).configs(Map.of(
                    "min.insync.replicas", "2", FLAG, "true", "unclean.leader.election.enable", "false"));
            // a cluster just started on a loaded machine can answer after the admin's 20 s (seed 20261208's first
            // try ended there, the topic created a second later): ask again until it is listed, within the bound
            Waits.waitUntil("the topic " + topic + " on " + source(), () -> {
                if (!admin.listTopics().names().get().contains(topic)) {
                    admin.createTopics(List.of(newTopic)).all().get();
                }
                return true;
            }, BOUND);
        }
        startMirror(destination());
        try (Admin admin = destination().admin()) {
            Waits.waitUntil("the mirror topic on " + destination(), () -> admin.listTopics().names().get()
                    .contains(topic), BOUND);
        }
        setTopicConfig(destination(), FLAG, "true");
        setTopicConfig(destination(), "min.insync.replicas", "2");
        awaitMirrorStates("MIRRORING");
    }

    /** Stops mirroring on the destination and waits until every partition is STOPPED: it takes writes. */
    void failOver() throws Exception {
        ProcessCluster d = destination();
        log.info("[Campaign] failover: {} stops mirroring {}", d, topic);
        try (MirrorAdmin admin = mirrorAdmin(d)) {
            Map<String, ?> errors = admin.stopMirrorTopics(mirrorOn(d), List.of(topic), List.of());
            if (!errors.isEmpty()) {
                throw new IllegalStateException("failover refused by " + d + ": " + errors);
            }
        }
        awaitMirrorStates("STOPPED");
    }

    /** The old source mirrors from the new one; it becomes the destination. */
    void failBack() throws Exception {
        ProcessCluster oldSource = source();
        source = 1 - source;
        log.info("[Campaign] failback: {} mirrors {} from {}", oldSource, topic, source());
        startMirror(oldSource);
    }

    /** {@code --start} of the topic on {@code destination}'s mirror (created the first time). */
    void startMirror(ProcessCluster destination) throws Exception {
        int index = destination == clusters[0] ? 0 : 1;
        ProcessCluster from = clusters[1 - index];
        try (MirrorAdmin admin = mirrorAdmin(destination)) {
            if (!mirrorCreated[index]) {
                admin.createClusterMirror(mirrorOn(destination), Map.of("bootstrap.servers", from.mirrorBootstrap()));
                mirrorCreated[index] = true;
            }
            Map<String, ?> errors = admin.startMirrorTopics(mirrorOn(destination), List.of(topic), List.of(),
                    List.of());
            if (!errors.isEmpty()) {
                throw new IllegalStateException("--start of " + topic + " refused by " + destination + ": " + errors);
            }
        }
    }

    void pauseMirror() throws Exception {
        try (MirrorAdmin admin = mirrorAdmin(destination())) {
            admin.pauseMirrorTopics(mirrorOn(destination()), List.of(topic), List.of());
        }
        awaitMirrorStates("PAUSED");
    }

    void resumeMirror() throws Exception {
        try (MirrorAdmin admin = mirrorAdmin(destination())) {
            admin.resumeMirrorTopics(mirrorOn(destination()), List.of(topic), List.of());
        }
    }

    /** The destination's mirror partitions, as {@code --describe} shows them. */
    List<MirrorAdmin.PartitionDescription> mirrorPartitions() throws Exception {
        ProcessCluster d = destination();
        try (MirrorAdmin admin = mirrorAdmin(d)) {
            return admin.describeClusterMirrors(List.of(mirrorOn(d))).get(mirrorOn(d)).topics().get(topic)
                    .partitions();
        }
    }

    void awaitMirrorStates(String state) {
        Waits.waitFor("every partition of " + topic + " on " + destination() + " " + state, this::mirrorPartitions,
                ps -> ps.size() == partitions && ps.stream().allMatch(p -> p.state().equals(state)), BOUND);
    }

    /** Waits until the destination has mirrored everything the (quiet) source holds: every lag 0 while MIRRORING. */
    void awaitCaughtUp() {
        Waits.waitFor("the mirror on " + destination() + " to catch up", this::mirrorPartitions,
                ps -> ps.size() == partitions && ps.stream().allMatch(p -> p.state().equals("MIRRORING")
                        && p.lag() == 0 && p.sourceLogEndOffset() >= 0), BOUND);
    }

    void setTopicConfig(ProcessCluster cluster, String key, String value) throws Exception {
        try (Admin admin = cluster.admin()) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry(key, value),
                    AlterConfigOp.OpType.SET)))).all().get();
        }
    }

    /** The broker that leads {@code tp} in {@code cluster} as its metadata says, or -1. */
    static int leaderOf(ProcessCluster cluster, TopicPartition tp) throws Exception {
        try (Admin admin = cluster.admin()) {
            TopicDescription d = admin.describeTopics(List.of(tp.topic())).allTopicNames().get().get(tp.topic());
            TopicPartitionInfo p = d.partitions().get(tp.partition());
            Node leader = p.leader();
            return leader == null || leader.isEmpty() ? -1 : leader.id();
        }
    }

    static int awaitLeader(ProcessCluster cluster, TopicPartition tp, int expected) {
        return Waits.waitFor(tp + " on " + cluster + " led by " + (expected < 0 ? "a broker" : "broker " + expected),
                () -> leaderOf(cluster, tp), id -> expected < 0 ? id >= 0 : id == expected, BOUND);
    }

    static String mirrorOn(ProcessCluster destination) {
        return "from-" + (destination.name().equals("a") ? "b" : "a");
    }

    private static MirrorAdmin mirrorAdmin(ProcessCluster cluster) {
        return MirrorAdmin.create(cluster.bootstrapServers(), Duration.ofSeconds(30));
    }
}
