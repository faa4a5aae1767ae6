package io.twinlog.mirror.partition;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.PointInTimeStop;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.PointInTimeOutcome;
import io.twinlog.mirror.store.PointInTimeOutcome.Reach;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;

import static io.twinlog.common.mirror.MirrorPartitionState.MIRRORING;
import static io.twinlog.common.mirror.MirrorPartitionState.PAUSED;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A failover to a point in time (issue 30 point 2), pure: while a partition has not mirrored up to the time it mirrors
 * on, and stops waiting when it holds a batch after it, caught up with the source after it, the source is away for
 * the state timeout (not a single failed attempt), or the deadline passed, each recorded as why; a partition not
 * mirroring stops at once. In STOPPING the log is cut where the time cuts it by a truncation point (the tail copied
 * to the quarantine first), awaited from the replicas without leaving STOPPING, then the last mirrored point is
 * recorded with the newest timestamp kept. And {@link TimeCut.Scan}, the one cut rule.
 */
@Timeout(10)
class PointInTimeStepsTest {
    private static final long TIMEOUT_MS = 60_000;
    private static final long AT = 1_000_000L;
    private static final long DEADLINE = 2_000_000L;
    private final MirrorPartitionMachine machine = new MirrorPartitionMachine(MirrorSettings.defaults(TIMEOUT_MS),
            new Random(1));
    private final MirrorPartitionRecord mirroring = MirrorPartitionRecord.initial(8).withMinLeaderEpoch(8)
            .transitionTo(MIRRORING, 8);

    @Test
    void aPartitionNotYetAtTheTimeMirrorsOn() {
        MirrorDecision d = machine.decide(input(mirroring, view(100, 100), notCut(100), -1, Optional.empty(), AT));
        assertTrue(d.write().isEmpty() || d.write().get().state() == MIRRORING, d.toString());
        assertEquals(List.of(new MirrorAction.AddFetcher()), d.actions());
        // a single failed attempt to reach the source is no reason to stop short
        MirrorDecision blip = machine.decide(input(mirroring, view(100, 100), notCut(100), -1,
                Optional.of(SourceProblem.unanswered("no answer")), AT));
        assertEquals(List.of(new MirrorAction.AddFetcher()), blip.actions());
    }

    @Test
    void itStopsWaitingWithTheReasonRecorded() {
        assertEquals(Reach.REACHED, stopsWith(input(mirroring, view(100, 100), cutAt(60, 100), -1, Optional.empty(),
                AT)));
        assertEquals(Reach.REACHED, stopsWith(input(mirroring, view(100, 100), notCut(100), AT + 1, Optional.empty(),
                AT + 5)), "caught up with the source at a fetch after the time");
        assertEquals(Reach.TIMED_OUT, stopsWith(input(mirroring, view(100, 100), notCut(100), AT - 1,
                Optional.empty(), DEADLINE)));
        assertEquals(Reach.SOURCE_UNREACHABLE, stopsWith(input(mirroring, view(100, 100), notCut(100), -1,
                Optional.of(SourceProblem.unreachable("away")), AT)));
        MirrorPartitionRecord failed = mirroring.failed("the source does not answer", true, 8);
        assertEquals(Reach.SOURCE_UNREACHABLE, stopsWith(input(failed, view(100, 100), notCut(100), -1,
                Optional.of(SourceProblem.unanswered("no answer")), AT)), "failed for the source's absence");
        MirrorPartitionRecord paused = mirroring.transitionTo(PAUSED, 8);
        assertEquals(Reach.NOT_MIRRORING, stopsWith(input(paused, view(100, 100), notCut(100), -1, Optional.empty(),
                AT)));
    }

    @Test
    void aPlainFailoverClearsAnEarlierOnesPointInTime() {
        MirrorPartitionRecord earlier = mirroring.withPointInTime(PointInTimeOutcome.started(AT, Reach.TIMED_OUT));
        MirrorDecision d = machine.decide(new MirrorInput(earlier, view(100, 100), DesiredMirrorState.STOPPED,
                MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.empty(), MirrorTimers.NONE, 0));
        assertTrue(d.write().orElseThrow().pointInTime().isNone());
    }

