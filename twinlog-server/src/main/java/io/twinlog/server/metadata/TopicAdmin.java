package io.twinlog.server.metadata;

import io.twinlog.common.tasks.Concurrently;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.ReplicaAssignor;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.controller.zk.MetadataStore;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.controller.zk.ZkPaths;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.Topic;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/**
 * Topic lifecycle writes on behalf of admin requests and auto-creation: validates against Kafka's rules, computes
 * assignments and writes them through the {@link MetadataStore}; the controller then elects the new partitions'
 * leaders. Each call waits until this broker's metadata image shows the complete change (with leaders) so a
 * client that asks right after the response sees its topic ready.
 */
public final class TopicAdmin {
    private static final long IMAGE_REFRESH_TIMEOUT_MS = 30_000;
    static final long BATCH_WAIT_BASE_MS = 30_000;
    static final long BATCH_WAIT_PER_PARTITION_MS = 5;
    /** Topic writes in flight at once in {@link #createAll}. */
    static final int ZOOKEEPER_THREADS = 8;

    private final MetadataStore store;
    private final MetadataWatcher watcher;
    private final TopicConfigs topicConfigs;
    private final Random random;

    public TopicAdmin(MetadataStore store, MetadataWatcher watcher, TopicConfigs topicConfigs, Random random) {
        this.store = store;
        this.watcher = watcher;
        this.topicConfigs = topicConfigs;
        this.random = random;
    }

    /** What a validated CreateTopics entry will write. */
    public record TopicPlan(String name, Uuid topicId, Map<Integer, List<Integer>> assignment, Map<String, String> configs) {
        public int replicationFactor() {
            return assignment.isEmpty() ? 0 : assignment.values().iterator().next().size();
        }
    }

    /**
     * Validates a topic creation and computes its assignment; nothing is written.
     *
     * @param numPartitions     -1 for the broker default (ignored when {@code manualAssignment} is given)
     * @param replicationFactor -1 for the broker default
     */
    public TopicPlan plan(String name, int numPartitions, short replicationFactor,
                          Map<Integer, List<Integer>> manualAssignment, Map<String, String> configs,
                          int defaultPartitions, short defaultReplicationFactor) {
        Topic.validate(name);
        MetadataImage image = watcher.image();
        if (image.topic(name).isPresent()) {
            throw new TopicExistsException("Topic '" + name + "' already exists.");
        }
        if (Topic.hasCollisionChars(name)) {
            for (String existing : image.topics().keySet()) {
                if (Topic.hasCollision(name, existing)) {
                    throw new InvalidTopicException("Topic '" + name
                            + "' collides with existing topic: " + existing);
                }
            }
        }
        topicConfigs.validate(configs);
        List<Integer> liveBrokers = new ArrayList<>(image.brokers().keySet());
        Map<Integer, List<Integer>> assignment;
        if (manualAssignment != null && !manualAssignment.isEmpty()) {
            if (numPartitions != -1 || replicationFactor != -1) {
                throw new InvalidRequestException(
                        "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.");
            }
            assignment = validateManualAssignment(manualAssignment, 0, new HashSet<>(liveBrokers));
        } else {
            int partitions = numPartitions == -1 ? defaultPartitions : numPartitions;
            short rf = replicationFactor == -1 ? defaultReplicationFactor : replicationFactor;
            if (partitions <= 0) {
                throw new InvalidPartitionsException("Number of partitions was set to an invalid non-positive value.");
            }
            if (rf <= 0) {
                throw new InvalidReplicationFactorException("Replication factor must be larger than 0, or -1 to use the default value.");
            }
            assignment = assign(liveBrokers, 0, partitions, rf);
        }
        return new TopicPlan(name, Uuid.randomUuid(), assignment, configs);
    }

    /** The same plan with a topic ID chosen by the caller (a mirror topic keeps its source's ID). */
    public TopicPlan withTopicId(TopicPlan plan, Uuid topicId) {
        if (watcher.image().topic(topicId).isPresent()) {
            throw new TopicExistsException("Topic ID " + topicId
                    + " is already used by topic " + watcher.image().topic(topicId).get().name());
        }
        return new TopicPlan(plan.name(), topicId, plan.assignment(), plan.configs());
    }

    /** Writes a planned topic and waits until it is visible (and hosted, if local) on this broker. */
    public MetadataImage create(TopicPlan plan) throws Exception {
        store.createTopic(plan.name(), plan.topicId(), plan.assignment(), plan.configs());
        return watcher.awaitApplied("topic " + plan.name() + " created", image -> shows(image, plan),
                IMAGE_REFRESH_TIMEOUT_MS);
    }

