package io.twinlog.mirror.partition;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;

import static io.twinlog.common.mirror.MirrorPartitionState.FAILED;
import static io.twinlog.common.mirror.MirrorPartitionState.MIRRORING;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPED;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** STOPPING's steps, state by state: record the last mirrored point, wait for the epoch, the barrier, STOPPED. */
@Timeout(10)
class FailoverStepsTest {
    private static final long TIMEOUT_MS = 60_000;
    private final FailoverSteps failover = failoverSteps(MirrorSettings.defaults(TIMEOUT_MS), new Random(1));
    /** STOPPING from MIRRORING, fenced at epoch 8 over a source epoch of 7; nothing recorded as mirrored yet. */
    private final MirrorPartitionRecord stopping = MirrorPartitionRecord.initial(8).withMinLeaderEpoch(8)
            .transitionTo(MIRRORING, 8).transitionTo(STOPPING, 8);

    @Test
    void theLastMirroredPointWaitsUntilEveryInSyncReplicaHoldsTheLogEnd() {
        MirrorDecision d = failover.stop(input(stopping, view(8, 100, 90, OptionalLong.empty())));
        assertEquals(Optional.empty(), d.write());
        assertEquals(List.of(new MirrorAction.RemoveFetcher()), d.actions());
    }

    @Test
    void theLastMirroredPointIsRecordedWithTheEpochTheControllerMustReach() {
        // the leader's epoch 8 is already above the log's 7 (fenced): no raise
        MirrorDecision fenced = failover.stop(input(stopping, view(8, 100, 100, OptionalLong.empty())));
        MirrorPartitionRecord written = fenced.write().orElseThrow();
        assertEquals(STOPPING, written.state());
        assertEquals(7, written.lastMirroredEpoch());
        assertEquals(100, written.lastMirroredOffset());
        assertEquals(8, written.minLeaderEpoch());
        assertTrue(fenced.reason().endsWith("the leader epoch 8 is already above it"), fenced.reason());

        // a leader at the log's own epoch (never fenced): the controller raises it past the last mirrored one
        PartitionView unfenced = new PartitionView(7, 100, 100, EpochHistory.EMPTY.appended(7, 0),
                OptionalLong.empty(), List.of(0), List.of(0));
        MirrorDecision raise = failover.stop(input(stopping, unfenced));
        assertEquals(8, raise.write().orElseThrow().minLeaderEpoch());
        assertTrue(raise.reason().endsWith("raising the leader epoch to 8"), raise.reason());
        assertEquals(List.of(new MirrorAction.RemoveFetcher()), raise.actions());
    }

    @Test
    void aLogEndingBeforeTheRecordedOffsetIsWhatWasMirrored() {
        MirrorPartitionRecord recorded = stopping.withLastMirrored(7, 100).withMinLeaderEpoch(8);
        MirrorDecision d = failover.stop(input(recorded, view(8, 90, 90, OptionalLong.empty())));
        MirrorPartitionRecord written = d.write().orElseThrow();
        assertEquals(90, written.lastMirroredOffset());
        assertEquals(7, written.lastMirroredEpoch());
        assertEquals(STOPPING, written.state());
    }

    @Test
    void theBarrierWaitsForTheRaisedEpoch() {
        MirrorPartitionRecord recorded = stopping.withLastMirrored(7, 100).withMinLeaderEpoch(9);
        MirrorDecision d = failover.stop(input(recorded, view(8, 100, 100, OptionalLong.empty())));
        assertEquals(Optional.empty(), d.write());
        assertEquals(List.of(new MirrorAction.RemoveFetcher()), d.actions());
        assertEquals(0, d.timers().waitingSinceMs(), "waiting for the controller since now");

        MirrorDecision late = failover.stop(new MirrorInput(recorded, view(8, 100, 100, OptionalLong.empty()),
                DesiredMirrorState.STOPPED, MirrorEvent.TICK, PeerLookup.NOT_ASKED, Optional.empty(),
                OptionalLong.empty(), d.timers(), TIMEOUT_MS));
        assertEquals(FAILED, late.write().orElseThrow().state());
    }

    @Test
    void atTheRaisedEpochTheSourcesTransactionsAreAbortedAndTheBarrierAppended() {
        MirrorPartitionRecord recorded = stopping.withLastMirrored(7, 100).withMinLeaderEpoch(8);
        MirrorDecision d = failover.stop(input(recorded, view(8, 100, 100, OptionalLong.empty())));
        assertEquals(Optional.empty(), d.write());
        assertEquals(List.of(new MirrorAction.RemoveFetcher(), new MirrorAction.AbortOpenTransactions(),
                new MirrorAction.AppendProducerStateBarrier()), d.actions());
    }

    @Test
    void stoppedOnceEveryInSyncReplicaHoldsTheBarrier() {
        MirrorPartitionRecord recorded = stopping.withLastMirrored(7, 100).withMinLeaderEpoch(8);
        MirrorDecision waiting = failover.stop(input(recorded, view(8, 101, 100, OptionalLong.of(100))));
        assertEquals(Optional.empty(), waiting.write(), "the high watermark is not past the barrier yet");
        assertEquals(List.of(new MirrorAction.RemoveFetcher()), waiting.actions());

        MirrorDecision done = failover.stop(input(recorded, view(8, 101, 101, OptionalLong.of(100))));
        MirrorPartitionRecord written = done.write().orElseThrow();
        assertEquals(STOPPED, written.state());
        assertEquals(8, written.writerLeaderEpoch());
        assertEquals(100, written.lastMirroredOffset());
        assertTrue(done.reason().startsWith("failed over at offset 100 (last mirrored epoch 7; producer-state barrier "
                + "at 100)"), done.reason());
    }

    /** The failover's steps on the shared ones, as the machine builds them. */
    static FailoverSteps failoverSteps(MirrorSettings settings, Random random) {
        MirrorSteps steps = new MirrorSteps(settings, random);
        return new FailoverSteps(steps, new TruncationSteps(steps, settings, random));
    }

    private static PartitionView view(int leaderEpoch, long logEnd, long highWatermark, OptionalLong barrier) {
        // the log's last batches are the source's, at epoch 7
        return new PartitionView(leaderEpoch, logEnd, highWatermark, EpochHistory.EMPTY.appended(7, 0), barrier,
                List.of(0), List.of(0));
    }

    private static MirrorInput input(MirrorPartitionRecord record, PartitionView view) {
        return new MirrorInput(record, view, DesiredMirrorState.STOPPED, MirrorEvent.TICK, PeerLookup.NOT_ASKED,
                Optional.empty(), OptionalLong.empty(), MirrorTimers.NONE, 0);
    }
}
