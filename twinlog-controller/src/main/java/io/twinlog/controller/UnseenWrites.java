package io.twinlog.controller;

import io.twinlog.controller.decisions.StateChange;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.store.StateWrite;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Partition states this controller wrote that its image does not show yet, with the version each write made.
 * A round decided from an image that lags its own writes would decide those partitions again from their old
 * state and fail the whole batch on their versions (then retry after a delay): a failover of a thousand mirror
 * partitions lost about a second to that. Reconciliation leaves them alone until the image shows them. Owned by
 * the controller's event thread; not thread-safe. Split from {@link Controller}.
 */
final class UnseenWrites {
    private final Map<TopicPartition, Written> writes = new HashMap<>();

    /** A state this controller wrote, of the topic with this ID (a topic deleted and created again is another). */
    private record Written(Uuid topicId, int version) {
        boolean shownOrGone(MetadataImage image, TopicPartition tp) {
            return image.topic(tp.topic()).filter(t -> t.topicId().equals(topicId))
                    .flatMap(t -> Optional.ofNullable(t.partitions().get(tp.partition())))
                    .map(p -> p.stateVersion() >= version).orElse(true);
        }
    }

    /** {@code committed} were written, as decided from {@code decidedFrom}: each waits for its new version. */
    void add(MetadataImage decidedFrom, List<StateChange> committed) {
        for (StateChange c : committed) {
            decidedFrom.topic(c.partition().topic()).ifPresent(t -> writes.put(c.partition(),
                    new Written(t.topicId(), c.expectedVersion() == StateWrite.CREATE ? 0 : c.expectedVersion() + 1)));
        }
    }

    /**
     * Forgets the writes {@code image} shows (or whose topic it no longer has, or has under another ID) and returns
     * the partitions still waiting.
     */
    Set<TopicPartition> stillUnseen(MetadataImage image) {
        writes.entrySet().removeIf(w -> w.getValue().shownOrGone(image, w.getKey()));
        return Set.copyOf(writes.keySet());
    }

    /** A resigned controller's writes are no longer its concern. */
    void clear() {
        writes.clear();
    }
}
