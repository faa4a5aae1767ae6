package io.twinlog.mirror.partition;

import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.PointInTimeOutcome;

import java.util.OptionalLong;

import static io.twinlog.common.mirror.MirrorPartitionState.STOPPED;

/**
 * The {@link MirrorPartitionMachine}'s failover step, STOPPING, pure like it (the rules are in the machine's
 * Javadoc). Split from the machine, which dispatches to it by state.
 */
final class FailoverSteps {
    private final MirrorSteps steps;
    /** A failover to a point in time cuts the log by the failback's truncation step. */
    private final TruncationSteps truncation;

    FailoverSteps(MirrorSteps steps, TruncationSteps truncation) {
        this.steps = steps;
        this.truncation = truncation;
    }

    /**
     * STOPPING (failover): records the last mirrored offset and epoch once every in-sync replica holds the log end,
     * with the leader epoch the controller must reach; then aborts the source's open transactions and appends the
     * producer-state barrier; STOPPED once every in-sync replica holds the barrier. A failover to a point in time
     * first cuts the log where that time does ({@link TimeCut}), on every replica, the tail kept in the quarantine;
     * the source's transactions the cut leaves open (a commit marker after the time) are then aborted with the
     * others, so none is half visible.
     */
    MirrorDecision stop(MirrorInput in) {
        MirrorPartitionRecord rec = in.record();
        PartitionView view = in.view();
        MirrorAction remove = new MirrorAction.RemoveFetcher();
        PointInTimeOutcome pointInTime = rec.pointInTime();
        boolean timed = in.pointInTime().isPresent() && !pointInTime.isNone()
                && pointInTime.atMs() == in.pointInTime().get().stop().atMs();
        // a cut begun is awaited whatever the stop now says (a stop at another time or none is refused while a
        // partition is not STOPPED, but a record outlives the topic's node): recording the last mirrored point at
        // the leader's cut end while followers still hold [cut, old end) would let them keep what was cut
        if (!pointInTime.isNone() && rec.lastMirroredOffset() < 0 && rec.truncation().pending()) {
            return truncation.awaitCut(in, rec.truncation());
        }
        if (timed && rec.lastMirroredOffset() < 0) {
            // a failover to a point in time first cuts what was mirrored after it, on every replica, the way a
            // failback cuts: a truncation point, the tail copied to the quarantine first (issue 30 point 2)
            TimeCut cut = in.pointInTime().get().cut();
            if (cut.cuts()) {
                return truncation.cutAtTime(in, cut);
            }
        }
        if (rec.minLeaderEpoch() <= rec.lastMirroredEpoch() || rec.lastMirroredOffset() < 0) {
            if (view.highWatermark() < view.logEndOffset()) {
                // the fetcher is gone, so the log end stays: record it once every in-sync replica holds it, or a
                // clean election could lose the records below the offset recorded as mirrored
                return MirrorDecision.act(in.timers(), remove);
            }
            int lme = view.latestLogEpoch();
            long lmo = view.logEndOffset();
            // what this cluster writes from now on must have an epoch above the last mirrored one (the line a
            // failback cuts at); a MIRRORING leader's epoch already is (fencing), so the controller is asked to
            // raise it only when it is not, as KIP-1279's BumpLeaderEpochs with the LME as the minimum
            int target = Math.max(view.leaderEpoch(), lme + 1);
            String epoch = target == view.leaderEpoch() ? "the leader epoch " + target + " is already above it"
                    : "raising the leader epoch to " + target;
            MirrorPartitionRecord to = rec.withLastMirrored(lme, lmo).withMinLeaderEpoch(target);
            if (timed) {
                to = to.withPointInTime(pointInTime.kept(in.pointInTime().get().cut().keptTimestamp()));
            }
            return steps.transition(in, to, "recording last mirrored epoch " + lme + " and offset " + lmo + "; "
                    + epoch, remove);
        }
        OptionalLong barrier = view.producerStateBarrier();
        boolean barrierWritten = barrier.isPresent() && barrier.getAsLong() >= rec.lastMirroredOffset();
        if (!barrierWritten && view.logEndOffset() < rec.lastMirroredOffset()) {
            // a leader elected uncleanly lacks records recorded as mirrored: what it holds is what was mirrored
            int lme = view.latestLogEpoch();
            long lmo = view.logEndOffset();
            return steps.transition(in, rec.withLastMirrored(lme, lmo), "the log now ends at " + lmo + ", before the "
                    + "recorded last mirrored offset " + rec.lastMirroredOffset() + " (records lost with a leader): "
                    + "recording last mirrored epoch " + lme + " and offset " + lmo, remove);
        }
        if (view.leaderEpoch() < rec.minLeaderEpoch()) {
            return steps.waitForController(in, "failover", remove);
        }
        if (!barrierWritten) {
            // the producers copied from the source are forgotten on every replica before the topic is writable:
            // this cluster allocates producer ids from the same range (decision 24)
            return MirrorDecision.act(in.timers(), remove, new MirrorAction.AbortOpenTransactions(),
                    new MirrorAction.AppendProducerStateBarrier());
        }
        if (view.highWatermark() <= barrier.getAsLong()) {
            // writable only once every in-sync replica holds the barrier: a leader elected without it would take
            // this cluster's producers for the source's
            return MirrorDecision.act(in.timers(), remove);
        }
        return steps.transition(in, rec.transitionTo(STOPPED, view.leaderEpoch()), "failed over at offset "
                + rec.lastMirroredOffset() + " (last mirrored epoch " + rec.lastMirroredEpoch() + "; producer-state "
                + "barrier at " + barrier.getAsLong() + "); leader epoch now " + view.leaderEpoch()
                + ", the topic is writable", remove);
    }
}
