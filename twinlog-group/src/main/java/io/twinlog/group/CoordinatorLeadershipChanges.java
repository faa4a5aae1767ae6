package io.twinlog.group;

import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.TopicImage;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What a hosted Kafka coordinator runtime must be told for one metadata image: which partitions of its topic to
 * resign and elect, in order. Pure: the coordinator's elections so far, the image and the leader epochs this
 * broker's replicas lead in go in, the changes come out ({@link CoordinatorLeadership} tells them).
 *
 * <p>Rules, per partition of the topic (ascending), then for elected partitions the image no longer has:
 * <pre>
 * image leader here, replica leads in its epoch e | elected in   | changes
 * ------------------------------------------------+--------------+------------------------------------------------
 * yes                                             | none         | elect(e)
 * yes                                             | e            | none
 * yes                                             | other epoch  | resign, then elect(e)
 * no                                              | some epoch   | resign
 * no                                              | none         | none
 * (partition or topic gone)                       | some epoch   | resign (no epoch: unconditional)
 * </pre>
 *
 * <p>Why a new epoch is a resignation first: Kafka's runtime answers an election in a newer epoch of a partition
 * it has loaded with "already active" and keeps what it holds; it reloads only a partition it unloaded. A broker
 * that led in epoch 5 and leads in epoch 7 may have followed another leader in epoch 6, who wrote to the
 * partition: the image this broker applied in between may have gone by before this decision, and ZooKeeper shows
 * only the latest state (an image may skip epoch 6). So every change of epoch reloads (decision 111).
 *
 * <p>The resignation carries the image's epoch when it is newer than the elected one (Kafka's runtime unloads only
 * a partition loaded in an older epoch, or when no epoch is given); otherwise none, so that it always unloads
 * (a topic recreated under the same name starts again at epoch 0).
 *
 * <p>A partition the image gives this broker is elected only once the broker's replica leads in that same epoch,
 * so a load reads a log this broker leads: a replica the partition applier could not make leader (a lost log, a
 * failed apply retried with a later image) is not elected, and a replica already ahead of the image (a later image
 * applied meanwhile) waits for that image.
 */
final class CoordinatorLeadershipChanges {

    /** What to tell the runtime. */
    enum Kind { ELECT, RESIGN }

    /**
     * One call to the runtime: {@code onElection(partition, leaderEpoch)} or
     * {@code onResignation(partition, leaderEpoch)} (empty: unconditional).
     */
    record Change(Kind kind, int partition, OptionalInt leaderEpoch) {
        static Change elect(int partition, int leaderEpoch) {
            return new Change(Kind.ELECT, partition, OptionalInt.of(leaderEpoch));
        }

        static Change resign(int partition, OptionalInt leaderEpoch) {
            return new Change(Kind.RESIGN, partition, leaderEpoch);
        }
    }

    private CoordinatorLeadershipChanges() {
    }

    /**
     * @param brokerId          this broker
     * @param elected           the partitions the runtime was last told to load, with the leader epoch
     * @param topic             the coordinator's topic as the image has it (empty: gone)
     * @param localLeaderEpochs the leader epoch of each partition of the topic this broker's replica leads
     * @return the changes to tell the runtime, in order
     */
    static List<Change> between(int brokerId, Map<Integer, Integer> elected, Optional<TopicImage> topic,
                                Map<Integer, Integer> localLeaderEpochs) {
        List<Change> changes = new ArrayList<>();
        SortedMap<Integer, PartitionImage> partitions = topic.map(TopicImage::partitions).orElseGet(TreeMap::new);
        for (Map.Entry<Integer, PartitionImage> entry : partitions.entrySet()) {
            int p = entry.getKey();
            PartitionImage image = entry.getValue();
            int epoch = image.leaderEpoch();
            Integer electedIn = elected.get(p);
            boolean leads = image.leader() == brokerId
                    && Integer.valueOf(epoch).equals(localLeaderEpochs.get(p));
            if (leads) {
                if (electedIn == null) {
                    changes.add(Change.elect(p, epoch));
                } else if (electedIn != epoch) {
                    changes.add(Change.resign(p, resignationEpoch(electedIn, epoch)));
                    changes.add(Change.elect(p, epoch));
                }
            } else if (electedIn != null) {
                changes.add(Change.resign(p, resignationEpoch(electedIn, epoch)));
            }
        }
        for (int p : new TreeSet<>(elected.keySet())) {
            if (!partitions.containsKey(p)) {
                changes.add(Change.resign(p, OptionalInt.empty()));
            }
        }
        return changes;
    }

    private static OptionalInt resignationEpoch(int electedIn, int imageEpoch) {
        return imageEpoch > electedIn ? OptionalInt.of(imageEpoch) : OptionalInt.empty();
    }
}