    /**
     * Writes many planned topics, then waits once until this broker's image shows all that were written: one wait for
     * the controller's elections and this broker's hosting of them all, where {@link #create} per topic waits for each
     * in turn (a mirror start of 100 topics took 28 s that way, decision 94). Each topic fails on its own: its write
     * refused, or still not visible when the wait ends ({@link #BATCH_WAIT_BASE_MS} plus
     * {@link #BATCH_WAIT_PER_PARTITION_MS} per partition); what was written stays written.
     *
     * @return each plan's failure by topic name, empty for a topic created and visible here
     */
    public Map<String, Optional<Exception>> createAll(List<TopicPlan> plans) throws InterruptedException {
        Map<String, Optional<Exception>> outcome = new LinkedHashMap<>();
        List<TopicPlan> written = new ArrayList<>();
        int partitions = 0;
        // each topic is its own ZooKeeper transaction, a few in flight at once
        List<Concurrently.Outcome<Void>> writes = Concurrently.run(plans, ZOOKEEPER_THREADS, "twinlog-topic-create",
                plan -> {
                    store.createTopic(plan.name(), plan.topicId(), plan.assignment(), plan.configs());
                    return null;
                });
        for (int i = 0; i < plans.size(); i++) {
            TopicPlan plan = plans.get(i);
            if (writes.get(i).failed()) {
                outcome.put(plan.name(), Optional.of(writes.get(i).failure()));
            } else {
                written.add(plan);
                partitions += plan.assignment().size();
                outcome.put(plan.name(), Optional.empty());
            }
        }
        if (written.isEmpty()) {
            return outcome;
        }
        long timeoutMs = BATCH_WAIT_BASE_MS + BATCH_WAIT_PER_PARTITION_MS * partitions;
        try {
            watcher.awaitApplied(written.size() + " topics created",
                    image -> written.stream().allMatch(plan -> shows(image, plan)), timeoutMs);
        } catch (TimeoutException e) {
            MetadataImage image = watcher.image();
            for (TopicPlan plan : written) {
                if (!shows(image, plan)) {
                    outcome.put(plan.name(), Optional.of(new TimeoutException("Topic '" + plan.name()
                            + "' was written but this broker's metadata did not show it with leaders within "
                            + timeoutMs + " ms; it may still appear")));
                }
            }
        }
        return outcome;
    }

    /** Whether {@code image} shows the planned topic complete: its ID, every partition with a state, its configs. */
    private static boolean shows(MetadataImage image, TopicPlan plan) {
        return image.topic(plan.name())
                .filter(t -> t.topicId().equals(plan.topicId()))
                .filter(t -> t.partitions().size() == plan.assignment().size())
                .filter(t -> t.partitions().values().stream().allMatch(p -> p.state() != null))
                .isPresent() && image.topicConfig(plan.name()).equals(plan.configs());
    }

    public MetadataImage delete(String topic) throws Exception {
        if (watcher.image().topic(topic).isEmpty()) {
            throw new UnknownTopicOrPartitionException("Topic '" + topic + "' does not exist.");
        }
        store.deleteTopic(topic);
        return watcher.awaitApplied("topic " + topic + " deleted", image -> image.topic(topic).isEmpty(),
                IMAGE_REFRESH_TIMEOUT_MS);
    }

    /** Validates a partition increase; returns the new partitions' assignment. */
    public Map<Integer, List<Integer>> planPartitions(String topic, int newCount, List<List<Integer>> manualAssignment) {
        TopicImage t = watcher.image().topic(topic).orElseThrow(() ->
                new UnknownTopicOrPartitionException("Topic '" + topic + "' does not exist."));
        int current = t.partitions().size();
        if (newCount < current) {
            throw new InvalidPartitionsException("Topic currently has " + current + " partitions, which is higher "
                    + "than the requested " + newCount + ".");
        }
        if (newCount == current) {
            throw new InvalidPartitionsException("Topic already has " + current + " partitions.");
        }
        int rf = t.partitions().get(0).replicas().size();
        List<Integer> liveBrokers = new ArrayList<>(watcher.image().brokers().keySet());
        if (manualAssignment != null) {
            if (manualAssignment.size() != newCount - current) {
                throw new InvalidReplicaAssignmentException("Increasing the number of partitions by "
                        + (newCount - current) + " but " + manualAssignment.size() + " assignments provided.");
            }
            Map<Integer, List<Integer>> m = new TreeMap<>();
            for (int i = 0; i < manualAssignment.size(); i++) {
                m.put(current + i, manualAssignment.get(i));
            }
            Map<Integer, List<Integer>> validated = validateManualAssignment(m, current, new HashSet<>(liveBrokers));
            for (List<Integer> replicas : validated.values()) {
                if (replicas.size() != rf) {
                    throw new InvalidReplicaAssignmentException("Inconsistent replication factor between partitions, "
                            + "partition 0 has " + rf + " while partitions [" + current + "] has replication factor "
                            + replicas.size() + ".");
                }
            }
            return validated;
        }
        return assign(liveBrokers, current, newCount - current, (short) rf);
    }

