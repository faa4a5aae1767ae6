package io.twinlog.mirror.partition;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.MirrorTransitions;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorProgress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;

import static io.twinlog.common.mirror.MirrorPartitionState.EPOCH_FENCING;
import static io.twinlog.common.mirror.MirrorPartitionState.FAILED;
import static io.twinlog.common.mirror.MirrorPartitionState.LOG_TRUNCATION;
import static io.twinlog.common.mirror.MirrorPartitionState.MIRRORING;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPED;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What every step shares: the guarded transition and its clocks, the wait for the controller, progress, fencing. */
@Timeout(10)
class MirrorStepsTest {
    private static final long TIMEOUT_MS = 60_000;
    private static final long SEED = 42;
    private final MirrorSteps steps = new MirrorSteps(MirrorSettings.defaults(TIMEOUT_MS), new Random(SEED));

    @Test
    void theWaitForTheControllerStartsItsClockThenFailsRetriablyAfterTheTimeout() {
        MirrorPartitionRecord fencing = record(EPOCH_FENCING, 5).withMinLeaderEpoch(9);
        MirrorDecision first = steps.waitForController(input(fencing, view(5, 40, 40), MirrorTimers.NONE, 1_000),
                "fencing", new MirrorAction.RemoveFetcher());
        assertEquals(Optional.empty(), first.write());
        assertEquals(List.of(new MirrorAction.RemoveFetcher()), first.actions());
        assertEquals(1_000, first.timers().waitingSinceMs(), "the clock starts at the first wait");

        MirrorDecision still = steps.waitForController(input(fencing, view(5, 40, 40), first.timers(),
                1_000 + TIMEOUT_MS - 1), "fencing");
        assertEquals(Optional.empty(), still.write());
        assertEquals(1_000, still.timers().waitingSinceMs(), "the clock keeps its start");

        long now = 1_000 + TIMEOUT_MS;
        MirrorDecision failed = steps.waitForController(input(fencing, view(5, 40, 40), first.timers(), now),
                "fencing");
        MirrorPartitionRecord written = failed.write().orElseThrow();
        assertEquals(FAILED, written.state());
        assertEquals(1, written.retryAttempt(), "retriable");
        assertEquals(EPOCH_FENCING, written.previousState());
        assertTrue(written.lastError().orElseThrow().contains("waited " + TIMEOUT_MS + " ms"), written.lastError()
                .orElseThrow());
        assertTrue(failed.reason().contains("raise the leader epoch to 9; it is still 5"), failed.reason());
        assertEquals(-1, failed.timers().waitingSinceMs(), "a new state stops the wait");
        assertEquals(now + expectedBackoff(1), failed.timers().retryAtMs());
    }

    @Test
    void aTransitionCarriesTheCurrentProgressAndResetsTheClocks() {
        MirrorPartitionRecord truncating = record(LOG_TRUNCATION, 5);
        MirrorTimers waiting = new MirrorTimers(100, 200, 300, 2);
        MirrorInput in = new MirrorInput(truncating, view(5, 70, 70), DesiredMirrorState.MIRRORING, MirrorEvent.TICK,
                PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.of(90), waiting, 1_000);
        MirrorDecision d = steps.transition(in, truncating.transitionTo(EPOCH_FENCING, 5), "fence");
        assertEquals(new MirrorProgress(90, 70), d.write().orElseThrow().progress());
        assertEquals(new MirrorTimers(-1, -1, 300, 2), d.timers(), "the wait and retry end; the others stay");
        assertEquals("fence", d.reason());

        // the same state (an update) keeps the clocks
        MirrorDecision update = steps.transition(in, truncating.withError("source down"), "retry");
        assertEquals(waiting, update.timers());
    }

