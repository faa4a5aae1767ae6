package io.twinlog.mirror.partition;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.TruncationPoints;
import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorTruncation;
import io.twinlog.mirror.store.MirrorProgress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;

import static io.twinlog.common.mirror.MirrorPartitionState.EPOCH_FENCING;
import static io.twinlog.common.mirror.MirrorPartitionState.FAILED;
import static io.twinlog.common.mirror.MirrorPartitionState.LOG_TRUNCATION;
import static io.twinlog.common.mirror.MirrorPartitionState.MIRRORING;
import static io.twinlog.common.mirror.MirrorPartitionState.PAUSED;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPED;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The decisions of the mirror partition state machine, one rule at a time (the simulation covers sequences). */
@Timeout(60)
class MirrorPartitionMachineTest {
    private static final long TIMEOUT_MS = 60_000;
    /** A leader that has already compared its log with the source's. */
    private static final MirrorTimers RECONCILED = new MirrorTimers(-1L, -1L, -1L, 0);
    private final MirrorPartitionMachine machine = new MirrorPartitionMachine(MirrorSettings.defaults(TIMEOUT_MS),
            new Random(7));

    @Test
    void startingMirroringTruncatesFirst() {
        MirrorDecision d = machine.decide(input(MirrorPartitionRecord.initial(0), view(0, 0, EpochHistory.EMPTY),
                DesiredMirrorState.MIRRORING));
        assertEquals(LOG_TRUNCATION, written(d).state());
    }

    @Test
    void anEmptyLogRecordsPointZeroForEveryReplicaThenFencesAboveEveryEpochItHolds() {
        MirrorDecision d = machine.decide(input(record(LOG_TRUNCATION, 3), view(3, 0, EpochHistory.EMPTY),
                DesiredMirrorState.MIRRORING));
        TruncationPoints.Point point = written(d).truncation().latest();
        assertEquals(0, point.offset(), "followers may hold records an empty leader lacks: they are cut too");
        assertEquals(List.of(new MirrorAction.ApplyTruncationPoint(point.id(), 0,
                "the leader's log is empty")), d.actions());
        assertEquals(LOG_TRUNCATION, written(d).state());

        MirrorInput confirmed = input(written(d), view(3, 0, EpochHistory.EMPTY).withCluster(false,
                Map.of(0, point.id())), DesiredMirrorState.MIRRORING);
        MirrorDecision aligned = machine.decide(confirmed);
        assertEquals(EPOCH_FENCING, written(aligned).state());
        assertEquals(9, written(aligned).minLeaderEpoch(), "-1 + margin 10, not below the leader epoch");
        assertFalse(written(aligned).truncation().pending());
    }

    @Test
    void aNonEmptyLogAsksThePeerThenCutsAtTheEndOfTheLastMirroredEpochNeverPastItsOffset() {
        EpochHistory history = history(0, 0, 3, 50, 5, 120);
        MirrorInput asking = input(record(LOG_TRUNCATION, 6), view(6, 150, history), DesiredMirrorState.MIRRORING);
        MirrorDecision ask = machine.decide(asking);
        assertEquals(List.of(new MirrorAction.AskPeer()), ask.actions());
        assertTrue(ask.write().isEmpty());
        assertTrue(ask.decideAgain());

        PeerLookup answer = new PeerLookup.Answered(Optional.of(new LastMirrored(3, 100)));
        MirrorDecision compare = machine.decide(with(asking, answer));
        assertEquals(List.of(new MirrorAction.ComparePeer(100)), compare.actions(),
                "what is kept is compared with the peer first");
        assertTrue(compare.write().isEmpty());
        MirrorDecision cut = machine.decide(with(asking, new PeerLookup.Compared(
                Optional.of(new LastMirrored(3, 100)), OptionalLong.empty())));
        assertTrue(cut.actions().size() == 1 && cut.actions().get(0) instanceof MirrorAction.ApplyTruncationPoint t
                && t.offset() == 100, "epoch 3 ends at 120 here, but the peer has only up to 100: " + cut.actions());
        assertEquals(100, written(cut).truncation().latest().offset(), "recorded for every replica");
        assertEquals(-1, compare.timers().reconciledAt(), "asking is not comparing");
        assertEquals(0, cut.timers().reconciledAt(), "what is kept was compared by this leader");
        assertFalse(cut.progressOnly(), "a new point is a record change, logged and written as one");
        assertTrue(cut.reason().startsWith("truncation point "), cut.reason());
    }

    @Test
    void aLeaderThatComparedInLogTruncationDoesNotCompareAgainOnceMirroringAfterItsOwnFencing() {
        MirrorInput asking = input(record(LOG_TRUNCATION, 6), view(6, 150, history(0, 0, 3, 50, 5, 120)),
                DesiredMirrorState.MIRRORING);
        MirrorDecision cut = machine.decide(with(asking, new PeerLookup.Compared(
                Optional.of(new LastMirrored(3, 100)), OptionalLong.empty())));
        // the point applied, the epoch raised by the fencing: the same leader now mirrors at epoch 16
        MirrorInput mirroring = new MirrorInput(record(MIRRORING, 16), view(16, 100, history(0, 0, 3, 50, 16, 100)),
                DesiredMirrorState.MIRRORING, MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.empty(),
                OptionalLong.empty(), cut.timers(), 1_000);
        assertEquals(List.of(new MirrorAction.AddFetcher()), machine.decide(mirroring).actions(),
                "compared below offset 100 in LOG_TRUNCATION: the log it mirrors on is that one");

        MirrorInput newLeader = new MirrorInput(mirroring.record(), mirroring.view(), mirroring.desired(),
                MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.empty(), MirrorTimers.NONE,
                1_000);
        assertEquals(List.of(new MirrorAction.RemoveFetcher(), new MirrorAction.ComparePeer(100)),
                machine.decide(newLeader).actions(), "another leader has not compared its log: it does");

        MirrorDecision full = machine.decide(with(asking, new PeerLookup.Answered(Optional.empty())));
        assertEquals(-1, full.timers().reconciledAt(), "a cut to 0 compared nothing (an empty log needs nothing)");
    }

    @Test
    void reconciliationCutsToWhereTheLogsDifferWhenThatIsBelowTheLastMirroredPoint() {
        // an unclean election here replaced records below the peer's last mirrored offset under the same epochs
        MirrorInput in = with(input(record(LOG_TRUNCATION, 6), view(6, 150, history(0, 0, 3, 50, 5, 120)),
                DesiredMirrorState.MIRRORING), new PeerLookup.Compared(Optional.of(new LastMirrored(3, 100)),
                OptionalLong.of(20)));
        MirrorDecision d = machine.decide(in);
        assertTrue(d.actions().get(0) instanceof MirrorAction.ApplyTruncationPoint p && p.offset() == 20,
                d.actions().toString());
        assertTrue(d.reason().contains("differ from offset 20"), d.reason());
    }

