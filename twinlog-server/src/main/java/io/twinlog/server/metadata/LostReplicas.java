package io.twinlog.server.metadata;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.TopicImage;
import org.apache.kafka.common.TopicIdPartition;

import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The replicas this broker lost with its disk: found at start-up, before it registers or applies any leadership,
 * as those the metadata has in the ISR without a log here (a replaced or wiped disk, a deleted partition dir), plus
 * those found at an earlier start that are still in the ISR (the broker went down again before the controller took
 * it out, and its log of them, created empty as a follower meanwhile, no longer tells). The registration carries
 * them, so no controller elects this broker from an ISR it was in with records it no longer has, and the applier
 * does not lead one on a leadership from before (campaign defect 3: elected from the ISR of the quarantine with an
 * empty log, the other replicas truncated theirs to it). An entry goes once the ISR no longer has this broker: it
 * then rejoins as any follower, once caught up. Pure.
 *
 * @param replicas the lost replicas
 */
public record LostReplicas(Set<TopicIdPartition> replicas) {
    public static final LostReplicas NONE = new LostReplicas(Set.of());

    public LostReplicas {
        replicas = Set.copyOf(replicas);
    }

    /**
     * @param hasLog  whether this broker has a log of the partition (loaded, in an online dir, of that topic ID)
     * @param earlier the entries of the earlier start (kept in the log dirs)
     */
    public static LostReplicas find(int brokerId, MetadataImage image, Predicate<TopicIdPartition> hasLog,
                                    Set<TopicIdPartition> earlier) {
        Set<TopicIdPartition> lost = new HashSet<>();
        for (TopicImage topic : image.topics().values()) {
            for (PartitionImage p : topic.partitions().values()) {
                if (p.isr().contains(brokerId)) {
                    TopicIdPartition id = new TopicIdPartition(topic.topicId(), p.partition(), topic.name());
                    if (earlier.contains(id) || !hasLog.test(id)) {
                        lost.add(id);
                    }
                }
            }
        }
        return new LostReplicas(lost);
    }

    /** These entries less those whose partition (of the same topic ID) no longer has this broker in its ISR. */
    public LostReplicas stillInIsr(int brokerId, MetadataImage image) {
        Set<TopicIdPartition> kept = new HashSet<>();
        for (TopicIdPartition id : replicas) {
            Optional<PartitionImage> p = image.topic(id.topic()).filter(t -> t.topicId().equals(id.topicId()))
                    .map(t -> t.partitions().get(id.partition()));
            if (p.isPresent() && p.get().isr().contains(brokerId)) {
                kept.add(id);
            }
        }
        return kept.size() == replicas.size() ? this : new LostReplicas(kept);
    }

    public boolean isEmpty() {
        return replicas.isEmpty();
    }

    public boolean isLost(TopicIdPartition partition) {
        return !replicas.isEmpty() && replicas.contains(partition);
    }
}
