package io.twinlog.mirror.partition;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The end-of-epoch lookup answers as Kafka's leader-epoch cache does. */
@Timeout(60)
class EpochHistoryTest {
    private final EpochHistory history = EpochHistory.EMPTY.appended(2, 0).appended(5, 40).appended(9, 70);

    @Test
    void theLatestEpochEndsAtTheLogEnd() {
        assertEquals(Optional.of(new EpochHistory.EpochEnd(9, 100)), history.endOffsetFor(9, 100));
    }

    @Test
    void anOlderEpochEndsWhereTheNextHigherStarts() {
        assertEquals(Optional.of(new EpochHistory.EpochEnd(5, 70)), history.endOffsetFor(5, 100));
        // an epoch between two held ones: reported as the largest held below it, ending at the next one's start
        assertEquals(Optional.of(new EpochHistory.EpochEnd(5, 70)), history.endOffsetFor(7, 100));
        // below every held epoch: the epoch asked, ending where the first held one starts
        assertEquals(Optional.of(new EpochHistory.EpochEnd(1, 0)), history.endOffsetFor(1, 100));
    }

    @Test
    void anEpochAboveEveryHeldOneHasNoAnswer() {
        assertEquals(Optional.empty(), history.endOffsetFor(12, 100));
        assertEquals(Optional.empty(), EpochHistory.EMPTY.endOffsetFor(0, 0));
    }

    @Test
    void truncationDropsTheEpochsThatStartAtOrAboveTheCut() {
        assertEquals(EpochHistory.EMPTY.appended(2, 0).appended(5, 40), history.truncatedTo(70));
        assertEquals(EpochHistory.EMPTY, history.truncatedTo(0));
    }

    @Test
    void epochsOnlyAscend() {
        assertThrows(IllegalArgumentException.class, () -> history.appended(8, 120));
        assertEquals(history, history.appended(9, 120));
    }
}