    @Test
    void withoutARecordFromThePeerEverythingIsMirroredAgain() {
        MirrorInput in = with(input(record(LOG_TRUNCATION, 6), view(6, 150, history(0, 0)),
                DesiredMirrorState.MIRRORING), new PeerLookup.Answered(Optional.empty()));
        assertTrue(machine.decide(in).actions().get(0) instanceof MirrorAction.ApplyTruncationPoint full
                && full.offset() == 0);
    }

    @Test
    void theTruncationCompletesOnlyWhenTheIsrAppliedItExplicitlyAndCaughtUp() {
        TruncationPoints.Point point = new TruncationPoints.Point(42, 100);
        MirrorPartitionRecord pending = record(LOG_TRUNCATION, 6).withTruncation(MirrorTruncation.NONE.with(point, 0));
        PartitionView threeReplicas = new PartitionView(6, 100, 100, history(0, 0), OptionalLong.empty(),
                List.of(0, 1, 2), List.of(0, 1), Map.of(1, 100L, 2, 40L), 2, false, Map.of(0, 42L));
        MirrorDecision waiting = machine.decide(input(pending, threeReplicas, DesiredMirrorState.MIRRORING));
        assertTrue(waiting.write().isEmpty(), "replica 1 of the ISR has not said it applied the point");

        PartitionView behind = threeReplicas.withCluster(false, Map.of(0, 42L, 1, 42L));
        PartitionView notCaughtUp = new PartitionView(6, 100, 90, history(0, 0), OptionalLong.empty(),
                List.of(0, 1, 2), List.of(0, 1), Map.of(1, 90L, 2, 40L), 2, false, Map.of(0, 42L, 1, 42L));
        assertTrue(machine.decide(input(pending, notCaughtUp, DesiredMirrorState.MIRRORING)).write().isEmpty(),
                "applied, but at 90 of 100");
        MirrorDecision done = machine.decide(input(pending, behind, DesiredMirrorState.MIRRORING));
        assertEquals(EPOCH_FENCING, written(done).state(), "replica 2 is out of the ISR: not needed without the flag");
        assertFalse(written(done).truncation().pending());
        assertEquals(-1, written(done).truncation().consistentFrom(), "the ISR only: no guarantee through ULE");

        PartitionView belowMinIsr = new PartitionView(6, 100, 100, history(0, 0), OptionalLong.empty(),
                List.of(0, 1, 2), List.of(0), Map.of(1, 40L, 2, 40L), 2, false, Map.of(0, 42L));
        assertTrue(machine.decide(input(pending, belowMinIsr, DesiredMirrorState.MIRRORING)).write().isEmpty(),
                "an ISR below min.insync.replicas waits");
    }

    @Test
    void withTheFlagEveryReplicaMustApplyAndRejoinTheIsrElseFailedForGoodAfterTheDeadline() {
        TruncationPoints.Point point = new TruncationPoints.Point(42, 100);
        MirrorPartitionRecord pending = record(LOG_TRUNCATION, 6).withTruncation(MirrorTruncation.NONE.with(point, 0));
        PartitionView replicaAway = new PartitionView(6, 100, 100, history(0, 0), OptionalLong.empty(),
                List.of(0, 1, 2), List.of(0, 1), Map.of(1, 100L, 2, -1L), 1, true, Map.of(0, 42L, 1, 42L));
        MirrorInput first = input(pending, replicaAway, DesiredMirrorState.MIRRORING);
        MirrorDecision waiting = machine.decide(first);
        assertTrue(waiting.write().isEmpty());
        MirrorInput late = new MirrorInput(pending, replicaAway, DesiredMirrorState.MIRRORING, MirrorEvent.TICK,
                PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.empty(), waiting.timers(), 60_000);
        MirrorPartitionRecord failed = written(machine.decide(late));
        assertEquals(FAILED, failed.state());
        assertEquals(-1, failed.retryAttempt(), "not retried by itself: the operator restarts it");
        assertTrue(failed.lastError().orElseThrow().contains("2 (has not applied it)"), failed.lastError().get());
        assertTrue(failed.truncation().pending(), "the point stays recorded: the replica applies it when it returns");

        PartitionView back = new PartitionView(6, 100, 100, history(0, 0), OptionalLong.empty(),
                List.of(0, 1, 2), List.of(0, 1, 2), Map.of(1, 100L, 2, 100L), 1, true, Map.of(0, 42L, 1, 42L, 2, 42L));
        MirrorPartitionRecord done = written(machine.decide(input(pending, back, DesiredMirrorState.MIRRORING)));
        assertEquals(EPOCH_FENCING, done.state());
        assertEquals(100, done.truncation().consistentFrom(), "every replica applied it: consistent from the point");
    }

    @Test
    void aSourceDivergenceWithoutTheFlagFailsForGoodNamingWhatThisClusterHoldsAndTheTwoChoices() {
        // here epoch 3 runs from 50 to the end 150; the source says its epoch 3 ends at 120
        PartitionView view = view(14, 150, history(0, 0, 3, 50));
        MirrorInput in = new MirrorInput(record(MIRRORING, 14), view, DesiredMirrorState.MIRRORING,
                new MirrorEvent.SourceDiverged(3, 120, "Source divergence detected"), PeerLookup.NOT_ASKED,
                Optional.empty(), OptionalLong.empty(), MirrorTimers.NONE, 0);
        MirrorDecision d = machine.decide(in);
        MirrorPartitionRecord failed = written(d);
        assertEquals(FAILED, failed.state());
        assertEquals(-1, failed.retryAttempt(), "not retried by itself");
        assertTrue(failed.lastError().orElseThrow().contains("30 records at offsets 120 to 149"), failed.lastError().get());
        assertTrue(failed.lastError().get().contains("--remove") && failed.lastError().get().contains("--start"));
        assertTrue(failed.truncation().isNone(), "nothing is cut without the operator: the point is only proposed");
        assertEquals(120, failed.truncation().proposed());
        assertEquals(List.of(new MirrorAction.RemoveFetcher()), d.actions());

        // the operator starts the topic again: the retry recovers, cutting at the proposed point on every replica
        MirrorPartitionRecord restarted = failed.restartedByOperator();
        MirrorInput retry = new MirrorInput(restarted, view, DesiredMirrorState.MIRRORING, MirrorEvent.TICK,
                PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.empty(), MirrorTimers.NONE.retryAt(0), 10);
        MirrorPartitionRecord recovering = written(machine.decide(retry));
        assertEquals(MirrorPartitionState.ULE_RECOVERY, recovering.state());
        MirrorDecision cut = machine.decide(input(recovering, view, DesiredMirrorState.MIRRORING));
        assertTrue(cut.actions().get(0) instanceof MirrorAction.ApplyTruncationPoint p && p.offset() == 120,
                cut.actions().toString());
        assertEquals(120, written(cut).truncation().latest().offset());
        assertEquals(-1, written(cut).truncation().proposed());
    }

