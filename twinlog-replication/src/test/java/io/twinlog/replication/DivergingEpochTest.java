package io.twinlog.replication;

import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The leader's diverging-epoch answer, one rule per test. */
@Timeout(10)
class DivergingEpochTest {
    @Test
    void agreesWhenTheEpochEndsAtOrAfterTheFetchOffset() {
        assertEquals(Optional.empty(), DivergingEpoch.forFollower(3, 10, Optional.of(new OffsetAndEpoch(12, 3)),
                Optional.of(5), 20));
    }

    @Test
    void reportsTheLeadersEndWhenTheEpochEndsEarlierHere() {
        assertEquals(Optional.of(new OffsetAndEpoch(8, 3)), DivergingEpoch.forFollower(3, 10,
                Optional.of(new OffsetAndEpoch(8, 3)), Optional.of(5), 20));
    }

    @Test
    void reportsAnOlderEpochTheLeaderHasInstead() {
        assertEquals(Optional.of(new OffsetAndEpoch(8, 2)), DivergingEpoch.forFollower(3, 10,
                Optional.of(new OffsetAndEpoch(8, 2)), Optional.of(5), 20));
    }

    @Test
    void aFollowerEpochAboveTheLeadersHistoryEndsAtTheLeadersLatestEpochAndLogEnd() {
        // a mirror leader that cut its log for a failback holds only its source's (lower) epochs
        assertEquals(Optional.of(new OffsetAndEpoch(4, 1)), DivergingEpoch.forFollower(10, 3, Optional.empty(),
                Optional.of(1), 4));
    }

    @Test
    void aLeaderWithNoEpochAtAllSendsTheFollowerBackToItsLogEnd() {
        // cut fully (the source had no last mirrored epoch): nothing is shared
        OffsetAndEpoch answer = DivergingEpoch.forFollower(10, 3, Optional.empty(), Optional.empty(), 0).orElseThrow();
        assertEquals(new OffsetAndEpoch(0, 10), answer);
        // the follower truncates to where it agrees: nothing, its log start
        assertEquals(0L, FollowerTruncation.truncationOffset(answer.epoch(), answer.offset(),
                Optional.of(new OffsetAndEpoch(3, 10)), 0L, 3L));
    }

    @Test
    void aReaderWhoseEpochEndsEarlierHereIsToldWhere() {
        // the source's unclean leader took new records in a later epoch at the offsets the reader mirrored
        assertEquals(Optional.of(new OffsetAndEpoch(55, 11)), DivergingEpoch.forReader(11, 60,
                Optional.of(new OffsetAndEpoch(55, 11))));
        assertEquals(Optional.of(new OffsetAndEpoch(40, 9)), DivergingEpoch.forReader(11, 60,
                Optional.of(new OffsetAndEpoch(40, 9))), "an older epoch instead");
        assertEquals(Optional.empty(), DivergingEpoch.forReader(11, 60, Optional.of(new OffsetAndEpoch(70, 11))));
    }

    @Test
    void aReaderWithAnEpochThisLogNeverHeldIsOutOfRange() {
        assertThrows(OffsetOutOfRangeException.class, () -> DivergingEpoch.forReader(11, 60, Optional.empty()));
    }
}
