package io.twinlog.group;

import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.group.CoordinatorLeadershipChanges.Change;
import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.BiConsumer;

/**
 * Which partitions of a coordinator's topic ({@code __consumer_offsets}, {@code __share_group_state}) this broker
 * leads, told to Kafka's coordinator runtime as Kafka's brokers tell it: {@code onElection(partition, epoch)} when
 * the broker becomes leader, {@code onResignation} when it stops leading or the partition goes, and both, in that
 * order, when it leads in a new epoch (so the runtime reloads what another leader may have written in between).
 * Applied per metadata image, in the images' order; what to tell is decided by {@link CoordinatorLeadershipChanges}
 * from the image and the replicas the partition applier has applied, so a load starts from a log this broker leads.
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

    /** Elects and resigns to match the topic as one image has it (absent: resigns everything). */
    void apply(Optional<TopicImage> image) {
        Map<Integer, Integer> localLeaderEpochs = new HashMap<>();
        image.ifPresent(t -> t.partitions().forEach((p, partition) -> {
            if (partition.leader() == brokerId) {
                replicaManager.partition(new TopicPartition(topic, p)).filter(Partition::isLeader)
                        .ifPresent(local -> localLeaderEpochs.put(p, local.leaderEpoch()));
            }
        }));
        for (Change change : CoordinatorLeadershipChanges.between(brokerId, elected, image, localLeaderEpochs)) {
            int p = change.partition();
            switch (change.kind()) {
                case ELECT -> {
                    int epoch = change.leaderEpoch().orElseThrow();
                    log.info("Broker {} now coordinates {} of {}-{} (leader epoch {}); loading them", brokerId,
                            coordinates, topic, p, epoch);
                    onElection.accept(p, epoch);
                    elected.put(p, epoch);
                }
                case RESIGN -> {
                    log.info("Broker {} no longer coordinates {} of {}-{} as elected in leader epoch {} "
                            + "(resigning in epoch {}); unloading them", brokerId, coordinates, topic, p,
                            elected.get(p), change.leaderEpoch().isPresent() ? change.leaderEpoch().getAsInt()
                                    : "none, unconditionally");
                    onResignation.accept(p, change.leaderEpoch());
                    elected.remove(p);
                }
            }
        }
    }
}