    @Test
    void aSourceDivergenceWithTheFlagTruncatesEveryReplicaToTheDivergingPointAndGoesOn() {
        PartitionView view = view(14, 150, history(0, 0, 3, 50)).withCluster(true, Map.of());
        MirrorInput in = new MirrorInput(record(MIRRORING, 14), view, DesiredMirrorState.MIRRORING,
                new MirrorEvent.SourceDiverged(3, 120, "Source divergence detected"), PeerLookup.NOT_ASKED,
                Optional.empty(), OptionalLong.empty(), MirrorTimers.NONE, 0);
        MirrorDecision d = machine.decide(in);
        MirrorPartitionRecord recovering = written(d);
        assertEquals(MirrorPartitionState.ULE_RECOVERY, recovering.state());
        assertEquals(120, recovering.truncation().latest().offset());
        assertTrue(d.actions().get(0) instanceof MirrorAction.RemoveFetcher
                && d.actions().get(1) instanceof MirrorAction.ApplyTruncationPoint, d.actions().toString());

        long id = recovering.truncation().latest().id();
        PartitionView cut = view(14, 120, history(0, 0, 3, 50)).withCluster(true, Map.of(0, id));
        MirrorPartitionRecord fencing = written(machine.decide(input(recovering, cut, DesiredMirrorState.MIRRORING)));
        assertEquals(EPOCH_FENCING, fencing.state(), "every replica (the only one) applied it: mirroring goes on");
    }

    /**
     * Campaign defect 1 (seed 11, round 2): an empty log whose checkpoint kept epoch 1 at offset 0 (a lost disk
     * elected from the ISR, no record written), failed back from a source whose epoch 0 ends at 898. The truncation
     * point at 0 was applied and the source still said it diverged: a new point at 0 cuts nothing, and recording
     * one each time cycled MIRRORING -> ULE_RECOVERY -> EPOCH_FENCING -> MIRRORING ten times a second. No point
     * is recorded; the partition is FAILED with the reason, retried after a backoff that grows each time.
     */
    @Test
    void aDivergenceNoCutRepairsFailsRetriablyAndBacksOffInsteadOfRecoveringAgain() {
        TruncationPoints.Point applied = new TruncationPoints.Point(1369115687670845686L, 0);
        MirrorPartitionRecord mirroring = record(MIRRORING, 11)
                .withTruncation(MirrorTruncation.NONE.with(applied, 0).completed());
        PartitionView staleEpoch = view(11, 0, history(1, 0)).withCluster(true, Map.of(0, applied.id()));
        MirrorEvent diverged = new MirrorEvent.SourceDiverged(0, 898, "Source divergence detected: the source's "
                + "epoch 0 ends at offset 898 but this cluster mirrored up to 0 in epoch 1");
        MirrorDecision first = machine.decide(new MirrorInput(mirroring, staleEpoch, DesiredMirrorState.MIRRORING,
                diverged, PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.empty(), MirrorTimers.NONE, 0));
        MirrorPartitionRecord failed = written(first);
        assertEquals(FAILED, failed.state());
        assertEquals(1, failed.retryAttempt(), "retriable");
        assertEquals(MIRRORING, failed.previousState(), "its retry mirrors again");
        assertEquals(List.of(applied), failed.truncation().points(), "no new truncation point");
        assertEquals(List.of(new MirrorAction.RemoveFetcher()), first.actions());
        assertTrue(failed.lastError().orElseThrow().contains("truncation point " + applied.id() + " already cut it")
                && failed.lastError().get().contains("a recovery would change nothing"), failed.lastError().get());
        long firstBackoff = first.timers().retryAtMs();
        assertTrue(firstBackoff >= 800 && firstBackoff <= 1200, "1 s ± 20 %: " + firstBackoff);

        MirrorPartitionRecord retried = written(machine.decide(at(failed, staleEpoch, first.timers(), firstBackoff)));
        assertEquals(MIRRORING, retried.state());
        MirrorDecision again = machine.decide(new MirrorInput(retried, staleEpoch, DesiredMirrorState.MIRRORING,
                diverged, PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.empty(), MirrorTimers.NONE,
                firstBackoff));
        assertEquals(2, written(again).retryAttempt());
        long secondBackoff = again.timers().retryAtMs() - firstBackoff;
        assertTrue(secondBackoff >= 1600 && secondBackoff <= 2400, "2 s ± 20 %: " + secondBackoff);
    }

    @Test
    void aDivergenceOfALogWithNothingToCutRecordsNoPoint() {
        PartitionView empty = view(11, 0, EpochHistory.EMPTY).withCluster(true, Map.of());
        MirrorDecision d = machine.decide(new MirrorInput(record(MIRRORING, 11), empty, DesiredMirrorState.MIRRORING,
                new MirrorEvent.SourceDiverged(0, 898, "Source divergence detected"), PeerLookup.NOT_ASKED,
                Optional.empty(), OptionalLong.empty(), MirrorTimers.NONE, 0));
        assertEquals(FAILED, written(d).state());
        assertTrue(written(d).truncation().isNone());
        assertTrue(written(d).lastError().orElseThrow().contains("holds no record and no epoch from offset 0"),
                written(d).lastError().get());
    }

    @Test
    void anEpochStartedAtTheLogEndWithoutRecordsIsCutOnceByARecovery() {
        // a leadership that wrote nothing left epoch 4 at the end: cutting at the end drops it, which is progress
        PartitionView trailing = view(14, 100, history(0, 0, 4, 100)).withCluster(true, Map.of());
        MirrorDecision d = machine.decide(new MirrorInput(record(MIRRORING, 14), trailing,
                DesiredMirrorState.MIRRORING, new MirrorEvent.SourceDiverged(0, 150, "Source divergence detected"),
                PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.empty(), MirrorTimers.NONE, 0));
        assertEquals(MirrorPartitionState.ULE_RECOVERY, written(d).state());
        assertEquals(100, written(d).truncation().latest().offset());
    }

    /**
     * Every way the peer can fail is a doubt (issue 25, point 2): the partition stays in LOG_TRUNCATION with the
     * error recorded for describe, decides no truncation point, cuts nothing, and asks again only after a backoff
     * that grows with each attempt.
     */
    @ParameterizedTest
    @EnumSource(PeerLookup.Failure.class)
    void aPeerThatFailsInAnyWayCutsNothingAndIsAskedAgainAfterAGrowingBackoff(PeerLookup.Failure failure) {
        MirrorInput asking = input(record(LOG_TRUNCATION, 6), view(6, 150, history(0, 0, 3, 50)),
                DesiredMirrorState.MIRRORING);
        PeerLookup failed = new PeerLookup.Failed(failure, "what went wrong");
        MirrorDecision first = machine.decide(with(asking, failed));
        assertDoubt(first, failure, 1);
        assertTrue(first.timers().retryAtMs() >= 800 && first.timers().retryAtMs() <= 1200,
                "1 s ± 20 %: " + first.timers().retryAtMs());

        MirrorInput early = at(written(first), asking.view(), first.timers(), first.timers().retryAtMs() - 1);
        MirrorDecision waiting = machine.decide(early);
        assertTrue(waiting.actions().isEmpty() && waiting.write().isEmpty(), "not asked before the backoff ends");

        MirrorInput due = at(written(first), asking.view(), first.timers(), first.timers().retryAtMs());
        assertEquals(List.of(new MirrorAction.AskPeer()), machine.decide(due).actions(), "asked again once due");
        MirrorDecision second = machine.decide(with(due, failed));
        assertDoubt(second, failure, 2);
        long backoff = second.timers().retryAtMs() - due.nowMs();
        assertTrue(backoff >= 1600 && backoff <= 2400, "2 s ± 20 %: " + backoff);
    }

