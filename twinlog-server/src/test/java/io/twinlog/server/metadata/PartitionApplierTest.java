package io.twinlog.server.metadata;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.controller.metadata.MetadataDelta;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicImage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Which partitions an image change makes broker 0 re-apply ({@link PartitionApplier#partitionsToApply}). */
@Timeout(10)
class PartitionApplierTest {
    private static final int BROKER = 0;
    private static final Uuid ID = new Uuid(1, 1);
    private static final TopicPartition A0 = new TopicPartition("a", 0);
    private static final TopicPartition A1 = new TopicPartition("a", 1);
    private static final TopicPartition A2 = new TopicPartition("a", 2);

    /** Topic "a": partition 0 and 1 on brokers 0,1; partition 2 on brokers 1,2 (not ours); leaders as given. */
    private static MetadataImage image(int leader0, int leader1, int leader2, MirrorImage mirrors) {
        SortedMap<Integer, PartitionImage> partitions = new TreeMap<>();
        partitions.put(0, partition(0, List.of(0, 1), leader0));
        partitions.put(1, partition(1, List.of(0, 1), leader1));
        partitions.put(2, partition(2, List.of(1, 2), leader2));
        return new MetadataImage("c", Map.of(), Map.of("a", new TopicImage("a", ID, partitions, Map.of(), 0)),
                Map.of(), 1, mirrors);
    }

    private static PartitionImage partition(int p, List<Integer> replicas, int leader) {
        return new PartitionImage(p, replicas, new PartitionState(leader, leader, replicas, 0), 0);
    }

    private static Set<TopicPartition> toApply(MetadataImage previous, MetadataImage next) {
        return PartitionApplier.partitionsToApply(BROKER, previous, next, MetadataDelta.between(previous, next));
    }

    private static MirrorImage mirror(MirrorPartitionState state0, MirrorPartitionState state1) {
        return new MirrorImage(Map.of("a", new MirrorImage.MirrorTopic("m", DesiredMirrorState.MIRRORING)),
                Map.of(A0, new MirrorImage.MirrorPartition(state0, 0, Map.of("state", state0.name()), 1),
                        A1, new MirrorImage.MirrorPartition(state1, 0, Map.of("state", state1.name()), 1)));
    }

    @Test
    void anUnchangedImageAppliesNothing() {
        MetadataImage image = image(0, 1, 1, MirrorImage.EMPTY);
        assertEquals(Set.of(), toApply(image, image(0, 1, 1, MirrorImage.EMPTY)));
    }

    @Test
    void onlyTheChangedPartitionIsApplied() {
        assertEquals(Set.of(A1), toApply(image(0, 1, 1, MirrorImage.EMPTY), image(0, 0, 1, MirrorImage.EMPTY)));
    }

    @Test
    void aChangedPartitionOfAnotherBrokerIsNotApplied() {
        assertEquals(Set.of(), toApply(image(0, 1, 1, MirrorImage.EMPTY), image(0, 1, 2, MirrorImage.EMPTY)));
    }

    @Test
    void aMirrorStateChangeThatFlipsTheSourceEpochFlagIsApplied() {
        // MIRRORING keeps the source's epochs, STOPPING does not: partition 0 must learn it
        assertEquals(Set.of(A0), toApply(image(0, 1, 1, mirror(MirrorPartitionState.MIRRORING,
                MirrorPartitionState.MIRRORING)), image(0, 1, 1, mirror(MirrorPartitionState.STOPPING,
                MirrorPartitionState.MIRRORING))));
    }

    @Test
    void aMirrorStateChangeThatKeepsTheFlagIsNotApplied() {
        // STOPPING -> STOPPED: neither keeps the source's epochs
        assertEquals(Set.of(), toApply(image(0, 1, 1, mirror(MirrorPartitionState.STOPPING,
                MirrorPartitionState.MIRRORING)), image(0, 1, 1, mirror(MirrorPartitionState.STOPPED,
                MirrorPartitionState.MIRRORING))));
    }

    @Test
    void becomingAMirrorTopicReappliesItsPartitionsOnThisBroker() {
        assertEquals(Set.of(A0, A1), toApply(image(0, 1, 1, MirrorImage.EMPTY), image(0, 1, 1,
                mirror(MirrorPartitionState.MIRRORING, MirrorPartitionState.MIRRORING))));
    }

    @Test
    void theFirstImageHostsEveryPartitionOfThisBroker() {
        assertEquals(Set.of(A0, A1), PartitionApplier.hostedBy(BROKER, image(0, 1, 1, MirrorImage.EMPTY)));
    }
}
