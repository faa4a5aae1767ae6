package io.twinlog.mirror.partition;

import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

import static io.twinlog.common.mirror.MirrorPartitionState.LOG_TRUNCATION;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link FailbackDecision}: which decisions record a failback, one rule per test. */
@Timeout(60)
class FailbackDecisionTest {
    private static final MirrorPartitionRecord TRUNCATING =
            MirrorPartitionRecord.initial(6).transitionTo(LOG_TRUNCATION, 6);
    private static final MirrorDecision POINT = new MirrorDecision(
            List.of(new MirrorAction.ApplyTruncationPoint(1, 100, "why")), Optional.of(TRUNCATING), "point", false,
            MirrorTimers.NONE);
    private static final PeerLookup COMPARED = new PeerLookup.Compared(Optional.of(new LastMirrored(3, 100)),
            OptionalLong.empty());

    @Test
    void aPointDecidedAfterComparingWithTheSourcesLastMirroredRecordIsAFailback() {
        assertTrue(FailbackDecision.recordsFailback(LOG_TRUNCATION, POINT, COMPARED));
    }

    @Test
    void aPointDecidedFromTheSourcesAnswerAloneIsAFailback() {
        assertTrue(FailbackDecision.recordsFailback(LOG_TRUNCATION, POINT,
                new PeerLookup.Answered(Optional.of(new LastMirrored(3, 0)))));
    }

    @Test
    void aSourceWithNoRecordOfThisClusterMakesAFirstStartNotAFailback() {
        assertFalse(FailbackDecision.recordsFailback(LOG_TRUNCATION, POINT,
                new PeerLookup.Answered(Optional.empty())));
        assertFalse(FailbackDecision.recordsFailback(LOG_TRUNCATION, POINT,
                new PeerLookup.Compared(Optional.empty(), OptionalLong.empty())));
    }

    @Test
    void aPointDecidedWithoutAskingTheSourceIsNoFailback() {
        assertFalse(FailbackDecision.recordsFailback(LOG_TRUNCATION, POINT, PeerLookup.NOT_ASKED), "an empty log");
    }

    @Test
    void aDoubtIsNoFailback() {
        assertFalse(FailbackDecision.recordsFailback(LOG_TRUNCATION, POINT,
                new PeerLookup.Failed(PeerLookup.Failure.TIMEOUT, "no answer")));
    }

    @Test
    void aRecoveryFromASourceDivergenceIsNoFailback() {
        assertFalse(FailbackDecision.recordsFailback(MirrorPartitionState.ULE_RECOVERY, POINT, COMPARED));
    }

    @Test
    void aDecisionThatOnlyAsksOrComparesIsNoFailback() {
        MirrorDecision asking = new MirrorDecision(List.of(new MirrorAction.ComparePeer(100)), Optional.empty(), "",
                false, MirrorTimers.NONE);
        assertFalse(FailbackDecision.recordsFailback(LOG_TRUNCATION, asking, COMPARED));
    }

    @Test
    void aPointWithoutARecordToWriteIsNoFailback() {
        MirrorDecision unwritten = new MirrorDecision(POINT.actions(), Optional.empty(), "", false,
                MirrorTimers.NONE);
        assertFalse(FailbackDecision.recordsFailback(LOG_TRUNCATION, unwritten, COMPARED));
    }
}