    @ParameterizedTest
    @EnumSource(PeerLookup.Failure.class)
    void aComparisonThatFailsInAnyWayCutsNothingEither(PeerLookup.Failure failure) {
        MirrorInput asking = input(record(LOG_TRUNCATION, 6), view(6, 150, history(0, 0, 3, 50)),
                DesiredMirrorState.MIRRORING);
        MirrorDecision compare = machine.decide(with(asking, new PeerLookup.Answered(Optional.of(
                new LastMirrored(3, 100)))));
        assertEquals(List.of(new MirrorAction.ComparePeer(100)), compare.actions());
        assertDoubt(machine.decide(with(asking, new PeerLookup.Failed(failure, "comparing failed"))), failure, 1);
    }

    @Test
    void onceThePeerAnswersAfterADoubtTheCutIsAtTheLastMirroredPointAndTheErrorIsCleared() {
        MirrorInput asking = input(record(LOG_TRUNCATION, 6), view(6, 150, history(0, 0, 3, 50)),
                DesiredMirrorState.MIRRORING);
        MirrorDecision doubt = machine.decide(with(asking, new PeerLookup.Failed(PeerLookup.Failure.TIMEOUT,
                "no answer")));
        MirrorInput again = with(at(written(doubt), asking.view(), doubt.timers(), doubt.timers().retryAtMs()),
                new PeerLookup.Compared(Optional.of(new LastMirrored(3, 100)), OptionalLong.empty()));
        MirrorPartitionRecord cut = written(machine.decide(again));
        assertEquals(100, cut.truncation().latest().offset(), "the shared prefix is kept, not cut to 0");
        assertEquals(Optional.empty(), cut.lastError());
        assertEquals(0, cut.retryAttempt());
    }

    /** What a doubt must be: same state, the error and attempt recorded, no truncation point, no cut. */
    private static void assertDoubt(MirrorDecision d, PeerLookup.Failure failure, int attempt) {
        MirrorPartitionRecord rec = written(d);
        assertEquals(LOG_TRUNCATION, rec.state(), "stays in LOG_TRUNCATION");
        assertEquals(attempt, rec.retryAttempt());
        assertTrue(rec.lastError().orElseThrow().contains(failure.name()), rec.lastError().toString());
        assertTrue(rec.lastError().orElseThrow().contains("nothing is cut"), rec.lastError().toString());
        assertEquals(MirrorTruncation.NONE, rec.truncation(), "no truncation point decided");
        assertTrue(d.actions().stream().noneMatch(a -> a instanceof MirrorAction.ApplyTruncationPoint),
                d.actions().toString());
    }

    private static MirrorInput at(MirrorPartitionRecord record, PartitionView view, MirrorTimers timers, long nowMs) {
        return new MirrorInput(record, view, DesiredMirrorState.MIRRORING, MirrorEvent.TICK, PeerLookup.NOT_ASKED,
                Optional.empty(), OptionalLong.empty(), timers, nowMs);
    }

    @Test
    void aFailedPartitionRetriesItsPreviousStepOnlyAfterTheBackoff() {
        MirrorPartitionRecord failed = record(MIRRORING, 6).failed("source down", true, 6);
        MirrorInput early = new MirrorInput(failed, view(6, 10, history(0, 0)), DesiredMirrorState.MIRRORING,
                MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.empty(),
                MirrorTimers.NONE.retryAt(5_000), 4_999);
        MirrorDecision waiting = machine.decide(early);
        assertTrue(waiting.write().isEmpty());
        assertEquals(List.of(new MirrorAction.RemoveFetcher()), waiting.actions());
        MirrorInput due = new MirrorInput(failed, early.view(), early.desired(), MirrorEvent.TICK, early.peer(),
                early.sourceProblem(), early.sourceHighWatermark(), early.timers(), 5_000);
        MirrorDecision retried = machine.decide(due);
        assertEquals(MIRRORING, written(retried).state());
        assertEquals(-1, retried.timers().retryAtMs());
    }

    @Test
    void waitingForTheControllerPastTheDeadlineFailsWithTheReason() {
        MirrorPartitionRecord fencing = record(EPOCH_FENCING, 6).withMinLeaderEpoch(20);
        MirrorDecision first = machine.decide(new MirrorInput(fencing, view(6, 10, history(0, 0)),
                DesiredMirrorState.MIRRORING, MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.empty(),
                OptionalLong.empty(), MirrorTimers.NONE, 1_000));
        assertTrue(first.write().isEmpty());
        assertEquals(1_000, first.timers().waitingSinceMs());
        MirrorDecision late = machine.decide(new MirrorInput(fencing, view(6, 10, history(0, 0)),
                DesiredMirrorState.MIRRORING, MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.empty(),
                OptionalLong.empty(), first.timers(), 1_000 + TIMEOUT_MS));
        assertEquals(FAILED, written(late).state());
        assertTrue(written(late).lastError().orElseThrow().contains("mirror.state.timeout.ms"));
        assertEquals(-1, late.timers().waitingSinceMs());
    }

    @Test
    void aFailoverStopsTheCopyAndDecidesAgainOnTheFrozenLogEnd() {
        EpochHistory history = history(0, 0, 4, 30);
        MirrorDecision entering = machine.decide(input(record(MIRRORING, 14), view(14, 80, history),
                DesiredMirrorState.STOPPED));
        assertEquals(STOPPING, written(entering).state());
        assertEquals(List.of(new MirrorAction.RemoveFetcher(true)), entering.actions());
        assertTrue(entering.decideAgain(), "the last mirrored offset is recorded in the same pass, from a view "
                + "taken once the fetcher can no longer append");

        MirrorDecision resuming = machine.decide(input(record(PAUSED, 14), view(14, 80, history),
                DesiredMirrorState.MIRRORING));
        assertFalse(resuming.decideAgain(), "only a failover freezes the log end");
    }

