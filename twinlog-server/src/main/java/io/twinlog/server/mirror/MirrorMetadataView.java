package io.twinlog.server.mirror;

import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.mirror.MirrorTopicConfigs;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorTruncation;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the mirror API handlers read from one metadata image: the mirror topics' partitions and their state records
 * as their leaders last wrote them, the truncations each replica applied. One view per request (or per image a
 * failover waits on), so an answer is read from one image, never from two that ZooKeeper changed between. Reads
 * memory only: safe on any thread, including the metadata thread's callbacks.
 */
final class MirrorMetadataView {
    private final MetadataImage image;

    private MirrorMetadataView(MetadataImage image) {
        this.image = image;
    }

    static MirrorMetadataView of(MetadataImage image) {
        return new MirrorMetadataView(image);
    }

    /** The name mirror topic {@code topic} has on its source, when it is not {@code topic} (decision 125). */
    Optional<String> sourceTopic(String topic) {
        return Optional.ofNullable(image.mirrors().topics().get(topic)).flatMap(MirrorImage.MirrorTopic::sourceTopic);
    }

    /** The topic's ID here, {@link Uuid#ZERO_UUID} while this cluster has no such topic. */
    Uuid topicId(String topic) {
        return image.topic(topic).map(TopicImage::topicId).orElse(Uuid.ZERO_UUID);
    }

    /** The topic's partitions here, by index; none while this cluster has no such topic. */
    Collection<PartitionImage> partitions(String topic) {
        return image.topic(topic).map(t -> t.partitions().values()).orElse(List.of());
    }

    /** Every partition of these topics that this cluster has. */
    List<TopicPartition> partitionsOf(Collection<String> topics) {
        List<TopicPartition> out = new ArrayList<>();
        for (String topic : topics) {
            partitions(topic).forEach(p -> out.add(new TopicPartition(topic, p.partition())));
        }
        return out;
    }

    /** The mirror that feeds the topic, if it is a mirror topic. */
    Optional<String> mirrorOf(String topic) {
        return Optional.ofNullable(image.mirrors().topics().get(topic)).map(MirrorImage.MirrorTopic::mirror);
    }

    /** The partition's state record, if its leader wrote one. */
    Optional<MirrorPartitionRecord> recorded(TopicPartition tp) {
        return Optional.ofNullable(image.mirrors().partitions().get(tp))
                .map(mp -> MirrorPartitionRecord.fromJson(mp.json()));
    }

    /** The partition's state record, or the initial one while its leader has written none. */
    MirrorPartitionRecord record(TopicPartition tp) {
        return recorded(tp).orElseGet(() -> MirrorPartitionRecord.initial(-1));
    }

    /**
     * The replicas a pending truncation still waits for: those of the ISR, or every assigned replica with the topic's
     * {@code mirror.support.unclean.leader.election} (decision 38), that have not applied its latest point.
     */
    List<Integer> truncationPendingReplicas(TopicPartition tp, PartitionImage partition, MirrorTruncation truncation) {
        List<Integer> pending = new ArrayList<>();
        if (!truncation.pending()) {
            return pending;
        }
        boolean everyReplica = MirrorTopicConfigs.supportsUncleanLeaderElection(image.topicConfig(tp.topic()));
        Map<Integer, Long> applied = image.mirrors().truncationsApplied(tp);
        for (int r : everyReplica ? partition.replicas() : partition.isr()) {
            if (!Long.valueOf(truncation.latest().id()).equals(applied.get(r))) {
                pending.add(r);
            }
        }
        return pending;
    }

    /**
     * Whether every partition of the topic is STOPPED (writable: its failover is done); true for a topic this
     * cluster does not have. From the states the image has decoded, no record parsed: a failover waits on this at
     * every image.
     */
    boolean allStopped(String topic) {
        return image.topic(topic).map(t -> t.partitions().keySet().stream().allMatch(p -> {
            MirrorImage.MirrorPartition mp = image.mirrors().partitions().get(new TopicPartition(topic, p));
            return mp != null && mp.state() == MirrorPartitionState.STOPPED;
        })).orElse(true);
    }

    /** The reason of the first partition of the topic whose failover went FAILED, if any. */
    Optional<String> failedFailover(String topic) {
        for (PartitionImage p : partitions(topic)) {
            MirrorImage.MirrorPartition mp = image.mirrors().partitions().get(new TopicPartition(topic, p.partition()));
            if (mp == null || mp.state() != MirrorPartitionState.FAILED) {
                continue;
            }
            MirrorPartitionRecord r = MirrorPartitionRecord.fromJson(mp.json());
            if (r.previousState() == MirrorPartitionState.STOPPING) {
                return Optional.of("partition " + p.partition() + ": " + r.lastError().orElse("failed"));
            }
        }
        return Optional.empty();
    }
}