    @Test
    void anIllegalTransitionIsRefused() {
        MirrorPartitionRecord mirroring = record(MIRRORING, 5);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> steps.transition(
                input(mirroring, view(5, 0, 0), MirrorTimers.NONE, 0), mirroring.transitionTo(STOPPED, 5), "skip"));
        assertEquals("Illegal mirror transition MIRRORING -> STOPPED: skip", e.getMessage());
    }

    @Test
    void aFailedPartitionKeepsItsScheduledRetryWhenItFailsAgain() {
        MirrorPartitionRecord failed = record(MIRRORING, 5).failed("first", true, 5);
        MirrorTimers scheduled = MirrorTimers.NONE.retryAt(5_000);
        MirrorDecision again = steps.transition(input(failed, view(5, 0, 0), scheduled, 1_000),
                failed.failed("second", true, 5), "second");
        assertEquals(5_000, again.timers().retryAtMs());
        assertEquals(2, again.write().orElseThrow().retryAttempt());

        MirrorDecision unscheduled = steps.transition(input(failed, view(5, 0, 0), MirrorTimers.NONE, 1_000),
                failed.failed("second", true, 5), "second");
        assertEquals(1_000 + expectedBackoff(2), unscheduled.timers().retryAtMs());

        MirrorDecision forGood = steps.transition(input(record(MIRRORING, 5), view(5, 0, 0), MirrorTimers.NONE, 1_000),
                record(MIRRORING, 5).failed("fatal", false, 5), "fatal");
        assertEquals(-1, forGood.timers().retryAtMs(), "a failure for good is not retried");
    }

    @Test
    void progressIsUnknownWithASourceProblemAndAsRecordedWhileFailed() {
        MirrorPartitionRecord mirroring = record(MIRRORING, 5).withProgress(new MirrorProgress(50, 40));
        assertEquals(new MirrorProgress(90, 70), MirrorSteps.progress(withSource(mirroring, null,
                OptionalLong.of(90))));
        assertEquals(new MirrorProgress(50, 70), MirrorSteps.progress(withSource(mirroring, null,
                OptionalLong.empty())), "no figure from the fetcher: the recorded one");
        assertEquals(new MirrorProgress(-1, 70), MirrorSteps.progress(withSource(mirroring,
                SourceProblem.gone("deleted"), OptionalLong.of(90))));
        MirrorPartitionRecord failed = mirroring.failed("down", true, 5);
        assertEquals(new MirrorProgress(50, 70), MirrorSteps.progress(withSource(failed, null, OptionalLong.of(90))));
    }

    @Test
    void progressTakesTheLeadersMirroredTimeElseTheRecordedOneWhateverTheSource() {
        MirrorPartitionRecord mirroring = record(MIRRORING, 5).withProgress(new MirrorProgress(50, 40, 100L, 200L));
        MirrorInput known = new MirrorInput(mirroring, view(5, 70, 70), DesiredMirrorState.MIRRORING,
                MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.of(70), MirrorTimers.NONE, 0,
                Optional.of(new MirroredTime(300L, 900L)));
        assertEquals(new MirrorProgress(70, 70, 300L, 900L), MirrorSteps.progress(known));
        assertEquals(new MirrorProgress(90, 70, 100L, 200L), MirrorSteps.progress(withSource(mirroring, null,
                OptionalLong.of(90))), "a leader that does not keep them: as recorded");
        MirrorInput sourceGone = new MirrorInput(mirroring, view(5, 70, 70), DesiredMirrorState.MIRRORING,
                MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.of(SourceProblem.gone("deleted")),
                OptionalLong.of(90), MirrorTimers.NONE, 0, Optional.of(new MirroredTime(300L, 900L)));
        assertEquals(new MirrorProgress(-1, 70, 300L, 900L), MirrorSteps.progress(sourceGone),
                "the source's end unknown, what was copied and when it was caught up unchanged");
    }

    @Test
    void mirroringOnlyAtTheRaisedEpoch() {
        MirrorPartitionRecord record = record(FAILED, 5).withMinLeaderEpoch(9);
        assertEquals(EPOCH_FENCING, MirrorSteps.fencedOr(input(record, view(8, 0, 0), MirrorTimers.NONE, 0),
                MIRRORING));
        assertEquals(MIRRORING, MirrorSteps.fencedOr(input(record, view(9, 0, 0), MirrorTimers.NONE, 0), MIRRORING));
        assertEquals(STOPPING, MirrorSteps.fencedOr(input(record, view(8, 0, 0), MirrorTimers.NONE, 0), STOPPING));
    }

    @Test
    void theFenceTargetIsAboveEveryEpochHeldByTheMargin() {
        int margin = MirrorSettings.DEFAULT_EPOCH_MARGIN;
        PartitionView logAt7 = new PartitionView(5, 10, 10, EpochHistory.EMPTY.appended(7, 0), OptionalLong.empty(),
                List.of(0), List.of(0));
        assertEquals(7 + margin, steps.fenceTarget(logAt7, 3));
        assertEquals(12 + margin, steps.fenceTarget(logAt7, 12), "the source's epoch when higher");
        PartitionView high = new PartitionView(100, 10, 10, EpochHistory.EMPTY.appended(7, 0), OptionalLong.empty(),
                List.of(0), List.of(0));
        assertEquals(100, steps.fenceTarget(high, 3), "never below the current epoch");
    }

    private static long expectedBackoff(int attempt) {
        return MirrorTransitions.retryBackoffMs(attempt, MirrorSettings.DEFAULT_RETRY_INITIAL_MS,
                MirrorSettings.DEFAULT_RETRY_MAX_MS, new Random(SEED).nextDouble());
    }

    private static MirrorPartitionRecord record(MirrorPartitionState state, int writerEpoch) {
        return MirrorPartitionRecord.initial(writerEpoch).transitionTo(state, writerEpoch);
    }

    private static PartitionView view(int leaderEpoch, long logEnd, long highWatermark) {
        return new PartitionView(leaderEpoch, logEnd, highWatermark, EpochHistory.EMPTY.appended(leaderEpoch, 0),
                OptionalLong.empty(), List.of(0), List.of(0));
    }

    private static MirrorInput input(MirrorPartitionRecord record, PartitionView view, MirrorTimers timers, long now) {
        return new MirrorInput(record, view, DesiredMirrorState.MIRRORING, MirrorEvent.TICK, PeerLookup.NOT_ASKED,
                Optional.empty(), OptionalLong.empty(), timers, now);
    }

    private static MirrorInput withSource(MirrorPartitionRecord record, SourceProblem problem, OptionalLong sourceHw) {
        return new MirrorInput(record, view(5, 70, 70), DesiredMirrorState.MIRRORING, MirrorEvent.TICK,
                PeerLookup.NOT_ASKED, Optional.ofNullable(problem), sourceHw, MirrorTimers.NONE, 0);
    }
}