    @Test
    void failoverRecordsTheLastMirroredEpochThenWritesTheBarrierThenStops() {
        EpochHistory history = history(0, 0, 4, 30);
        MirrorDecision record = machine.decide(input(record(STOPPING, 14), view(14, 80, history),
                DesiredMirrorState.STOPPED));
        MirrorPartitionRecord recorded = written(record);
        assertEquals(4, recorded.lastMirroredEpoch());
        assertEquals(80, recorded.lastMirroredOffset());
        assertEquals(14, recorded.minLeaderEpoch(), "the leader epoch is already above the last mirrored epoch: no "
                + "raise, no round trip to the controller");
        assertEquals(List.of(new MirrorAction.RemoveFetcher()), record.actions(), "the barrier only after the record");

        MirrorDecision barrier = machine.decide(input(recorded, view(14, 80, history), DesiredMirrorState.STOPPED));
        assertEquals(List.of(new MirrorAction.RemoveFetcher(), new MirrorAction.AbortOpenTransactions(),
                new MirrorAction.AppendProducerStateBarrier()), barrier.actions());
        assertTrue(barrier.write().isEmpty());

        PartitionView barrierNotReplicated = new PartitionView(14, 81, 80, history.appended(14, 80),
                OptionalLong.of(80), List.of(0, 1), List.of(0, 1));
        assertTrue(machine.decide(input(recorded, barrierNotReplicated, DesiredMirrorState.STOPPED)).write()
                .isEmpty(), "not writable before every in-sync replica holds the barrier");
        PartitionView withBarrier = new PartitionView(14, 81, 81, history.appended(14, 80), OptionalLong.of(80),
                List.of(0, 1), List.of(0, 1));
        MirrorDecision stopped = machine.decide(input(recorded, withBarrier, DesiredMirrorState.STOPPED));
        assertEquals(STOPPED, written(stopped).state());
    }

    @Test
    void aFailoverAtALeaderEpochNotAboveTheLastMirroredOneWaitsForTheControllerToRaiseIt() {
        // failed over from a fencing that never completed: the log holds source epoch 4, the leader epoch is 3
        EpochHistory history = history(0, 0, 4, 30);
        MirrorPartitionRecord recorded = written(machine.decide(input(record(STOPPING, 3), view(3, 80, history),
                DesiredMirrorState.STOPPED)));
        assertEquals(4, recorded.lastMirroredEpoch());
        assertEquals(5, recorded.minLeaderEpoch());

        MirrorDecision notYet = machine.decide(input(recorded, view(3, 80, history), DesiredMirrorState.STOPPED));
        assertTrue(notYet.write().isEmpty());
        assertFalse(notYet.actions().contains(new MirrorAction.AppendProducerStateBarrier()),
                "no barrier in an epoch not above the last mirrored one");
        MirrorDecision barrier = machine.decide(input(recorded, view(5, 80, history), DesiredMirrorState.STOPPED));
        assertTrue(barrier.actions().contains(new MirrorAction.AppendProducerStateBarrier()));
    }

    @Test
    void aBarrierFromAnEarlierFailoverDoesNotCountForThisOne() {
        MirrorPartitionRecord recorded = record(STOPPING, 14).withLastMirrored(4, 80).withMinLeaderEpoch(14);
        PartitionView oldBarrier = new PartitionView(14, 80, 80, history(0, 0, 4, 30), OptionalLong.of(12),
                List.of(0), List.of(0));
        MirrorDecision d = machine.decide(input(recorded, oldBarrier, DesiredMirrorState.STOPPED));
        assertTrue(d.actions().contains(new MirrorAction.AppendProducerStateBarrier()));
    }

    /**
     * Campaign finding 2 (seed 20261203, round 5): the second failover of a mirror partition kept the first one's
     * last mirrored point (epoch -1, offset 0, from an empty log), so it skipped the recording, took the barrier at
     * 751 written for an earlier failover for its own and was STOPPED at once; the peer's failback read "no last
     * mirrored epoch" and cut its whole log. Each failover records its own point and writes its own barrier.
     */
    @Test
    void aSecondFailoverRecordsItsOwnLastMirroredPointNotTheFirstOnes() {
        MirrorPartitionRecord mirroringAgain = record(MIRRORING, 29).withLastMirrored(-1, 0L).withMinLeaderEpoch(29);
        PartitionView view = new PartitionView(29, 1497, 1497, history(9, 0, 19, 751), OptionalLong.of(751),
                List.of(0), List.of(0));
        MirrorPartitionRecord stopping = written(machine.decide(input(mirroringAgain, view,
                DesiredMirrorState.STOPPED)));
        assertEquals(STOPPING, stopping.state());
        assertEquals(-1, stopping.lastMirroredOffset(), "the earlier failover's point is not this one's");

        MirrorPartitionRecord recorded = written(machine.decide(input(stopping, view, DesiredMirrorState.STOPPED)));
        assertEquals(STOPPING, recorded.state());
        assertEquals(19, recorded.lastMirroredEpoch());
        assertEquals(1497, recorded.lastMirroredOffset());
        MirrorDecision barrier = machine.decide(input(recorded, view, DesiredMirrorState.STOPPED));
        assertTrue(barrier.actions().contains(new MirrorAction.AppendProducerStateBarrier()),
                "the barrier at 751 was an earlier failover's: " + barrier.actions());
    }

    @Test
    void aSecondFailoverRecordsItsOwnLastMirroredOffsetAndWritesItsOwnBarrier() {
        // failed over at 80 (barrier there), failed back, fenced to epoch 24, mirrored on to 200 in source epoch 20:
        // the record still holds the first failover's epoch 4 and offset 80 (fault campaign seed 20261205)
        EpochHistory history = history(0, 0, 4, 30, 14, 80, 20, 120);
        MirrorPartitionRecord mirroring = record(MIRRORING, 24).withLastMirrored(4, 80).withMinLeaderEpoch(24);
        PartitionView view = new PartitionView(24, 200, 200, history, OptionalLong.of(80), List.of(0), List.of(0));

        MirrorPartitionRecord stopping = written(machine.decide(input(mirroring, view, DesiredMirrorState.STOPPED)));
        assertEquals(STOPPING, stopping.state());
        assertEquals(-1L, stopping.lastMirroredOffset(), "the first failover's offset is not this one's");

        MirrorPartitionRecord recorded = written(machine.decide(input(stopping, view, DesiredMirrorState.STOPPED)));
        assertEquals(STOPPING, recorded.state());
        assertEquals(20, recorded.lastMirroredEpoch());
        assertEquals(200, recorded.lastMirroredOffset());
        MirrorDecision barrier = machine.decide(input(recorded, view, DesiredMirrorState.STOPPED));
        assertTrue(barrier.actions().contains(new MirrorAction.AppendProducerStateBarrier()),
                "the barrier of the first failover, at 80, forgot none of the producers mirrored since: "
                        + barrier.actions());
    }

    @Test
    void aRetriedFailoverKeepsWhatItRecorded() {
        MirrorPartitionRecord recorded = record(STOPPING, 14).withLastMirrored(4, 80).withMinLeaderEpoch(14)
                .failed("the controller did not raise the epoch", true, 14);
        MirrorInput in = new MirrorInput(recorded, view(14, 81, history(0, 0, 4, 30, 14, 80)),
                DesiredMirrorState.STOPPED, MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.empty(),
                OptionalLong.empty(), MirrorTimers.NONE.retryAt(5_000), 5_000);
        MirrorPartitionRecord retried = written(machine.decide(in));
        assertEquals(STOPPING, retried.state());
        assertEquals(80, retried.lastMirroredOffset(), "the retry of the same failover: the barrier at 80 is its own");
    }