    @Test
    void theCutIsATruncationPointCopiedToTheQuarantineFirstThenAwaitedInStopping() {
        MirrorPartitionRecord stopping = mirroring.transitionTo(STOPPING, 8)
                .withPointInTime(PointInTimeOutcome.started(AT, Reach.REACHED));
        MirrorDecision cut = machine.decide(input(stopping, view(100, 100), cutAt(60, 100), -1, Optional.empty(),
                AT));
        MirrorPartitionRecord written = cut.write().orElseThrow();
        assertEquals(STOPPING, written.state());
        assertEquals(-1, written.lastMirroredOffset(), "nothing recorded as mirrored before the cut");
        assertTrue(written.truncation().pending());
        assertEquals(60, written.truncation().latest().offset());
        assertEquals(new PointInTimeOutcome(AT, Reach.REACHED, 60, 100, -1, AT - 7), written.pointInTime());
        assertEquals(new MirrorAction.RemoveFetcher(), cut.actions().get(0));
        MirrorAction.ApplyTruncationPoint apply = assertInstanceOf(MirrorAction.ApplyTruncationPoint.class,
                cut.actions().get(1));
        assertEquals(60, apply.offset());
        assertEquals(written.truncation().latest().id(), apply.id());

        // the leader cut (log end 60); a follower has not applied the point yet: nothing moves
        long id = apply.id();
        PartitionView cutView = view(60, 60, List.of(0, 1), Map.of(0, id));
        MirrorDecision waiting = machine.decide(input(written, cutView, notCut(60), -1, Optional.empty(), AT));
        assertTrue(waiting.write().isEmpty(), waiting.toString());

        // every in-sync replica applied it: STOPPING goes on, the point complete
        PartitionView applied = view(60, 60, List.of(0, 1), Map.of(0, id, 1, id));
        MirrorDecision goesOn = machine.decide(input(written, applied, notCut(60), -1, Optional.empty(), AT));
        MirrorPartitionRecord after = goesOn.write().orElseThrow();
        assertEquals(STOPPING, after.state());
        assertFalse(after.truncation().pending());

        // and the last mirrored point is the cut, with the newest timestamp kept
        MirrorDecision recorded = machine.decide(input(after, applied, new TimeCut(AT, 60, AT - 7, 60), -1,
                Optional.empty(), AT));
        MirrorPartitionRecord last = recorded.write().orElseThrow();
        assertEquals(60, last.lastMirroredOffset());
        assertEquals(new PointInTimeOutcome(AT, Reach.REACHED, 60, 100, -1, AT - 7), last.pointInTime());
    }

    @Test
    void theScanCutsAtTheFirstBatchAfterTheTimeControlBatchesIncluded() {
        List<MemoryRecords> log = List.of(data(0, AT - 10, AT - 20, AT - 30), data(3, AT),
                MemoryRecords.withEndTransactionMarker(4, AT + 1, 8, 42L, (short) 0,
                        new EndTransactionMarker(ControlRecordType.COMMIT, 0)),
                data(5, AT - 50, AT - 51, AT - 52, AT - 53, AT - 54), data(10, AT + 9));
        // the commit marker at 4 is after the time: the cut is there, though the batch after it is older; the
        // quarantine receives offsets [4, 11)
        assertEquals(new TimeCut(AT, 4, AT, 11), scan(AT, log));
        TimeCut none = scan(AT + 100, log);
        assertEquals(new TimeCut(AT + 100, 11, AT + 9, 11), none);
        assertFalse(none.cuts());
        assertEquals(new TimeCut(AT - 100, 0, -1, 11), scan(AT - 100, log), "nothing kept");
    }

    @Test
    void theScanEndsAtTheCut() {
        // what follows the cut is quarantined by offsets, never read: the reader stops once pastCut says so
        TimeCut.Scan scan = new TimeCut.Scan(AT);
        data(0, AT - 1).batches().forEach(scan::accept);
        assertFalse(scan.pastCut());
        data(1, AT + 1).batches().forEach(scan::accept);
        assertTrue(scan.pastCut());
        data(2, AT - 5).batches().forEach(scan::accept); // ignored: an older batch after the cut is cut too
        assertEquals(new TimeCut(AT, 1, AT - 1, 3), scan.result(3, -1));
    }

    @Test
    void theSearchStartsAtTheLogStartUnlessTheTimeIndexAnswered() {
        // an error or a pending answer is no "no record after the time": reading only the last batch then would
        // miss earlier batches after the time, and the failover would cut nothing
        assertEquals(5, TimeCut.searchStart(false, OptionalLong.empty(), 5, 100));
        assertEquals(5, TimeCut.searchStart(false, OptionalLong.of(70), 5, 100));
        assertEquals(70, TimeCut.searchStart(true, OptionalLong.of(70), 5, 100));
        assertEquals(99, TimeCut.searchStart(true, OptionalLong.empty(), 5, 100), "none after the time: last batch");
        assertEquals(5, TimeCut.searchStart(true, OptionalLong.empty(), 5, 5), "an empty log");
    }

