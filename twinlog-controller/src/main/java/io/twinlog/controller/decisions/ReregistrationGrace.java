package io.twinlog.controller.decisions;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicImage;
import org.apache.kafka.common.TopicPartition;

import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;

/**
 * How long a controller waits for brokers to register again after a ZooKeeper outage, and for which partitions
 * (pure).
 *
 * <p>When ZooKeeper is away longer than the session timeout every broker's session expires; once it is back each
 * broker registers again on a new session, one after the other, while the nodes of the expired sessions vanish.
 * A controller deciding meanwhile would take a broker that is still serving for dead: it would move its leaderships
 * to whichever broker registered first, or leave its partitions without a leader and their ISR cut to one. Kafka's
 * KRaft controller, on becoming active, gives every broker a full session to be heard from again; this is the
 * equivalent for a controller that has itself just come through a disconnection: for {@code graceMs} from the later
 * of the reconnection and the start of its controllership, provided the controllership began within
 * {@code 2 × graceMs} of the reconnection (that is, it was elected because of that outage), partitions whose leader
 * or an ISR member is not registered are left as they are. A controller elected for any other reason (the previous
 * one crashed) has seen no disconnection and waits for nothing, so a crash is handled as quickly as before.
 */
public final class ReregistrationGrace {
    private ReregistrationGrace() {
    }

    /** Partitions to leave alone, and the unregistered brokers they name. */
    public record Awaiting(Set<Integer> brokers, Set<TopicPartition> partitions) {
        public Awaiting {
            brokers = Set.copyOf(brokers);
            partitions = Set.copyOf(partitions);
        }
    }

    /**
     * @param reconnectedAtMs when this broker's ZooKeeper connection was last re-established, -1 if never
     * @return how long the grace still lasts at {@code nowMs}; 0 or less when there is none
     */
    public static long remainingMs(long graceMs, long reconnectedAtMs, long activeSinceMs, long nowMs) {
        if (graceMs <= 0 || reconnectedAtMs < 0 || activeSinceMs - reconnectedAtMs > 2 * graceMs) {
            return 0;
        }
        return Math.max(reconnectedAtMs, activeSinceMs) + graceMs - nowMs;
    }

    /** The partitions whose leader or an ISR member is not registered in {@code image}. */
    public static Awaiting awaiting(MetadataImage image) {
        Set<Integer> missing = new TreeSet<>();
        Set<TopicPartition> partitions = new HashSet<>();
        for (TopicImage topic : image.topics().values()) {
            for (PartitionImage p : topic.partitions().values()) {
                PartitionState state = p.state();
                if (state == null) {
                    continue;
                }
                boolean waits = false;
                if (state.leader() != PartitionState.NO_LEADER && !image.brokers().containsKey(state.leader())) {
                    missing.add(state.leader());
                    waits = true;
                }
                for (Integer r : state.isr()) {
                    if (!image.brokers().containsKey(r)) {
                        missing.add(r);
                        waits = true;
                    }
                }
                if (waits) {
                    partitions.add(new TopicPartition(topic.name(), p.partition()));
                }
            }
        }
        return new Awaiting(missing, partitions);
    }
}