    @Test
    void aSourceBatchAtTheLocalEpochFencesAgainAboveIt() {
        MirrorInput in = new MirrorInput(record(MIRRORING, 14), view(14, 10, history(0, 0)),
                DesiredMirrorState.MIRRORING, new MirrorEvent.EpochFencingNeeded(16), PeerLookup.NOT_ASKED,
                Optional.empty(), OptionalLong.empty(), MirrorTimers.NONE, 0);
        MirrorDecision d = machine.decide(in);
        assertEquals(EPOCH_FENCING, written(d).state());
        assertEquals(26, written(d).minLeaderEpoch());
    }

    @Test
    void progressIsWrittenWhenItMovesAndAtMostOncePerInterval() {
        MirrorInput first = new MirrorInput(record(MIRRORING, 1), view(1, 40, history(0, 0)),
                DesiredMirrorState.MIRRORING, MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.empty(),
                OptionalLong.of(50), RECONCILED, 10_000);
        MirrorDecision d = machine.decide(first);
        assertTrue(d.progressOnly());
        assertEquals(new MirrorProgress(50, 40), written(d).progress());
        MirrorDecision soon = machine.decide(new MirrorInput(written(d), view(1, 45, history(0, 0)), first.desired(),
                MirrorEvent.TICK, first.peer(), first.sourceProblem(), OptionalLong.of(50), d.timers(), 12_000));
        assertTrue(soon.write().isEmpty());
        assertEquals(List.of(new MirrorAction.AddFetcher()), soon.actions());
    }

    @Test
    void aNewLeaderComparesItsLogWithTheSourceBeforeItMirrorsAndOnlyOnce() {
        MirrorInput newLeader = input(record(MIRRORING, 4), view(7, 80, history(0, 0, 2, 50)),
                DesiredMirrorState.MIRRORING);
        MirrorDecision ask = machine.decide(newLeader);
        assertEquals(List.of(new MirrorAction.RemoveFetcher(), new MirrorAction.ComparePeer(80)), ask.actions(),
                "nothing is copied before the comparison");
        assertTrue(ask.write().isEmpty());

        MirrorDecision same = machine.decide(with(newLeader, new PeerLookup.Compared(Optional.empty(),
                OptionalLong.empty())));
        assertEquals(List.of(new MirrorAction.AddFetcher()), same.actions());
        assertEquals(0, same.timers().reconciledAt());
        MirrorDecision later = machine.decide(new MirrorInput(newLeader.record(), newLeader.view(),
                newLeader.desired(), MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.empty(),
                same.timers(), 1_000));
        assertEquals(List.of(new MirrorAction.AddFetcher()), later.actions(), "not compared again by this leader");

        MirrorDecision empty = machine.decide(input(record(MIRRORING, 4), view(7, 0, EpochHistory.EMPTY),
                DesiredMirrorState.MIRRORING));
        assertEquals(List.of(new MirrorAction.AddFetcher()), empty.actions(), "an empty log has nothing to compare");
    }

    @Test
    void aNewLeaderWhoseLogDiffersFromTheSourceFailsWithTheOffsetsWithoutTheFlag() {
        MirrorInput differs = with(input(record(MIRRORING, 4), view(7, 80, history(0, 0, 2, 50)),
                DesiredMirrorState.MIRRORING), new PeerLookup.Compared(Optional.empty(), OptionalLong.of(30)));
        MirrorDecision d = machine.decide(differs);
        assertEquals(FAILED, written(d).state());
        assertEquals(-1, written(d).retryAttempt(), "for the operator: fail over to keep them, or start again");
        assertEquals(30, written(d).truncation().proposed());
        String reason = written(d).lastError().orElseThrow();
        assertTrue(reason.contains("differs from the source's from offset 30") && reason.contains("50 records at "
                + "offsets 30 to 79"), reason);
        assertFalse(d.actions().contains(new MirrorAction.AddFetcher()));
    }

    @Test
    void aNewLeaderWhoseLogDiffersFromTheSourceIsCutOnEveryReplicaWithTheFlag() {
        PartitionView flagged = view(7, 80, history(0, 0, 2, 50)).withCluster(true, Map.of());
        MirrorDecision d = machine.decide(with(input(record(MIRRORING, 4), flagged, DesiredMirrorState.MIRRORING),
                new PeerLookup.Compared(Optional.empty(), OptionalLong.of(30))));
        assertEquals(MirrorPartitionState.ULE_RECOVERY, written(d).state());
        assertEquals(30, written(d).truncation().latest().offset());
        assertTrue(d.actions().stream().anyMatch(a -> a instanceof MirrorAction.ApplyTruncationPoint p
                && p.offset() == 30), d.actions().toString());
    }

    @Test
    void theOperatorsStartComparesAgainAndRepairsEvenWithoutTheFlag() {
        MirrorPartitionRecord asked = record(MIRRORING, 4).withReconcileRequested();
        MirrorTimers reconciledBefore = new MirrorTimers(-1L, -1L, -1L, 0);
        MirrorInput in = new MirrorInput(asked, view(7, 80, history(0, 0, 2, 50)), DesiredMirrorState.MIRRORING,
                MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.empty(), reconciledBefore, 0);
        assertEquals(List.of(new MirrorAction.RemoveFetcher(), new MirrorAction.ComparePeer(80)),
                machine.decide(in).actions(), "a request above what this leader reconciled: compare again");
        MirrorDecision d = machine.decide(with(in, new PeerLookup.Compared(Optional.empty(), OptionalLong.of(30))));
        assertEquals(MirrorPartitionState.ULE_RECOVERY, written(d).state(), "the request is the consent to repair");
        assertEquals(30, written(d).truncation().latest().offset());
        assertTrue(d.reason().contains("operator"), d.reason());
    }

    @Test
    void aNewLeaderThatCannotReachTheSourceToCompareRetriesLater() {
        MirrorDecision d = machine.decide(with(input(record(MIRRORING, 4), view(7, 80, history(0, 0)),
                DesiredMirrorState.MIRRORING), new PeerLookup.Failed(PeerLookup.Failure.DISCONNECTED, "connection refused")));
        assertEquals(FAILED, written(d).state());
        assertTrue(written(d).retryAttempt() >= 0, "retriable");
        assertEquals(-1, d.timers().reconciledAt());
    }

