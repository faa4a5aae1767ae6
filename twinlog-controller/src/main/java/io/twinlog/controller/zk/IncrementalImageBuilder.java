package io.twinlog.controller.zk;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.PointInTimeStop;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.FeatureLevels;
import io.twinlog.controller.metadata.MetadataDelta;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicAssignment;
import io.twinlog.controller.metadata.TopicImage;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.immutable.ImmutableMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Builds {@link MetadataImage}s from ZooKeeper nodes one changed node at a time: each node is decoded when it
 * changes ({@link #onNode}) and kept decoded, and {@link #build} re-assembles only the topics whose nodes changed,
 * reusing the previous image's {@link TopicImage} for every other topic and the previous {@link MirrorImage} when no
 * mirror node changed. So a change to one partition's state costs one JSON decode and one topic, not a re-read of
 * every node (which at 10,000 mirror partitions was most of the metadata thread's time).
 *
 * <p>Not thread-safe: owned by the metadata thread. A node that cannot be decoded is logged with its stack trace
 * and keeps its last good value (the node's next change is decoded again), so one bad record does not freeze the
 * whole image as a failed full rebuild did.
 *
 * <pre>
 * /brokers/ids/&lt;id&gt;                              → brokers
 * /brokers/topics/&lt;topic&gt;                        → assignments (topic dirty)
 * /brokers/topics/&lt;topic&gt;/partitions/&lt;p&gt;/state  → states (topic dirty)
 * /config/topics/&lt;topic&gt;                         → configs
 * /controller                                    → controller id
 * /mirrors/&lt;mirror&gt;/topics/&lt;topic&gt;              → mirror topics
 * /mirror_states/&lt;topic&gt;/&lt;p&gt;                    → mirror partitions
 * /mirror_truncations/&lt;broker&gt;                  → truncation points applied (their partitions dirty)
 * /admin/delete_topics/&lt;topic&gt;                  → deletion marks
 * /feature                                       → finalized feature levels
 * </pre>
 */
final class IncrementalImageBuilder {
    private static final Logger log = LoggerFactory.getLogger(IncrementalImageBuilder.class);

    private record Versioned<T>(T value, int version) {
    }

    private final String clusterId;
    private final Map<Integer, BrokerRegistration> brokers = new TreeMap<>();
    private final Map<String, Versioned<TopicAssignment>> assignments = new HashMap<>();
    private final Map<String, Map<Integer, Versioned<PartitionState>>> states = new HashMap<>();
    private final Map<String, Map<String, String>> configs = new HashMap<>();
    private final Map<String, Uuid> deletionMarks = new HashMap<>();
    private boolean deletionsDirty;
    private FeatureLevels features = FeatureLevels.DEFAULT;
    private boolean featuresDirty;
    private int controllerId = -1;
    private final Map<String, MirrorImage.MirrorTopic> mirrorTopics = new HashMap<>();
    /** Persistent (Kafka's pcollections-backed map): an image takes it as it is, without copying thousands. */
    private ImmutableMap<TopicPartition, MirrorImage.MirrorPartition> mirrorPartitions = ImmutableMap.empty();

    private final Set<String> dirtyTopics = new HashSet<>();
    private boolean brokersDirty;
    private boolean configsDirty;
    /** Mirror topics and partitions whose decoded value changed since the last build. */
    private final Set<String> dirtyMirrorTopics = new HashSet<>();
    private final Set<TopicPartition> dirtyMirrorPartitions = new HashSet<>();
    private final Map<Integer, Map<TopicPartition, Long>> appliedTruncations = new HashMap<>();
    /** The mirror keys the last {@link #build} changed, for {@link MetadataDelta}. */
    private Set<String> builtMirrorTopics = Set.of();
    private Set<TopicPartition> builtMirrorPartitions = Set.of();
    private long nodesDecoded;

    IncrementalImageBuilder(String clusterId) {
        this.clusterId = clusterId;
    }

    /** JSON nodes decoded since start: the cost the incremental build keeps small. */
    long nodesDecoded() {
        return nodesDecoded;
    }

    /**
     * Takes a node's current content ({@code data} empty: the node is gone). Paths outside the layout above are
     * ignored.
     */
    void onNode(String path, Optional<ChildData> data) {
        byte[] bytes = data.map(ChildData::getData).filter(b -> b.length > 0).orElse(null);
        int version = data.map(ChildData::getStat).map(s -> s.getVersion()).orElse(-1);
        String[] parts = path.split("/");
        try {
            if (path.equals(ZkPaths.FEATURE)) {
                features = bytes == null ? FeatureLevels.DEFAULT : FeatureLevels.fromNode(featureLevels(decode(bytes,
                        path)), version, path);
                featuresDirty = true;
            } else if (path.equals(ZkPaths.CONTROLLER)) {
                controllerId = bytes == null ? -1
                        : ((Number) decode(bytes, path).get("brokerId")).intValue();
                brokersDirty = true;
            } else if (parts.length == 4 && "brokers".equals(parts[1]) && "ids".equals(parts[2])) {
                int id = Integer.parseInt(parts[3]);
                if (bytes == null) {
                    brokers.remove(id);
                } else {
                    long epoch = data.map(ChildData::getStat).map(s -> s.getCzxid()).orElse(-1L);
                    brokers.put(id, BrokerRegistration.fromJson(id, epoch, counted(bytes), path));
                }
                brokersDirty = true;
            } else if (parts.length == 4 && "brokers".equals(parts[1]) && "topics".equals(parts[2])) {
                if (bytes == null) {
                    assignments.remove(parts[3]);
                } else {
                    assignments.put(parts[3], new Versioned<>(TopicAssignment.fromJson(counted(bytes), path), version));
                }
                dirtyTopics.add(parts[3]);
            } else if (parts.length == 7 && "brokers".equals(parts[1]) && "topics".equals(parts[2])
                    && "state".equals(parts[6])) {
                int partition = Integer.parseInt(parts[5]);
                if (bytes == null) {
                    Map<Integer, Versioned<PartitionState>> topicStates = states.get(parts[3]);
                    if (topicStates != null) {
                        topicStates.remove(partition);
                        if (topicStates.isEmpty()) {
                            states.remove(parts[3]);
                        }
                    }
                } else {
                    states.computeIfAbsent(parts[3], t -> new HashMap<>()).put(partition,
                            new Versioned<>(PartitionState.fromJson(counted(bytes), path), version));
                }
                dirtyTopics.add(parts[3]);
            } else if (parts.length == 4 && "config".equals(parts[1]) && "topics".equals(parts[2])) {
                if (bytes == null) {
                    configs.remove(parts[3]);
                } else {
                    configs.put(parts[3], topicConfig(decode(bytes, path)));
                }
                configsDirty = true;
            } else if (parts.length == 5 && "mirrors".equals(parts[1]) && "topics".equals(parts[3])) {
                MirrorImage.MirrorTopic before;
                MirrorImage.MirrorTopic after = null;
                if (bytes == null) {
                    before = mirrorTopics.remove(parts[4]);
                } else {
                    Map<String, Object> json = decode(bytes, path);
                    after = new MirrorImage.MirrorTopic(parts[2], decodeEnum(DesiredMirrorState.class,
                            json.getOrDefault("desiredState", "MIRRORING"), DesiredMirrorState.MIRRORING, path),
                            PointInTimeStop.fromJson(json),
                            json.get("sourceTopic") instanceof String source && !source.equals(parts[4])
                                    ? Optional.of(source) : Optional.empty());
                    before = mirrorTopics.put(parts[4], after);
                }
                if (!Objects.equals(before, after)) {
                    dirtyMirrorTopics.add(parts[4]);
                }
            } else if (parts.length == 4 && "admin".equals(parts[1]) && "delete_topics".equals(parts[2])) {
                if (bytes == null) {
                    deletionMarks.remove(parts[3]);
                } else {
                    deletionMarks.put(parts[3], Uuid.fromString((String) decode(bytes, path).get("topicId")));
                }
                deletionsDirty = true;
            } else if (parts.length == 3 && "mirror_truncations".equals(parts[1])) {
                int broker = Integer.parseInt(parts[2]);
                Map<TopicPartition, Long> after = bytes == null ? Map.of() : appliedTruncations(decode(bytes, path));
                Map<TopicPartition, Long> before = appliedTruncations.getOrDefault(broker, Map.of());
                if (after.isEmpty()) {
                    appliedTruncations.remove(broker);
                } else {
                    appliedTruncations.put(broker, after);
                }
                // the partitions whose confirmation changed: their leaders decide again
                Set<TopicPartition> changed = new HashSet<>(before.keySet());
                changed.addAll(after.keySet());
                changed.removeIf(tp -> Objects.equals(before.get(tp), after.get(tp)));
                dirtyMirrorPartitions.addAll(changed);
            } else if (parts.length == 4 && "mirror_states".equals(parts[1])) {
                TopicPartition tp = new TopicPartition(parts[2], Integer.parseInt(parts[3]));
                MirrorImage.MirrorPartition before;
                MirrorImage.MirrorPartition after = null;
                if (bytes == null) {
                    before = mirrorPartitions.get(tp);
                    mirrorPartitions = mirrorPartitions.removed(tp);
                } else {
                    Map<String, Object> json = decode(bytes, path);
                    Object min = json.get("minLeaderEpoch");
                    after = new MirrorImage.MirrorPartition(decodeEnum(MirrorPartitionState.class,
                            json.get("state"), MirrorPartitionState.UNKNOWN, path),
                            min == null ? -1 : ((Number) min).intValue(), json, version);
                    before = mirrorPartitions.get(tp);
                    mirrorPartitions = mirrorPartitions.updated(tp, after);
                }
                if (!Objects.equals(before, after)) {
                    dirtyMirrorPartitions.add(tp);
                }
            }
        } catch (RuntimeException e) {
            // broad: a node of any unreadable shape must not stop the image; the last good value stays
            log.error("Could not decode the ZooKeeper node {}; keeping its last good value until it changes again",
                    path, e);
        }
    }

    /** {@code {"version":1,"applied":{"<topic>":{"<p>":<id>}}}} as a map per partition. */
    private static Map<TopicPartition, Long> appliedTruncations(Map<String, Object> json) {
        Map<TopicPartition, Long> out = new HashMap<>();
        @SuppressWarnings("unchecked")
        Map<String, Map<String, Object>> applied = (Map<String, Map<String, Object>>) json.getOrDefault("applied",
                Map.of());
        applied.forEach((topic, partitions) -> partitions.forEach((p, id) ->
                out.put(new TopicPartition(topic, Integer.parseInt(p)), ((Number) id).longValue())));
        return Map.copyOf(out);
    }

    /** {@code {"version":1,"features":{"<name>":<level>}}} as levels by name. */
    private static Map<String, Short> featureLevels(Map<String, Object> json) {
        Map<String, Short> out = new HashMap<>();
        @SuppressWarnings("unchecked")
        Map<String, Object> raw = (Map<String, Object>) json.getOrDefault("features", Map.of());
        raw.forEach((name, level) -> out.put(name, ((Number) level).shortValue()));
        return out;
    }

    private Map<String, Object> decode(byte[] bytes, String path) {
        return Json.decode(counted(bytes), path);
    }

    /** The node's bytes, counted as one node decoded (the records decode themselves). */
    private byte[] counted(byte[] bytes) {
        nodesDecoded++;
        return bytes;
    }

    private static Map<String, String> topicConfig(Map<String, Object> json) {
        Map<String, String> c = new HashMap<>();
        @SuppressWarnings("unchecked")
        Map<String, Object> raw = (Map<String, Object>) json.getOrDefault("config", Map.of());
        raw.forEach((k, v) -> c.put(k, String.valueOf(v)));
        return Map.copyOf(c);
    }

    /** A state written by another version, or by hand, that this one does not know: logged, read as the fallback. */
    private static <E extends Enum<E>> E decodeEnum(Class<E> type, Object value, E fallback, String path) {
        if (value == null) {
            return fallback;
        }
        try {
            return Enum.valueOf(type, value.toString());
        } catch (IllegalArgumentException e) {
            log.warn("Unknown {} '{}' in {}; read as {}", type.getSimpleName(), value, path, fallback);
            return fallback;
        }
    }

    /**
     * What changed between the image the last {@link #build} was given and the one it returned. The builder knows
     * which nodes it decoded, so the mirror part is the keys whose value changed, not a comparison of thousands of
     * entries per image (which was most of the metadata thread's time in a 1,000-partition failover).
     */
    MetadataDelta delta(MetadataImage previous, MetadataImage next) {
        return MetadataDelta.between(previous, next, builtMirrorPartitions, builtMirrorTopics);
    }

    /** True if a node changed since the last {@link #build}. */
    boolean hasChanges() {
        return !dirtyTopics.isEmpty() || brokersDirty || configsDirty || deletionsDirty || featuresDirty
                || !dirtyMirrorTopics.isEmpty() || !dirtyMirrorPartitions.isEmpty();
    }

    /**
     * The next image: {@code previous} itself when nothing changed; else the changed topics re-assembled from their
     * decoded nodes and everything else taken from {@code previous}.
     */
    MetadataImage build(MetadataImage previous) {
        if (!hasChanges()) {
            builtMirrorTopics = Set.of();
            builtMirrorPartitions = Set.of();
            return previous;
        }
        Map<String, TopicImage> topics = new HashMap<>(previous.topics());
        for (String name : dirtyTopics) {
            Versioned<TopicAssignment> assignment = assignments.get(name);
            if (assignment == null) {
                topics.remove(name);
            } else {
                topics.put(name, topicImage(name, assignment));
            }
        }
        boolean mirrorsDirty = !dirtyMirrorTopics.isEmpty() || !dirtyMirrorPartitions.isEmpty();
        MirrorImage mirrors = mirrorsDirty ? new MirrorImage(mirrorTopics, mirrorPartitions, appliedTruncations)
                : previous.mirrors();
        builtMirrorTopics = Set.copyOf(dirtyMirrorTopics);
        builtMirrorPartitions = Set.copyOf(dirtyMirrorPartitions);
        dirtyTopics.clear();
        brokersDirty = false;
        configsDirty = false;
        deletionsDirty = false;
        featuresDirty = false;
        dirtyMirrorTopics.clear();
        dirtyMirrorPartitions.clear();
        return new MetadataImage(clusterId, brokers, topics, configs, controllerId, mirrors, deletionMarks,
                features);
    }

    private TopicImage topicImage(String name, Versioned<TopicAssignment> assignment) {
        Map<Integer, Versioned<PartitionState>> topicStates = states.getOrDefault(name, Map.of());
        SortedMap<Integer, PartitionImage> partitions = new TreeMap<>();
        assignment.value().replicas().forEach((p, replicas) -> {
            Versioned<PartitionState> state = topicStates.get(p);
            partitions.put(p, new PartitionImage(p, replicas, state == null ? null : state.value(),
                    state == null ? -1 : state.version()));
        });
        return new TopicImage(name, assignment.value().topicId(), Collections.unmodifiableSortedMap(partitions),
                assignment.value().reassigning(), assignment.version());
    }
}
