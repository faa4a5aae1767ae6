package io.twinlog.controller.metadata;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.server.immutable.ImmutableMap;

import java.util.Map;

/**
 * The cluster-mirror part of the metadata image: which topics are mirror topics (and of which mirror, in which
 * desired state), and each mirror partition's durable state record as its leader last wrote it. The controller
 * reads it to raise leader epochs (EPOCH_FENCING, failover); brokers read it to treat mirror partitions' epochs
 * and produce requests specially.
 */
public record MirrorImage(Map<String, MirrorTopic> topics, Map<TopicPartition, MirrorPartition> partitions) {
    public static final MirrorImage EMPTY = new MirrorImage(Map.of(), Map.of());

    public MirrorImage {
        topics = Map.copyOf(topics);
        // a persistent map is already immutable and shares structure with the previous image's: not copied
        partitions = partitions instanceof ImmutableMap<TopicPartition, MirrorPartition> persistent ? persistent
                : Map.copyOf(partitions);
    }

    /** A topic fed by a mirror, and what the operator asked for it. */
    public record MirrorTopic(String mirror, DesiredMirrorState desired) {
    }

    /**
     * A mirror partition's state (decoded once, here) with its state record (raw JSON, owned by the mirror module)
     * and its ZooKeeper version.
     */
    public record MirrorPartition(MirrorPartitionState state, int minLeaderEpoch, Map<String, Object> json,
                                  int version) {
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
