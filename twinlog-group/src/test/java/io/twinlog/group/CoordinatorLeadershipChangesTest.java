package io.twinlog.group;

import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.group.CoordinatorLeadershipChanges.Change;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.SortedMap;
import java.util.TreeMap;

import static io.twinlog.group.CoordinatorLeadershipChanges.Change.elect;
import static io.twinlog.group.CoordinatorLeadershipChanges.Change.resign;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link CoordinatorLeadershipChanges}, one rule per test: each image's leadership of the coordinator's topic, with
 * the epochs this broker's replicas lead in, becomes the runtime's resignations and elections in order. The
 * context keeps what the runtime was told, as {@link CoordinatorLeadership} does.
 */
@Timeout(10)
class CoordinatorLeadershipChangesTest {
    private static final int BROKER = 1;
    private static final int OTHER = 2;
    private static final Uuid TOPIC_ID = Uuid.fromString("Vf8kMn1zQqGa2pNd3a4Y7w");

    /** The runtime's elections so far, and the replicas this broker leads. */
    private final Map<Integer, Integer> elected = new HashMap<>();
    private final Map<Integer, Integer> localLeaderEpochs = new HashMap<>();

    @Test
    void partitionLedHereIsElectedInItsEpoch() {
        replicaLeads(0, 5);
        assertEquals(List.of(elect(0, 5)), apply(topic(partition(0, BROKER, 5))));
    }

    @Test
    void sameEpochAgainChangesNothing() {
        electedIn(0, 5);
        replicaLeads(0, 5);
        assertEquals(List.of(), apply(topic(partition(0, BROKER, 5))));
    }

    @Test
    void partitionLedElsewhereIsResignedWithTheNewLeadersEpoch() {
        electedIn(0, 5);
        assertEquals(List.of(resign(0, OptionalInt.of(6))), apply(topic(partition(0, OTHER, 6))));
    }

    @Test
    void leadershipLostAndRegainedBeforeTheImagesAreTakenResignsThenElects() {
        // the replica applier took all three images before the coordinator's thread took the second: the replica
        // already leads in epoch 7 while the coordinator still holds epoch 5's state
        electedIn(0, 5);
        replicaLeads(0, 7);
        assertEquals(List.of(resign(0, OptionalInt.of(6))), apply(topic(partition(0, OTHER, 6))));
        assertEquals(List.of(elect(0, 7)), apply(topic(partition(0, BROKER, 7))));
    }

    @Test
    void newEpochWithoutAFollowerImageInBetweenStillReloads() {
        // ZooKeeper shows the latest state: another leader's epoch 6 may never have been an image here
        electedIn(0, 5);
        replicaLeads(0, 7);
        assertEquals(List.of(resign(0, OptionalInt.of(7)), elect(0, 7)), apply(topic(partition(0, BROKER, 7))));
    }

    @Test
    void imageLeaderWhoseReplicaDoesNotLeadIsNotElected() {
        // a replica the applier could not make leader (lost log, failed apply): electing would load from a log
        // this broker does not lead
        assertEquals(List.of(), apply(topic(partition(0, BROKER, 5))));
        replicaLeads(0, 5); // the applier's retry with a later image that leaves the partition as it was
        assertEquals(List.of(elect(0, 5)), apply(topic(partition(0, BROKER, 5))));
    }

    @Test
    void replicaAheadOfTheImageResignsUnconditionallyAndWaitsForItsImage() {
        electedIn(0, 5);
        replicaLeads(0, 7);
        assertEquals(List.of(resign(0, OptionalInt.empty())), apply(topic(partition(0, BROKER, 5))));
        assertEquals(List.of(), apply(topic(partition(0, OTHER, 6))));
        assertEquals(List.of(elect(0, 7)), apply(topic(partition(0, BROKER, 7))));
    }

    @Test
    void goneTopicOrPartitionResignsUnconditionally() {
        electedIn(0, 5);
        electedIn(1, 3);
        replicaLeads(0, 5);
        assertEquals(List.of(resign(1, OptionalInt.empty())), apply(topic(partition(0, BROKER, 5))));
        assertEquals(List.of(resign(0, OptionalInt.empty())), apply(Optional.empty()));
    }

    @Test
    void topicRecreatedAtAnOlderEpochResignsUnconditionallyThenElects() {
        // Kafka's runtime ignores a resignation or an election in an epoch not newer than the one it holds
        electedIn(0, 5);
        replicaLeads(0, 0);
        assertEquals(List.of(resign(0, OptionalInt.empty()), elect(0, 0)), apply(topic(partition(0, BROKER, 0))));
    }

    @Test
    void partitionsAreToldInOrder() {
        electedIn(2, 4);
        replicaLeads(0, 1);
        replicaLeads(1, 1);
        assertEquals(List.of(elect(0, 1), elect(1, 1), resign(2, OptionalInt.of(5))),
                apply(topic(partition(2, OTHER, 5), partition(1, BROKER, 1), partition(0, BROKER, 1))));
    }

    private void electedIn(int partition, int leaderEpoch) {
        elected.put(partition, leaderEpoch);
    }

    private void replicaLeads(int partition, int leaderEpoch) {
        localLeaderEpochs.put(partition, leaderEpoch);
    }

    /** The changes for one image, applied to {@link #elected} as the shell applies them. */
    private List<Change> apply(Optional<TopicImage> topic) {
        List<Change> changes = CoordinatorLeadershipChanges.between(BROKER, elected, topic, localLeaderEpochs);
        for (Change change : changes) {
            switch (change.kind()) {
                case ELECT -> elected.put(change.partition(), change.leaderEpoch().orElseThrow());
                case RESIGN -> elected.remove(change.partition());
            }
        }
        return changes;
    }

    private static Optional<TopicImage> topic(PartitionImage... partitions) {
        SortedMap<Integer, PartitionImage> byIndex = new TreeMap<>();
        for (PartitionImage p : partitions) {
            byIndex.put(p.partition(), p);
        }
        return Optional.of(new TopicImage("__consumer_offsets", TOPIC_ID, byIndex, Map.of(), 0));
    }

    private static PartitionImage partition(int partition, int leader, int leaderEpoch) {
        List<Integer> replicas = List.of(BROKER, OTHER);
        return new PartitionImage(partition, replicas, new PartitionState(leader, leaderEpoch, replicas, leaderEpoch),
                0);
    }
}
