package io.twinlog.controller.metadata;

import org.apache.kafka.common.TopicPartition;

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
        partitions = Map.copyOf(partitions);
    }

    /** A topic fed by a mirror. */
    public record MirrorTopic(String mirror, String desiredState) {
    }

    /** A mirror partition's state record (raw JSON, owned by the mirror module) and its ZooKeeper version. */
    public record MirrorPartition(String state, int minLeaderEpoch, Map<String, Object> json, int version) {
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
        String state = p == null ? "UNKNOWN" : p.state();
        return !state.equals("STOPPING") && !state.equals("STOPPED");
    }
}
