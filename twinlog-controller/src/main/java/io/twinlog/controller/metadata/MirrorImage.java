package io.twinlog.controller.metadata;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.mirror.PointInTimeStop;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.server.immutable.ImmutableMap;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The cluster-mirror part of the metadata image: which topics are mirror topics (and of which mirror, in which
 * desired state), and each mirror partition's durable state record as its leader last wrote it. The controller
 * reads it to raise leader epochs (EPOCH_FENCING, failover); brokers read it to treat mirror partitions' epochs
 * and produce requests specially.
 */
public record MirrorImage(Map<String, MirrorTopic> topics, Map<TopicPartition, MirrorPartition> partitions,
                          Map<Integer, Map<TopicPartition, Long>> appliedTruncations) {
    public static final MirrorImage EMPTY = new MirrorImage(Map.of(), Map.of());

    public MirrorImage(Map<String, MirrorTopic> topics, Map<TopicPartition, MirrorPartition> partitions) {
        this(topics, partitions, Map.of());
    }

    /**
     * @param appliedTruncations per broker, the partition-wide truncation point (its id) each of its replicas has
     *                           applied ({@code /mirror_truncations/<broker>}, decision 38)
     */
    public MirrorImage {
        topics = Map.copyOf(topics);
        appliedTruncations = Map.copyOf(appliedTruncations);
        // a persistent map is already immutable and shares structure with the previous image's: not copied
        partitions = partitions instanceof ImmutableMap<TopicPartition, MirrorPartition> persistent ? persistent
                : Map.copyOf(partitions);
    }

    /**
     * A topic fed by a mirror, and what the operator asked for it: a failover to a point in time carries that time
     * ({@code stopAt}, with the desired state STOPPED; issue 30 point 2); {@code sourceTopic} is its name on the
     * source when that differs from its name here (a prefixed mirror, a failback into the original topic).
     */
    public record MirrorTopic(String mirror, DesiredMirrorState desired, Optional<PointInTimeStop> stopAt,
                              Optional<String> sourceTopic) {
        public MirrorTopic(String mirror, DesiredMirrorState desired) {
            this(mirror, desired, Optional.empty(), Optional.empty());
        }

        public MirrorTopic(String mirror, DesiredMirrorState desired, Optional<PointInTimeStop> stopAt) {
            this(mirror, desired, stopAt, Optional.empty());
        }

        /** The source topic of the mirror topic named {@code topic} here. */
        public String sourceName(String topic) {
            return sourceTopic.orElse(topic);
        }
    }

    /** The source topic of mirror topic {@code topic} (its own name when it is not renamed, or not a mirror topic). */
    public String sourceTopicOf(String topic) {
        MirrorTopic t = topics.get(topic);
        return t == null ? topic : t.sourceName(topic);
    }

    /**
     * A mirror partition's state (decoded once, here) with its state record (raw JSON, owned by the mirror module)
     * and its ZooKeeper version.
     */
    public record MirrorPartition(MirrorPartitionState state, int minLeaderEpoch, Map<String, Object> json,
                                  int version) {
        /**
         * The partition-wide truncation points its record holds (decision 38), oldest first, each as {@code [id,
         * offset]}; empty for none. Read from the raw record: the mirror module owns its format.
         */
        public List<long[]> truncationPoints() {
            if (!(json.get("truncations") instanceof List<?> list)) {
                return List.of();
            }
            List<long[]> out = new ArrayList<>(list.size());
            for (Object o : list) {
                if (o instanceof Map<?, ?> m && m.get("id") instanceof Number id
                        && m.get("offset") instanceof Number offset) {
                    out.add(new long[] {id.longValue(), offset.longValue()});
                }
            }
            return out;
        }

        /** The id of the latest truncation point, 0 for none. */
        public long latestTruncationId() {
            List<long[]> points = truncationPoints();
            return points.isEmpty() ? 0L : points.get(points.size() - 1)[0];
        }
    }

    /** The brokers whose replica of {@code tp} has applied a truncation point, with the id each applied. */
    public Map<Integer, Long> truncationsApplied(TopicPartition tp) {
        Map<Integer, Long> out = new TreeMap<>();
        appliedTruncations.forEach((broker, applied) -> {
            Long id = applied.get(tp);
            if (id != null) {
                out.put(broker, id);
            }
        });
        return out;
    }

    /**
     * True while the partition's leader epoch history must stay the source's: the topic is mirrored and the
     * partition has not reached failover (STOPPING/STOPPED), so becoming leader must not add local epochs.
     */
    public boolean keepsSourceEpochs(TopicPartition tp) {
        MirrorTopic t = topics.get(tp.topic());
        if (t == null) {
            return false;
        }
        MirrorPartition p = partitions.get(tp);
        MirrorPartitionState state = p == null ? MirrorPartitionState.UNKNOWN : p.state();
        return state != MirrorPartitionState.STOPPING && state != MirrorPartitionState.STOPPED;
    }
}