    @Test
    void aCutBegunIsAwaitedWhateverTheStopNowSays() {
        // the leader cut to 60 and recorded the point; a second stop then came without a time (or with another):
        // the record's pending point is still awaited from the replicas, the last mirrored point not recorded at
        // the leader's cut end while a follower holds [60, 100)
        MirrorPartitionRecord stopping = mirroring.transitionTo(STOPPING, 8)
                .withPointInTime(PointInTimeOutcome.started(AT, Reach.REACHED));
        MirrorPartitionRecord written = machine.decide(input(stopping, view(100, 100), cutAt(60, 100), -1,
                Optional.empty(), AT)).write().orElseThrow();
        long id = written.truncation().latest().id();
        PartitionView leaderCut = view(60, 60, List.of(0, 1), Map.of(0, id));
        MirrorInput plain = new MirrorInput(written, leaderCut, DesiredMirrorState.STOPPED, MirrorEvent.TICK,
                PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.empty(), MirrorTimers.NONE.reconciledUpTo(0), AT,
                Optional.empty(), Optional.empty());
        MirrorDecision d = machine.decide(plain);
        assertTrue(d.write().isEmpty(), "the follower has not applied the cut: " + d);
        MirrorInput other = new MirrorInput(written, leaderCut, DesiredMirrorState.STOPPED, MirrorEvent.TICK,
                PeerLookup.NOT_ASKED, Optional.empty(), OptionalLong.empty(), MirrorTimers.NONE.reconciledUpTo(0), AT,
                Optional.empty(), Optional.of(new PointInTimeView(new PointInTimeStop(AT + 500, DEADLINE),
                notCut(60), -1)));
        MirrorDecision d2 = machine.decide(other);
        assertTrue(d2.write().isEmpty(), "another time: " + d2);
    }

    private static TimeCut scan(long at, List<MemoryRecords> log) {
        TimeCut.Scan scan = new TimeCut.Scan(at);
        for (MemoryRecords records : log) {
            records.batches().forEach(scan::accept);
        }
        return scan.result(11, -1);
    }

    private static MemoryRecords data(long baseOffset, long... timestamps) {
        SimpleRecord[] records = new SimpleRecord[timestamps.length];
        for (int i = 0; i < timestamps.length; i++) {
            records[i] = new SimpleRecord(timestamps[i], new byte[] {(byte) i});
        }
        return MemoryRecords.withRecords(baseOffset, Compression.NONE, records);
    }

    private Reach stopsWith(MirrorInput in) {
        MirrorDecision d = machine.decide(in);
        MirrorPartitionRecord written = d.write().orElseThrow(() -> new AssertionError("no write: " + d));
        assertEquals(STOPPING, written.state(), d.reason());
        return written.pointInTime().reach();
    }

    private static TimeCut notCut(long end) {
        return new TimeCut(AT, end, AT - 7, end);
    }

    private static TimeCut cutAt(long offset, long end) {
        return new TimeCut(AT, offset, AT - 7, end);
    }

    private static PartitionView view(long logEnd, long highWatermark) {
        return new PartitionView(8, logEnd, highWatermark, EpochHistory.EMPTY.appended(7, 0), OptionalLong.empty(),
                List.of(0), List.of(0));
    }

    private static PartitionView view(long logEnd, long highWatermark, List<Integer> isr,
                                      Map<Integer, Long> applied) {
        return new PartitionView(8, logEnd, highWatermark, EpochHistory.EMPTY.appended(7, 0), OptionalLong.empty(),
                isr, isr).withCluster(false, applied);
    }

    private static MirrorInput input(MirrorPartitionRecord record, PartitionView view, TimeCut cut, long upTo,
                                     Optional<SourceProblem> problem, long now) {
        return new MirrorInput(record, view, DesiredMirrorState.STOPPED, MirrorEvent.TICK, PeerLookup.NOT_ASKED,
                problem, OptionalLong.empty(), MirrorTimers.NONE.reconciledUpTo(0), now, // compared with the source
                Optional.empty(), Optional.of(new PointInTimeView(new PointInTimeStop(AT, DEADLINE), cut, upTo)));
    }
}