    /** Simulation seed 1398: the retry of a comparison that failed went MIRRORING without comparing. */
    @Test
    void theRetryOfALeaderThatCouldNotCompareComparesBeforeItStandsAsMirroring() {
        MirrorInput newLeader = with(input(record(MIRRORING, 4), view(7, 80, history(0, 0)),
                DesiredMirrorState.MIRRORING), new PeerLookup.Failed(PeerLookup.Failure.DISCONNECTED, "link down"));
        MirrorDecision failed = machine.decide(newLeader);
        MirrorPartitionRecord rec = written(failed);
        MirrorInput due = new MirrorInput(rec, newLeader.view(), DesiredMirrorState.MIRRORING, MirrorEvent.TICK,
                PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.empty(), failed.timers(),
                failed.timers().retryAtMs());
        MirrorDecision retry = machine.decide(due);
        assertEquals(List.of(new MirrorAction.RemoveFetcher(), new MirrorAction.ComparePeer(80)), retry.actions(),
                "the comparison runs before the MIRRORING record counts");
        assertEquals(MIRRORING, written(retry).state());

        // the driver decides again with the comparison's outcome: failed again, retried later with a longer backoff
        MirrorInput stillDown = new MirrorInput(written(retry), due.view(), due.desired(), MirrorEvent.TICK,
                new PeerLookup.Failed(PeerLookup.Failure.DISCONNECTED, "link down"), Optional.empty(),
                OptionalLong.empty(), retry.timers(), due.nowMs());
        MirrorDecision again = machine.decide(stillDown);
        assertEquals(FAILED, written(again).state());
        assertEquals(rec.retryAttempt() + 1, written(again).retryAttempt());
        assertFalse(again.actions().contains(new MirrorAction.AddFetcher()));

        // a leader that compared before it failed (a fetch failure) goes back to copying without comparing again
        MirrorPartitionRecord fetchFailed = record(MIRRORING, 7).failed("fetch failed", true, 7);
        MirrorDecision plain = machine.decide(new MirrorInput(fetchFailed, due.view(), DesiredMirrorState.MIRRORING,
                MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.empty(),
                RECONCILED.retryAt(100), 100));
        assertEquals(List.of(new MirrorAction.RemoveFetcher()), plain.actions());
        assertEquals(MIRRORING, written(plain).state());
    }

    @Test
    void anotherClusterBehindTheSourceAddressFailsAMirroringPartitionRetriablyAtOnceAndAFailoverStillWorks() {
        SourceProblem other = SourceProblem.wrongCluster("another cluster at the address");
        MirrorInput mirroring = sourceInput(record(MIRRORING, 1), other, OptionalLong.of(40), MirrorTimers.NONE, 0);
        MirrorDecision d = machine.decide(mirroring);
        assertEquals(FAILED, written(d).state());
        assertEquals(1, written(d).retryAttempt(), "a doubt: retried once the source cluster answers");
        assertEquals(Optional.of("another cluster at the address"), written(d).lastError());
        assertEquals(-1, written(d).progress().lag(), "the source end is not known");
        assertEquals(List.of(new MirrorAction.RemoveFetcher()), d.actions(), "nothing more is fetched");
        MirrorInput stopping = new MirrorInput(written(d), mirroring.view(), DesiredMirrorState.STOPPED,
                MirrorEvent.TICK, mirroring.peer(), mirroring.sourceProblem(), mirroring.sourceHighWatermark(),
                d.timers(), 0);
        assertEquals(STOPPING, written(machine.decide(stopping)).state(), "failover still works");
    }

    @Test
    void aFailedPartitionDoesNotRetryWhileAnotherClusterAnswersAndRetriesOnceTheSourceClusterDoes() {
        MirrorPartitionRecord failed = record(MIRRORING, 1).failed("another cluster", true, 1);
        MirrorDecision due = machine.decide(sourceInput(failed, SourceProblem.wrongCluster("another cluster"),
                OptionalLong.empty(), MirrorTimers.NONE.retryAt(1_000), 1_000));
        assertEquals(FAILED, written(due).state(), "due, but another cluster answers: counted, not retried");
        assertEquals(2, written(due).retryAttempt());
        MirrorDecision back = machine.decide(sourceInput(written(due), null, OptionalLong.empty(),
                RECONCILED.retryAt(due.timers().retryAtMs()), due.timers().retryAtMs()));
        assertEquals(MIRRORING, written(back).state(), "the source cluster answers again: mirroring by itself");
    }

    @Test
    void aFailbackInLogTruncationIsLeftToItsOwnLookupWhenAnotherClusterAnswers() {
        MirrorInput in = input(record(LOG_TRUNCATION, 6), view(6, 150, history(0, 0)), DesiredMirrorState.MIRRORING);
        MirrorDecision d = machine.decide(new MirrorInput(in.record(), in.view(), in.desired(), in.event(), in.peer(),
                Optional.of(SourceProblem.wrongCluster("another cluster")), in.sourceHighWatermark(), in.timers(),
                in.nowMs()));
        assertTrue(d.write().map(MirrorPartitionRecord::state).orElse(LOG_TRUNCATION) == LOG_TRUNCATION,
                "not failed: the failback asks the peer itself and waits on its doubt");
    }

    @Test
    void aDeletedSourceTopicFailsAMirroringPartitionForGoodWithTheReasonAndAnUnknownSourceEnd() {
        MirrorDecision d = machine.decide(sourceInput(record(MIRRORING, 1), SourceProblem.gone("topic deleted"),
                OptionalLong.of(40), MirrorTimers.NONE, 0));
        assertEquals(FAILED, written(d).state());
        assertEquals(-1, written(d).retryAttempt(), "not retried: the source no longer holds the topic");
        assertEquals(Optional.of("topic deleted"), written(d).lastError());
        assertEquals(-1, written(d).progress().lag(), "the source end is not known, the lag is not 0");
        assertEquals(List.of(new MirrorAction.RemoveFetcher(), new MirrorAction.AbortOpenTransactions()),
                d.actions(), "the source's open transactions can never end here: aborted");
    }

    @Test
    void aDeletedSourceTopicFailsAPausedPartitionToo() {
        MirrorPartitionRecord paused = record(MIRRORING, 1).transitionTo(MirrorPartitionState.PAUSING, 1)
                .transitionTo(PAUSED, 1);
        assertEquals(FAILED, written(machine.decide(gone(paused, DesiredMirrorState.PAUSED))).state());
    }

    @Test
    void aTopicCreatedAgainReplacesTheDeletionReasonOnceAndIsNotWrittenAgain() {
        MirrorPartitionRecord deleted = record(MIRRORING, 1).failed("deleted (topic ID A)", false, 1);
        MirrorDecision recreated = machine.decide(sourceInput(deleted,
                SourceProblem.gone("created again: topic ID B, this topic mirrors topic ID A"), OptionalLong.empty(),
                MirrorTimers.NONE, 0));
        assertEquals(Optional.of("created again: topic ID B, this topic mirrors topic ID A"),
                written(recreated).lastError());
        assertEquals(-1, written(recreated).retryAttempt());
        MirrorDecision again = machine.decide(sourceInput(written(recreated),
                SourceProblem.gone("created again: topic ID B, this topic mirrors topic ID A"), OptionalLong.empty(),
                recreated.timers(), 500));
        assertTrue(again.write().isEmpty(), "the same reason is not written at every pass");
    }

    @Test
    void aFailoverGoesOnWhileTheSourceTopicIsGone() {
        MirrorPartitionRecord deleted = record(MIRRORING, 1).failed("deleted", false, 1);
        assertEquals(STOPPING, written(machine.decide(gone(deleted, DesiredMirrorState.STOPPED))).state());
    }