    public MetadataImage addPartitions(String topic, Map<Integer, List<Integer>> newPartitions) throws Exception {
        store.addPartitions(topic, newPartitions);
        return watcher.awaitApplied("new partitions of " + topic, image -> newPartitions.keySet().stream()
                .allMatch(p -> image.partition(new TopicPartition(topic, p))
                        .map(pi -> pi.state() != null).orElse(false)), IMAGE_REFRESH_TIMEOUT_MS);
    }

    /** Replaces a topic's overrides after validating the complete new set. */
    public MetadataImage setConfigs(String topic, Map<String, String> overrides) throws Exception {
        return alterConfigs(topic, current -> overrides).image();
    }

    /** The overrides an alter wrote, and the first image of this broker that shows them (or a later change). */
    public record AlteredConfigs(Map<String, String> configs, MetadataImage image) {
    }

    /**
     * Changes a topic's overrides: {@code change} turns the current overrides into the new ones, the complete new
     * set is validated, and the write is compare-and-set on the node's version, read and changed again if another
     * broker or client changed it meanwhile (so concurrent alters of different keys all survive). Waits until this
     * broker's image shows the write, so a describe right after the answer sees it.
     */
    public AlteredConfigs alterConfigs(String topic, UnaryOperator<Map<String, String>> change) throws Exception {
        if (watcher.image().topic(topic).isEmpty()) {
            throw new UnknownTopicOrPartitionException("Topic '" + topic + "' does not exist.");
        }
        MetadataStore.ConfigUpdate update = store.updateTopicConfig(topic, current -> {
            Map<String, String> next = change.apply(current);
            topicConfigs.validate(next);
            return next;
        });
        String path = ZkPaths.topicConfig(topic);
        MetadataImage image = watcher.awaitApplied("new configs of " + topic,
                shown -> watcher.shows(path, update.zxid()) || shown.topic(topic).isEmpty(), IMAGE_REFRESH_TIMEOUT_MS);
        return new AlteredConfigs(update.configs(), image);
    }

    public Map<String, String> currentOverrides(String topic) throws Exception {
        return store.readTopicConfig(topic);
    }

    private Map<Integer, List<Integer>> assign(List<Integer> liveBrokers, int first, int count, short rf) {
        if (liveBrokers.isEmpty()) {
            throw new InvalidReplicationFactorException("Replication factor: " + rf + " larger than available brokers: 0.");
        }
        int start = random.nextInt(liveBrokers.size());
        int shift = random.nextInt(liveBrokers.size());
        return ReplicaAssignor.assign(liveBrokers, first, count, rf, start, shift);
    }

    private static Map<Integer, List<Integer>> validateManualAssignment(Map<Integer, List<Integer>> manual, int firstPartition,
                                                                        Set<Integer> liveBrokers) {
        Map<Integer, List<Integer>> out = new TreeMap<>();
        int expected = firstPartition;
        Integer rf = null;
        for (Map.Entry<Integer, List<Integer>> e : new TreeMap<>(manual).entrySet()) {
            if (e.getKey() != expected) {
                throw new InvalidReplicaAssignmentException("Partitions should be a consecutive 0-based integer sequence");
            }
            expected++;
            List<Integer> replicas = e.getValue();
            if (replicas.isEmpty()) {
                throw new InvalidReplicaAssignmentException("Replica assignment for partition " + e.getKey() + " is empty.");
            }
            if (new HashSet<>(replicas).size() != replicas.size()) {
                throw new InvalidReplicaAssignmentException("Duplicate brokers not allowed in replica assignment: "
                        + replicas + " for partition id " + e.getKey() + ".");
            }
            for (Integer b : replicas) {
                if (!liveBrokers.contains(b)) {
                    throw new InvalidReplicaAssignmentException("Unknown broker " + b + " in the replica assignment of "
                            + "partition " + e.getKey() + "; live brokers are "
                            + liveBrokers + ".");
                }
            }
            if (rf != null && rf != replicas.size()) {
                throw new InvalidReplicaAssignmentException("All partitions should have the same number of replicas");
            }
            rf = replicas.size();
            out.put(e.getKey(), List.copyOf(replicas));
        }
        return out;
    }

}
