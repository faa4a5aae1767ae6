package io.twinlog.mirror.partition;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;
import io.twinlog.mirror.MirrorTransitions;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;

import static io.twinlog.common.mirror.MirrorPartitionState.LOG_TRUNCATION;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * LOG_TRUNCATION's decision of the point, step by step: ask the peer, compare with it, cut to where both logs
 * agree; a doubt cuts nothing and asks again after the backoff. Ids come from the seeded random source.
 */
@Timeout(10)
class TruncationStepsTest {
    private static final long STEPS_SEED = 3;
    private static final long ID_SEED = 7;
    private final MirrorSettings settings = MirrorSettings.defaults(60_000);
    private final TruncationSteps truncation = new TruncationSteps(new MirrorSteps(settings, new Random(STEPS_SEED)),
            settings, new Random(ID_SEED));
    private final MirrorPartitionRecord truncating = MirrorPartitionRecord.initial(8).transitionTo(LOG_TRUNCATION, 8);
    /** 100 records: epoch 3 from 0 (the source's, mirrored), epoch 7 from 60 (written here after a failover). */
    private final PartitionView view = new PartitionView(8, 100, 100, EpochHistory.EMPTY.appended(3, 0)
            .appended(7, 60), OptionalLong.empty(), List.of(0), List.of(0));

    @Test
    void anEmptyLogRecordsAPointAtZeroWithoutAskingThePeer() {
        PartitionView empty = new PartitionView(8, 0, 0, EpochHistory.EMPTY, OptionalLong.empty(), List.of(0),
                List.of(0));
        MirrorDecision d = truncation.truncate(input(empty, PeerLookup.NOT_ASKED, MirrorTimers.NONE, 0));
        assertEquals(List.of(new MirrorAction.ApplyTruncationPoint(firstId(), 0, "the leader's log is empty")),
                d.actions());
        MirrorPartitionRecord written = d.write().orElseThrow();
        assertEquals(LOG_TRUNCATION, written.state());
        assertTrue(written.truncation().pending(), "awaited from the replicas");
    }

    @Test
    void theFirstStepAsksThePeer() {
        MirrorDecision d = truncation.truncate(input(view, PeerLookup.NOT_ASKED, MirrorTimers.NONE, 0));
        assertEquals(List.of(new MirrorAction.AskPeer()), d.actions());
        assertEquals(Optional.empty(), d.write());
    }

    @Test
    void anAnswerBelowTheLogEndIsComparedFirstThenCutAtTheEndOfTheMirroredEpoch() {
        Optional<LastMirrored> mirrored = Optional.of(new LastMirrored(3, 80));
        MirrorDecision answered = truncation.truncate(input(view, new PeerLookup.Answered(mirrored),
                MirrorTimers.NONE, 0));
        // epoch 3 ends here at 60, before the peer's 80: what is kept is compared with the peer first
        assertEquals(List.of(new MirrorAction.ComparePeer(60)), answered.actions());
        assertEquals(Optional.empty(), answered.write());

        MirrorPartitionRecord asked = truncating.withReconcileRequested();
        MirrorDecision compared = truncation.truncate(input(asked, view, new PeerLookup.Compared(mirrored,
                OptionalLong.empty()), MirrorTimers.NONE, 0));
        MirrorAction.ApplyTruncationPoint apply = (MirrorAction.ApplyTruncationPoint) compared.actions().get(0);
        assertEquals(1, compared.actions().size());
        assertEquals(firstId(), apply.id());
        assertEquals(60, apply.offset());
        assertEquals("the source mirrored this log up to offset 80 in epoch 3; 40 records written here after that "
                + "are cut", apply.reason());
        assertEquals(1, compared.timers().reconciledAt(), "what was compared need not be compared again");
    }

    @Test
    void logsThatDifferBelowThePointAreCutWhereTheyDiffer() {
        Optional<LastMirrored> mirrored = Optional.of(new LastMirrored(3, 80));
        MirrorDecision d = truncation.truncate(input(view, new PeerLookup.Compared(mirrored, OptionalLong.of(40)),
                MirrorTimers.NONE, 0));
        MirrorAction.ApplyTruncationPoint apply = (MirrorAction.ApplyTruncationPoint) d.actions().get(0);
        assertEquals(40, apply.offset());
        assertTrue(apply.reason().startsWith("the logs differ from offset 40, below the last mirrored point 60"),
                apply.reason());

        MirrorDecision above = truncation.truncate(input(view, new PeerLookup.Compared(mirrored, OptionalLong.of(70)),
                MirrorTimers.NONE, 0));
        assertEquals(60, ((MirrorAction.ApplyTruncationPoint) above.actions().get(0)).offset(),
                "a difference above the point is cut anyway");
    }

    @Test
    void aPeerWithoutARecordMeansEverythingIsMirroredAgain() {
        MirrorDecision d = truncation.truncate(input(view, new PeerLookup.Answered(Optional.empty()),
                MirrorTimers.NONE, 0));
        assertEquals(List.of(new MirrorAction.ApplyTruncationPoint(firstId(), 0, "the source has no last mirrored "
                + "epoch from this cluster: everything is mirrored again")), d.actions());
    }

    @Test
    void aDoubtCutsNothingAndAsksAgainAfterTheBackoff() {
        MirrorDecision d = truncation.truncate(input(view, new PeerLookup.Failed(PeerLookup.Failure.TIMEOUT,
                "no answer in 30 s"), MirrorTimers.NONE, 1_000));
        assertEquals(List.of(), d.actions());
        MirrorPartitionRecord written = d.write().orElseThrow();
        assertEquals(LOG_TRUNCATION, written.state());
        assertEquals(1, written.retryAttempt());
        assertEquals("Failback waits for the source (TIMEOUT): no answer in 30 s; nothing is cut until it answers",
                written.lastError().orElseThrow());
        assertFalse(written.truncation().pending());
        long backoff = MirrorTransitions.retryBackoffMs(1, settings.retryInitialMs(), settings.retryMaxMs(),
                new Random(STEPS_SEED).nextDouble());
        assertEquals(1_000 + backoff, d.timers().retryAtMs());

        MirrorPartitionRecord doubted = written;
        MirrorDecision backingOff = truncation.truncate(input(doubted, view, PeerLookup.NOT_ASKED, d.timers(),
                1_000 + backoff - 1));
        assertEquals(List.of(), backingOff.actions());
        assertEquals(Optional.empty(), backingOff.write());
        MirrorDecision again = truncation.truncate(input(doubted, view, PeerLookup.NOT_ASKED, d.timers(),
                1_000 + backoff));
        assertEquals(List.of(new MirrorAction.AskPeer()), again.actions());
    }

    /** The first truncation point id the seeded source draws. */
    private static long firstId() {
        Random r = new Random(ID_SEED);
        long id = 0;
        while (id == 0) {
            id = r.nextLong() & Long.MAX_VALUE;
        }
        return id;
    }

    private MirrorInput input(PartitionView v, PeerLookup peer, MirrorTimers timers, long now) {
        return input(truncating, v, peer, timers, now);
    }

    private static MirrorInput input(MirrorPartitionRecord record, PartitionView v, PeerLookup peer,
                                     MirrorTimers timers, long now) {
        return new MirrorInput(record, v, DesiredMirrorState.MIRRORING, MirrorEvent.TICK, peer, Optional.empty(),
                OptionalLong.empty(), timers, now);
    }
}