    @Test
    void aSourceThatHasNotAnsweredForTheBoundFailsAMirroringPartitionRetriablyWithAnUnknownLag() {
        MirrorDecision d = machine.decide(sourceInput(record(MIRRORING, 1), SourceProblem.unreachable("no answer"),
                OptionalLong.of(40), MirrorTimers.NONE, 0));
        assertEquals(FAILED, written(d).state());
        assertEquals(1, written(d).retryAttempt());
        assertEquals(-1, written(d).progress().lag(), "the fetcher's last figure (40 = the log end) is not a lag 0");
    }

    @Test
    void aSourceNotAnsweredWithinTheBoundFailsNothingYet() {
        MirrorDecision d = machine.decide(sourceInput(record(MIRRORING, 1), SourceProblem.unanswered("no answer"),
                OptionalLong.of(40), RECONCILED, 0));
        assertEquals(MIRRORING, d.write().map(MirrorPartitionRecord::state).orElse(MIRRORING));
        assertTrue(d.actions().contains(new MirrorAction.AddFetcher()));
    }

    @Test
    void aFailedPartitionDoesNotRetryWhileTheSourceDoesNotAnswer() {
        MirrorPartitionRecord failed = record(MIRRORING, 1).failed("source broker 0 unreachable", true, 1);
        MirrorDecision held = machine.decide(sourceInput(failed, SourceProblem.unanswered("no answer"),
                OptionalLong.of(40), MirrorTimers.NONE.retryAt(1_000), 5_000));
        assertTrue(held.write().isEmpty(), "due, but the source does not answer: FAILED it stays");
        assertEquals(List.of(new MirrorAction.RemoveFetcher()), held.actions());
    }

    @Test
    void aRetryDueWhileTheSourceIsUnreachableIsCountedAndBacksOffFurther() {
        MirrorPartitionRecord failed = record(MIRRORING, 1).failed("no answer", true, 1);
        MirrorDecision early = machine.decide(sourceInput(failed, SourceProblem.unreachable("no answer"),
                OptionalLong.empty(), MirrorTimers.NONE.retryAt(1_000), 999));
        assertTrue(early.write().isEmpty());
        MirrorDecision due = machine.decide(sourceInput(failed, SourceProblem.unreachable("no answer"),
                OptionalLong.empty(), MirrorTimers.NONE.retryAt(1_000), 1_000));
        assertEquals(FAILED, written(due).state());
        assertEquals(2, written(due).retryAttempt());
        assertTrue(due.timers().retryAtMs() >= 1_000 + 1_600 && due.timers().retryAtMs() <= 1_000 + 2_400,
                "the second backoff, 2 s ± 20 %: " + due.timers().retryAtMs());
        MirrorDecision renamed = machine.decide(sourceInput(record(MIRRORING, 1).failed("broker 0 unreachable", true,
                1), SourceProblem.unreachable("no answer"), OptionalLong.empty(), MirrorTimers.NONE.retryAt(9_000), 0));
        assertEquals(Optional.of("no answer"), written(renamed).lastError(), "the source's reason, in every run");
    }

    @Test
    void aRetryOnceTheSourceIsBackRecordsNoStaleSourceEnd() {
        MirrorPartitionRecord failed = record(MIRRORING, 1).withProgress(new MirrorProgress(-1, 40))
                .failed("no answer", true, 1);
        MirrorDecision retried = machine.decide(sourceInput(failed, null, OptionalLong.of(40), RECONCILED
                .retryAt(1_000), 1_000));
        assertEquals(MIRRORING, written(retried).state());
        assertEquals(-1, written(retried).progress().lag(), "40 is what the fetcher saw before the outage");
    }

    @Test
    void aResumeOrRetryBeforeTheFencingCompletedFencesFirst() {
        MirrorPartitionRecord pausedWhileFencing = record(MirrorPartitionState.PAUSED, 0).withMinLeaderEpoch(10);
        MirrorDecision resumed = machine.decide(input(pausedWhileFencing, view(0, 30, history(0, 0)),
                DesiredMirrorState.MIRRORING));
        assertEquals(EPOCH_FENCING, written(resumed).state(), "the leader epoch 0 is not above the source's 0");
        MirrorDecision fenced = machine.decide(input(pausedWhileFencing, view(10, 30, history(0, 0)),
                DesiredMirrorState.MIRRORING));
        assertEquals(MIRRORING, written(fenced).state());
    }

    @Test
    void aRecordFromANewerLeaderIsLeftAlone() {
        MirrorDecision d = machine.decide(input(record(MIRRORING, 9), view(8, 0, EpochHistory.EMPTY),
                DesiredMirrorState.STOPPED));
        assertTrue(d.write().isEmpty());
        assertFalse(d.decideAgain());
    }

    private static MirrorPartitionRecord written(MirrorDecision d) {
        return d.write().orElseThrow(() -> new AssertionError("no record written: " + d));
    }

    private static MirrorPartitionRecord record(MirrorPartitionState state, int writerEpoch) {
        return MirrorPartitionRecord.initial(writerEpoch).transitionTo(state, writerEpoch);
    }

    private static PartitionView view(int leaderEpoch, long logEnd, EpochHistory epochs) {
        return new PartitionView(leaderEpoch, logEnd, logEnd, epochs, OptionalLong.empty(), List.of(0), List.of(0));
    }

    /** Pairs of (epoch, start offset). */
    private static EpochHistory history(long... pairs) {
        EpochHistory h = EpochHistory.EMPTY;
        for (int i = 0; i < pairs.length; i += 2) {
            h = h.appended((int) pairs[i], pairs[i + 1]);
        }
        return h;
    }

    private static MirrorInput input(MirrorPartitionRecord record, PartitionView view, DesiredMirrorState desired) {
        return new MirrorInput(record, view, desired, MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.empty(),
                OptionalLong.empty(), MirrorTimers.NONE, 0);
    }

    /** A MIRRORING-desired input with a source problem ({@code null}: none) and the fetcher's last figure. */
    private static MirrorInput sourceInput(MirrorPartitionRecord record, SourceProblem problem, OptionalLong sourceHw,
                                           MirrorTimers timers, long nowMs) {
        return new MirrorInput(record, view(1, 40, history(0, 0)), DesiredMirrorState.MIRRORING, MirrorEvent.TICK,
                PeerLookup.NOT_ASKED, Optional.ofNullable(problem), sourceHw, timers, nowMs);
    }

    /** The source topic deleted, with the operator's {@code desired} state. */
    private static MirrorInput gone(MirrorPartitionRecord record, DesiredMirrorState desired) {
        return new MirrorInput(record, view(1, 40, history(0, 0)), desired, MirrorEvent.TICK, PeerLookup.NOT_ASKED,
                Optional.of(SourceProblem.gone("deleted")), OptionalLong.empty(), MirrorTimers.NONE, 0);
    }

    private static MirrorInput with(MirrorInput in, PeerLookup peer) {
        return new MirrorInput(in.record(), in.view(), in.desired(), in.event(), peer, in.sourceProblem(),
                in.sourceHighWatermark(), in.timers(), in.nowMs());
    }
}
