package io.twinlog.server.metadata;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicImage;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which replicas broker 0 lost with its disk, and when they stop counting ({@link LostReplicas}). */
@Timeout(10)
class LostReplicasTest {
    private static final int BROKER = 0;
    private static final Uuid ID = new Uuid(1, 1);
    private static final TopicIdPartition A0 = new TopicIdPartition(ID, 0, "a");
    private static final TopicIdPartition A1 = new TopicIdPartition(ID, 1, "a");
    private static final TopicIdPartition A2 = new TopicIdPartition(ID, 2, "a");

    /**
     * Topic "a": 0 led by 1 with ISR {@code isr0}, 1 led by 1 without broker 0 in its ISR, 2 led by broker 0 in
     * leader epoch {@code epoch2} with ISR [0, 1]; the others in leader epoch 1.
     */
    private static MetadataImage image(List<Integer> isr0, int epoch2) {
        SortedMap<Integer, PartitionImage> partitions = new TreeMap<>();
        partitions.put(0, new PartitionImage(0, List.of(0, 1), new PartitionState(1, 1, isr0, 3), 3));
        partitions.put(1, new PartitionImage(1, List.of(0, 1), new PartitionState(1, 1, List.of(1), 3), 3));
        partitions.put(2, new PartitionImage(2, List.of(0, 1), new PartitionState(0, epoch2, List.of(0, 1), 3), 3));
        return new MetadataImage("c", Map.of(), Map.of("a", new TopicImage("a", ID, partitions, Map.of(), 0)),
                Map.of(), 1, MirrorImage.EMPTY);
    }

    @Test
    void aReplicaInTheIsrWithoutALogHereIsLostAndOneOutOfTheIsrIsNot() {
        LostReplicas lost = LostReplicas.find(BROKER, image(List.of(0, 1), 1), p -> p.equals(A2), Map.of());
        assertEquals(Map.of(A0, 1), lost.replicas(), "A1 has no log either, but this broker is not in its ISR");
        assertTrue(LostReplicas.find(BROKER, image(List.of(0, 1), 1), p -> true, Map.of()).isEmpty(),
                "a normal restart: every log is there");
    }

    @Test
    void anEarlierStartsEntryCountsWhileStillInTheIsrEvenWithALogCreatedSince() {
        LostReplicas lost = LostReplicas.find(BROKER, image(List.of(0, 1), 1), p -> true, Map.of(A0, 1, A1, 1));
        assertEquals(Map.of(A0, 1), lost.replicas(), "A1's broker left its ISR: no longer lost");
    }

    @Test
    void anEntryGoesOnceTheIsrNoLongerHasThisBrokerOrItLeadsInALaterEpoch() {
        LostReplicas lost = new LostReplicas(Map.of(A0, 1, A2, 1));
        assertEquals(Map.of(A0, 1, A2, 1), lost.stillLost(BROKER, image(List.of(0, 1), 1)).replicas());
        assertEquals(Map.of(A2, 1), lost.stillLost(BROKER, image(List.of(1), 1)).replicas(), "out of A0's ISR");
        assertEquals(Map.of(A0, 1), lost.stillLost(BROKER, image(List.of(0, 1), 2)).replicas(),
                "A2 led by this broker in epoch 2: an unclean election chose it knowingly");
        TopicIdPartition recreated = new TopicIdPartition(new Uuid(2, 2), 0, "a");
        assertTrue(new LostReplicas(Map.of(recreated, 1)).stillLost(BROKER, image(List.of(0, 1), 1)).isEmpty(),
                "a topic created again under the same name is another partition");
    }

    @Test
    void itIsNotLedOnALeadershipFromBeforeTheLossOnly() {
        LostReplicas lost = new LostReplicas(Map.of(A2, 1));
        assertTrue(lost.isLost(A2, 1));
        assertFalse(lost.isLost(A2, 2));
        assertFalse(lost.isLost(A0, 1));
    }

    @Test
    void theFileKeepsThemInEveryLogDirAndGoesWhenNoneIsLeft(@TempDir File a, @TempDir File b) throws Exception {
        LostReplicasFile file = new LostReplicasFile(BROKER, List.of(a, b));
        file.write(new LostReplicas(Map.of(A0, 1, A2, 7)));
        assertEquals(Map.of(A0, 1, A2, 7), new LostReplicasFile(BROKER, List.of(b)).read(), "each dir has a copy");
        Files.writeString(new File(a, LostReplicasFile.FILE_NAME).toPath(), "{not json");
        assertEquals(Map.of(A0, 1, A2, 7), file.read(), "an unreadable copy is skipped, the other counts");
        file.write(LostReplicas.NONE);
        assertFalse(new File(a, LostReplicasFile.FILE_NAME).exists());
        assertFalse(new File(b, LostReplicasFile.FILE_NAME).exists());
        assertEquals(Map.of(), file.read());
    }
}
