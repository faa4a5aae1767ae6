package io.twinlog.controller;

import io.twinlog.controller.decisions.StateChange;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.store.ControllerEpoch;
import io.twinlog.controller.store.StaleStateException;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The controller's writes over the in-memory store: what commits is recorded as unseen until the image shows it,
 * and a write not done asks for the right follow-up (resign, decide again soon, decide again later).
 */
@Timeout(60)
class ControllerWritesTest {
    private static final TopicPartition TP0 = new TopicPartition("t", 0);
    private static final TopicPartition TP1 = new TopicPartition("t", 1);

    private final InMemoryControllerStore store = new InMemoryControllerStore();
    private final UnseenWrites unseen = new UnseenWrites();
    private final List<String> outcomes = new ArrayList<>();
    private ControllerEpoch epoch;
    private MetadataImage image;
    private ControllerWrites writes;

    @BeforeEach
    void setUp() {
        store.registerBroker(0, 10);
        store.registerBroker(1, 11);
        store.createTopic("t", Map.of(0, List.of(0, 1), 1, List.of(1, 0)));
        epoch = store.tryClaim(0).orElseThrow();
        image = store.image();
        writes = new ControllerWrites(store, () -> epoch, () -> image, () -> null, unseen, "[test] ",
                new ControllerWrites.Outcomes() {
                    @Override
                    public void resign(String reason) {
                        outcomes.add("resign");
                    }

                    @Override
                    public void decideAgainAfter(long delayMs) {
                        outcomes.add("again in " + delayMs);
                    }
                });
    }

    private static List<StateChange> initial() {
        return List.of(StateChange.initial(TP0, new PartitionState(0, 0, List.of(0, 1), 0)),
                StateChange.initial(TP1, new PartitionState(1, 0, List.of(1, 0), 0)));
    }

    @Test
    void committedChangesWaitUntilTheImageShowsThem() {
        assertEquals(Set.of(TP0, TP1), writes.writeStates(initial()));
        assertEquals(Optional.of(new PartitionState(0, 0, List.of(0, 1), 0)), store.state(TP0));
        assertEquals(Set.of(TP0, TP1), unseen.stillUnseen(image), "decided from an image without them");
        assertEquals(Set.of(), unseen.stillUnseen(store.image()), "the next image shows both");
        assertEquals(List.of(), outcomes);
    }

    @Test
    void nothingToWriteWritesNothing() {
        assertEquals(Set.of(), writes.writeStates(List.of()));
        assertEquals(0, store.writeAttempts());
    }

    @Test
    void aLostVersionRaceDecidesAgainSoon() {
        store.failNextWrite(new StaleStateException("changed"));
        assertEquals(Set.of(), writes.writeStates(initial()));
        assertEquals(List.of("again in " + ControllerWrites.RETRY_DELAY_MS), outcomes);
        assertEquals(Set.of(), unseen.stillUnseen(image));
    }

    @Test
    void anyOtherFailureDecidesAgainLater() {
        store.failNextWrite(new IOException("ZooKeeper down"));
        assertEquals(Set.of(), writes.writeStates(initial()));
        assertEquals(List.of("again in " + ControllerWrites.RETRY_DELAY_MS * 5), outcomes);
    }

    @Test
    void aFencedWriteResigns() {
        store.controllerMovesTo(1);
        assertEquals(Set.of(), writes.writeStates(initial()));
        assertEquals(List.of("resign"), outcomes);
    }

    @Test
    void aPartlyCommittedWriteReportsOnlyWhatCommitted() {
        store.statesPerTransaction(1);
        store.failNextWrite(null); // the first transaction goes through
        store.failNextWrite(new StaleStateException("changed"));
        assertEquals(Set.of(TP0), writes.writeStates(initial()));
        assertEquals(Set.of(TP0), unseen.stillUnseen(image));
        assertEquals(List.of("again in " + ControllerWrites.RETRY_DELAY_MS), outcomes);
    }

    @Test
    void unseenWritesOfADeletedTopicAreForgotten() {
        writes.writeStates(initial());
        assertTrue(unseen.stillUnseen(image).contains(TP0));
        MetadataImage withoutTopic = new MetadataImage("test-cluster", image.brokers(), Map.of(), Map.of(),
                image.controllerId(), image.mirrors());
        assertEquals(Set.of(), unseen.stillUnseen(withoutTopic));
        writes.writeStates(List.of());
        unseen.clear();
        assertFalse(unseen.stillUnseen(image).contains(TP0));
    }
}
