package io.twinlog.group;

import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * Which partitions of a coordinator's topic ({@code __consumer_offsets}, {@code __share_group_state}) this broker
 * leads, told to Kafka's coordinator runtime as Kafka's brokers tell it: {@code onElection(partition, epoch)} when
 * the broker becomes leader (or is elected again in a new epoch), {@code onResignation} when it stops leading or the
 * partition goes. Driven by the replicas the partition applier has just applied, so a load starts from a log this
 * broker leads.
 *
 * <p>Not thread-safe: used from its host's event thread.
 */
final class CoordinatorLeadership {
    private static final Logger log = LoggerFactory.getLogger(CoordinatorLeadership.class);

    private final int brokerId;
    private final String topic;
    private final String coordinates;
    private final ReplicaManager replicaManager;
    private final BiConsumer<Integer, Integer> onElection;
    private final BiConsumer<Integer, OptionalInt> onResignation;
    /** Partitions this broker coordinates, with the leader epoch it was elected in. */
    private final Map<Integer, Integer> elected = new HashMap<>();

    /** @param coordinates what a partition holds, for the log ("the groups", "the share-group states") */
    CoordinatorLeadership(int brokerId, String topic, String coordinates, ReplicaManager replicaManager,
                                 BiConsumer<Integer, Integer> onElection,
                                 BiConsumer<Integer, OptionalInt> onResignation) {
        this.brokerId = brokerId;
        this.topic = topic;
        this.coordinates = coordinates;
        this.replicaManager = replicaManager;
        this.onElection = onElection;
        this.onResignation = onResignation;
    }

    /** Elects and resigns to match the topic as the image has it (absent: resigns everything). */
    void apply(Optional<TopicImage> image) {
        Set<Integer> partitions = image.map(t -> t.partitions().keySet()).orElse(Set.of());
        for (Integer p : partitions) {
            Optional<Partition> local = replicaManager.partition(new TopicPartition(topic, p));
            Integer electedIn = elected.get(p);
            if (local.isPresent() && local.get().isLeader()) {
                int epoch = local.get().leaderEpoch();
                if (electedIn == null || electedIn != epoch) {
                    log.info("Broker {} now coordinates {} of {}-{} (leader epoch {}); loading them", brokerId,
                            coordinates, topic, p, epoch);
                    onElection.accept(p, epoch);
                    elected.put(p, epoch);
                }
            } else if (electedIn != null) {
                resign(p, local.map(l -> OptionalInt.of(l.leaderEpoch())).orElse(OptionalInt.empty()));
            }
        }
        for (Integer p : Set.copyOf(elected.keySet())) {
            if (!partitions.contains(p)) {
                resign(p, OptionalInt.empty());
            }
        }
    }

    private void resign(int partition, OptionalInt epoch) {
        log.info("Broker {} no longer coordinates {} of {}-{}; unloading them", brokerId, coordinates, topic,
                partition);
        onResignation.accept(partition, epoch);
        elected.remove(partition);
    }
}
