package io.twinlog.server.metadata;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.TopicImage;
import org.apache.kafka.common.TopicIdPartition;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The replicas this broker lost with its disk: found at start-up, before it registers or applies any leadership,
 * as those the metadata has in the ISR without a log here (a replaced or wiped disk, a deleted partition dir), plus
 * those found at an earlier start that are still in the ISR (the broker went down again before the controller took
 * it out, and its log of them, created empty as a follower meanwhile, no longer tells). The registration carries
 * them, so no controller elects this broker from an ISR it was in with records it no longer has, and the applier
 * does not lead one on a leadership from before (campaign defect 3: elected from the ISR of the quarantine with an
 * empty log, the other replicas truncated theirs to it). An entry goes once the ISR no longer has this broker (it
 * then rejoins as any follower, once caught up), or once it leads in a later leader epoch than the one it was found
 * at (an unclean election with no other replica alive, which elects it knowingly). Pure.
 *
 * @param replicas the lost replicas, each with the partition's leader epoch when it was found
 */
public record LostReplicas(Map<TopicIdPartition, Integer> replicas) {
    public static final LostReplicas NONE = new LostReplicas(Map.of());

    public LostReplicas {
        replicas = Map.copyOf(replicas);
    }

    /**
     * @param hasLog  whether this broker has a log of the partition (loaded, in an online dir, of that topic ID)
     * @param earlier the entries of the earlier start (kept in the log dirs)
     */
    public static LostReplicas find(int brokerId, MetadataImage image, Predicate<TopicIdPartition> hasLog,
                                    Map<TopicIdPartition, Integer> earlier) {
        Map<TopicIdPartition, Integer> lost = new HashMap<>();
        for (TopicImage topic : image.topics().values()) {
            for (PartitionImage p : topic.partitions().values()) {
                TopicIdPartition id = new TopicIdPartition(topic.topicId(), p.partition(), topic.name());
                Integer before = earlier.get(id);
                if (before != null && stillLost(brokerId, p, before)) {
                    lost.put(id, before);
                } else if (p.isr().contains(brokerId) && !hasLog.test(id)) {
                    lost.put(id, p.state().leaderEpoch());
                }
            }
        }
        return new LostReplicas(lost);
    }

    /** These entries less those whose partition no longer has this broker in its ISR, or has it lead since. */
    public LostReplicas stillLost(int brokerId, MetadataImage image) {
        Map<TopicIdPartition, Integer> kept = new HashMap<>();
        replicas.forEach((id, foundAt) -> {
            Optional<PartitionImage> p = image.topic(id.topic()).filter(t -> t.topicId().equals(id.topicId()))
                    .map(t -> t.partitions().get(id.partition()));
            if (p.isPresent() && stillLost(brokerId, p.get(), foundAt)) {
                kept.put(id, foundAt);
            }
        });
        return kept.size() == replicas.size() ? this : new LostReplicas(kept);
    }

    private static boolean stillLost(int brokerId, PartitionImage p, int foundAt) {
        return p.isr().contains(brokerId) && !(p.leader() == brokerId && p.state().leaderEpoch() > foundAt);
    }

    public boolean isEmpty() {
        return replicas.isEmpty();
    }

    /** Whether leading the partition in {@code leaderEpoch} would be leading it on a leadership from before. */
    public boolean isLost(TopicIdPartition partition, int leaderEpoch) {
        Integer foundAt = replicas.isEmpty() ? null : replicas.get(partition);
        return foundAt != null && leaderEpoch <= foundAt;
    }
}
