package io.twinlog.server.metadata;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MetadataDelta;
import org.apache.kafka.common.TopicIdPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * This broker's {@link LostReplicas} through its life: found at start-up (and kept in the log dirs), then dropped
 * one by one as the metadata shows the broker out of their ISR, each change kept in the log dirs and handed to
 * {@code publish} (which updates the registration). Images arrive on the metadata thread; the applier reads
 * {@link #current} there too.
 */
public final class LostReplicaTracker {
    private static final Logger log = LoggerFactory.getLogger(LostReplicaTracker.class);

    private final int brokerId;
    private final LostReplicasFile file;
    private final Consumer<LostReplicas> publish;
    private volatile LostReplicas current = LostReplicas.NONE;

    public LostReplicaTracker(int brokerId, LostReplicasFile file, Consumer<LostReplicas> publish) {
        this.brokerId = brokerId;
        this.file = file;
        this.publish = publish;
    }

    /** At start-up, before the broker applies a leadership or registers: finds, records and returns them. */
    public LostReplicas findAtStart(MetadataImage image, Predicate<TopicIdPartition> hasLog) throws IOException {
        LostReplicas lost = LostReplicas.find(brokerId, image, hasLog, file.read());
        file.write(lost);
        current = lost;
        if (!lost.isEmpty()) {
            log.warn("Broker {} has no log of {} partitions whose ISR it is in ({}): its disk was replaced or wiped, "
                    + "or their dirs deleted. It registers them as lost, so it neither leads them nor stays in their "
                    + "ISR with records it no longer has, and rejoins each ISR once caught up from the leader. A "
                    + "partition whose only in-sync replica was this broker stays offline until a replica with the "
                    + "records is elected (kafka-leader-election --election-type unclean names one)", brokerId,
                    lost.replicas().size(), sample(lost));
        }
        return lost;
    }

    public LostReplicas current() {
        return current;
    }

    /** A metadata listener: drops the entries whose ISR no longer has this broker, or that it leads since. */
    public void onImage(MetadataImage previous, MetadataImage next, MetadataDelta delta) {
        LostReplicas before = current;
        if (before.isEmpty()) {
            return;
        }
        LostReplicas after = before.stillLost(brokerId, next);
        if (after == before) {
            return;
        }
        current = after;
        log.info("Broker {} is out of the ISR of {} of the partitions it lost its log of, or leads them after an "
                + "unclean election: it rejoins those ISRs as a follower once caught up ({} still lost{})", brokerId,
                before.replicas().size()
                - after.replicas().size(), after.replicas().size(), after.isEmpty() ? "" : ": " + sample(after));
        try {
            file.write(after);
        } catch (IOException e) {
            // a stale entry costs a catch-up, never data: at its next start this broker leaves that ISR once more
            log.error("Could not record the lost replicas left in the log dirs", e);
        }
        publish.accept(after);
    }

    private static String sample(LostReplicas lost) {
        List<String> names = lost.replicas().keySet().stream().map(p -> p.topicPartition().toString()).sorted()
                .toList();
        return String.join(", ", names.subList(0, Math.min(10, names.size()))) + (names.size() > 10 ? ", ..." : "");
    }
}
