package io.twinlog.mirror.partition;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.mirror.LastMirroredTruncation;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.MirrorTransitions;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorProgress;
import io.twinlog.mirror.store.PointInTimeOutcome;
import io.twinlog.mirror.store.PointInTimeOutcome.Reach;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.random.RandomGenerator;

import static io.twinlog.common.mirror.MirrorPartitionState.EPOCH_FENCING;
import static io.twinlog.common.mirror.MirrorPartitionState.FAILED;
import static io.twinlog.common.mirror.MirrorPartitionState.LOG_TRUNCATION;
import static io.twinlog.common.mirror.MirrorPartitionState.MIRRORING;
import static io.twinlog.common.mirror.MirrorPartitionState.PAUSED;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPED;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPING;
import static io.twinlog.common.mirror.MirrorPartitionState.ULE_RECOVERY;
import static io.twinlog.common.mirror.MirrorPartitionState.UNKNOWN;

/**
 * The mirror partition state machine of a destination partition's leader, as one pure decision: given the durable
 * record, a view of the local partition, the operator's desired state, the event, the time and a random source, it
 * returns the actions to run, the next record and why ({@link MirrorDecision}). It does no I/O; the broker's shell
 * ({@code MirrorManager}) runs the actions and writes the record, and the simulation runs the very same code.
 *
 * <p>The rules, per state (KIP-1279; mirroring.md "What happens per partition"):
 * <ul>
 *   <li>LOG_TRUNCATION: a non-empty log asks the source what it last mirrored from this cluster; the point is the
 *       end of that epoch, never past that offset, or 0 without such a record ({@link LastMirroredTruncation}); a
 *       failure to ask or compare ({@link PeerLookup.Failed}) decides nothing and cuts nothing: the partition stays
 *       in LOG_TRUNCATION with the error recorded and asks again after the retry backoff. It
 *       is applied on the leader, recorded, and applied by every replica that must take part (the ISR, or with
 *       {@code mirror.support.unclean.leader.election} every replica) before EPOCH_FENCING with a target epoch above
 *       every epoch held (decision 38).</li>
 *   <li>EPOCH_FENCING: waits for the controller to raise the leader epoch to the recorded minimum, then MIRRORING.
 *       </li>
 *   <li>MIRRORING: a leader first compares its log with the source's (a new leader may have been elected
 *       uncleanly; a divergence is repaired or reported like a source's); then the fetcher copies; a source batch whose epoch reaches the local one fences again; progress is
 *       recorded at most every {@link MirrorSettings#progressIntervalMs()}. A source divergence that no cut would
 *       repair (nothing at or above its point, or a point already applied at this log end) is not recovered again:
 *       FAILED, retriable, with the reason.</li>
 *   <li>PAUSING → PAUSED once the fetcher is removed.</li>
 *   <li>STOPPING (failover): once every in-sync replica holds the log end, records it as the last mirrored offset
 *       with its epoch, and the least leader epoch above that epoch (the current one, unless an unfinished fencing
 *       left it lower); once the leader epoch reaches it, open source transactions are
 *       aborted and the producer-state barrier appended; once every in-sync replica holds the barrier, the
 *       partition is STOPPED (writable).</li>
 *   <li>FAILED: retried after an exponential backoff when the cause may pass; a stop is honoured at once.</li>
 *   <li>A {@link SourceProblem} (every pass but a failover's): a source topic deleted or created again fails the
 *       partition for good with the reason; a source address answering for another cluster, or a source no broker
 *       of which has answered for {@code mirror.state.timeout.ms}, fails a MIRRORING partition (retriable), and no
 *       FAILED partition retries while the source does not answer or another cluster does.</li>
 * </ul>
 * Waiting for the controller (EPOCH_FENCING, STOPPING) longer than {@link MirrorSettings#stateTimeoutMs()} fails the
 * partition with the reason (retriable). Every record it returns is a legal transition ({@link MirrorTransitions}).
 *
 * <p>This class is the state machine: {@link #decide} dispatches by event and state to a step. The steps that cut
 * a log (LOG_TRUNCATION, ULE_RECOVERY, a divergence) are in {@link TruncationSteps}, the failover's (STOPPING) in
 * {@link FailoverSteps}, what every step shares (the guarded transition, the clocks, the backoff) in
 * {@link MirrorSteps}; all pure, all drawing from the one random source in the same order.
 */
public final class MirrorPartitionMachine {
    private final MirrorSettings settings;
    /** What every step shares: the guarded transition, the clocks, fencing targets, the retry backoff. */
    private final MirrorSteps steps;
    /** LOG_TRUNCATION, ULE_RECOVERY and a divergence from the source. */
    private final TruncationSteps truncation;
    /** STOPPING: the failover's steps. */
    private final FailoverSteps failover;

    /**
     * @param random jitter of the retry backoff and truncation point ids: seeded in simulations, so a run replays
     *               exactly (one source shared by every step, drawn in the same order as before the split)
     */
    public MirrorPartitionMachine(MirrorSettings settings, RandomGenerator random) {
        this.settings = settings;
        this.steps = new MirrorSteps(settings, random);
        this.truncation = new TruncationSteps(steps, settings, random);
        this.failover = new FailoverSteps(steps, truncation);
    }

    public MirrorDecision decide(MirrorInput in) {
        if (in.record().writerLeaderEpoch() > in.view().leaderEpoch()) {
            return MirrorDecision.nothing(in.timers()); // written by a newer leader: this leadership is stale
        }
        if (in.event() instanceof MirrorEvent.EpochFencingNeeded fencing) {
            return fenceAgain(in, fencing.sourceEpoch());
        }
        if (in.event() instanceof MirrorEvent.SourceDiverged diverged) {
            return truncation.sourceDiverged(in, diverged);
        }
        if (in.event() instanceof MirrorEvent.FetchFailed failure) {
            return fetchFailed(in, failure);
        }
        return pass(in);
    }

    private MirrorDecision pass(MirrorInput in) {
        MirrorPartitionRecord rec = in.record();
        MirrorPartitionState state = rec.state();
        if (in.pointInTime().isPresent() && in.desired() == DesiredMirrorState.STOPPED
                && (state == MIRRORING || state == EPOCH_FENCING)) {
            // a failover to a point in time the partition has not mirrored up to yet: it mirrors on while the source
            // answers, until the deadline (what it copies past the time is cut with the rest)
            if (in.pointInTime().get().reached(in.sourceProblem(), in.nowMs()).isEmpty()) {
                return state == MIRRORING ? mirror(in) : fence(in);
            }
        }
        boolean failingOver = in.desired() == DesiredMirrorState.STOPPED || state == STOPPING || state == STOPPED;
        if (in.sourceProblem().isPresent() && !failingOver) {
            Optional<MirrorDecision> decided = sourceProblem(in, in.sourceProblem().get());
            if (decided.isPresent()) {
                return decided.get();
            }
        }
        // a failover that timed out retries STOPPING on the backoff schedule, not at once on every pass
        boolean failedStopping = state == FAILED && rec.previousState() == STOPPING && rec.retryAttempt() >= 0;
        Optional<MirrorPartitionState> wanted = failedStopping ? Optional.empty()
                : MirrorTransitions.reconcile(in.desired(), state);
        if (wanted.isPresent()) {
            MirrorPartitionState next = MirrorSteps.fencedOr(in, wanted.get());
            // a failover stops the copy first and decides again on the frozen log end (see stop)
            MirrorAction[] actions = next == STOPPING ? new MirrorAction[] {new MirrorAction.RemoveFetcher(true)}
                    : new MirrorAction[0];
            MirrorPartitionRecord to = rec.transitionTo(next, in.view().leaderEpoch());
            if (next == LOG_TRUNCATION) {
                // a start after a failover: this log may have taken writes since a point was decided or proposed,
                // so the point is decided again (the old ones stay recorded, for replicas that missed them)
                to = to.withTruncation(to.truncation().completed().proposing(-1L));
            }
            if (next == STOPPING && !(state == FAILED && rec.previousState() == STOPPING)) {
                // a new failover (not the retry of one): the last mirrored epoch and offset an earlier failover
                // recorded, kept through the failback since, must not pass for this one's, or STOPPING records
                // nothing, finds that failover's barrier and goes STOPPED without a barrier of its own: this
                // cluster's producers were then taken for the source's, and the peer's failback cut to that old point
                // (decision 70; campaign findings 2 and defect 2)
                to = to.withLastMirrored(-1, -1L);
                // what this failover cuts, if it goes to a point in time (a plain one clears an earlier one's)
                to = to.withPointInTime(in.pointInTime().map(p -> PointInTimeOutcome.started(p.stop().atMs(),
                        state == MIRRORING || state == EPOCH_FENCING
                                ? p.reached(in.sourceProblem(), in.nowMs()).orElse(Reach.REACHED)
                                // a partition the source's absence already failed says so, not just "not mirroring"
                                : state == FAILED && in.sourceProblem().isPresent() ? Reach.SOURCE_UNREACHABLE
                                : Reach.NOT_MIRRORING)).orElse(PointInTimeOutcome.NONE));
            }
            return steps.transition(in, to, "desired state " + in.desired(), actions);
        }
        return switch (state) {
            case LOG_TRUNCATION -> truncation.truncate(in);
            case ULE_RECOVERY -> truncation.recover(in);
            case EPOCH_FENCING -> fence(in);
            case MIRRORING -> mirror(in);
            case PAUSING -> steps.transition(in, rec.transitionTo(PAUSED, in.view().leaderEpoch()), "fetcher removed",
                    new MirrorAction.RemoveFetcher());
            case STOPPING -> failover.stop(in);
            case FAILED -> retry(in);
            case PAUSED, STOPPED, UNKNOWN -> MirrorDecision.nothing(in.timers());
        };
    }

    private MirrorDecision fence(MirrorInput in) {
        MirrorPartitionRecord rec = in.record();
        PartitionView view = in.view();
        if (rec.minLeaderEpoch() < 0) {
            return steps.transition(in, rec.withMinLeaderEpoch(steps.fenceTarget(view, -1)), "fencing");
        }
        if (view.leaderEpoch() >= rec.minLeaderEpoch()) {
            return steps.transition(in, rec.transitionTo(MIRRORING, view.leaderEpoch()), "local leader epoch "
                    + view.leaderEpoch() + " is above every mirrored source epoch");
        }
        return steps.waitForController(in, "epoch fencing");
    }

    private MirrorDecision mirror(MirrorInput in) {
        MirrorPartitionRecord rec = in.record();
        if (in.timers().reconciledAt() < rec.reconcileRequests()) {
            Optional<MirrorDecision> notYet = reconcile(in);
            if (notYet.isPresent()) {
                return notYet.get();
            }
        }
        MirrorTimers timers = in.timers().reconciledUpTo(rec.reconcileRequests());
        MirrorProgress progress = MirrorSteps.progress(in);
        long last = timers.lastProgressWriteMs();
        if (!progress.equals(rec.progress()) && (last < 0 || in.nowMs() - last >= settings.progressIntervalMs())) {
            return new MirrorDecision(List.of(new MirrorAction.AddFetcher()), Optional.of(rec.withProgress(progress)),
                    "", true, timers.progressWrittenAt(in.nowMs()));
        }
        return MirrorDecision.act(timers, new MirrorAction.AddFetcher());
    }

    /**
     * Before a leader copies anything (issue 12 point 4b), it compares its log with the source's by batch identity:
     * a new leader may be a replica elected uncleanly, and ordinary epoch comparison cannot tell batches of the two
     * clusters apart. It compares again when the operator asks (a start of the topic while it mirrors, point 4c).
     * Where they agree as far as both go it mirrors on (empty result); where they differ the divergence is repaired
     * or reported ({@link TruncationSteps#diverged}; the operator's request counts as the consent to repair), never mirrored over.
     * One fetch when they agree (the search probes the last batch first).
     */
    private Optional<MirrorDecision> reconcile(MirrorInput in) {
        long end = in.view().logEndOffset();
        if (end == 0) {
            return Optional.empty();
        }
        if (in.peer() instanceof PeerLookup.NotAsked || in.peer() instanceof PeerLookup.Answered) {
            return Optional.of(MirrorDecision.act(in.timers(), new MirrorAction.RemoveFetcher(),
                    new MirrorAction.ComparePeer(end)));
        }
        if (in.peer() instanceof PeerLookup.Failed failed) {
            String reason = "A leader compares its log with the source's before it mirrors (" + failed.failure()
                    + "): " + failed.reason();
            return Optional.of(steps.transition(in, in.record().failed(reason, true, in.view().leaderEpoch()), reason,
                    new MirrorAction.RemoveFetcher()));
        }
        OptionalLong differ = ((PeerLookup.Compared) in.peer()).firstDifference();
        if (differ.isEmpty() || differ.getAsLong() >= end) {
            return Optional.empty();
        }
        boolean operatorAsked = in.timers().reconciledAt() >= 0;
        return Optional.of(truncation.diverged(in, differ.getAsLong(), "This leader's log differs from the source's from offset "
                + differ.getAsLong() + (operatorAsked ? " (found on the operator's request)"
                : " (a replica elected uncleanly here?)"), "that differ from the source's", operatorAsked));
    }

    private MirrorDecision retry(MirrorInput in) {
        MirrorPartitionRecord rec = in.record();
        MirrorAction remove = new MirrorAction.RemoveFetcher();
        if (rec.retryAttempt() < 0) {
            return MirrorDecision.act(in.timers(), remove);
        }
        long retryAt = in.timers().retryAtMs();
        if (retryAt < 0) { // failed under another leader (or before a restart): a full backoff from now
            return MirrorDecision.act(in.timers().retryAt(in.nowMs() + steps.backoffMs(rec.retryAttempt())), remove);
        }
        if (in.nowMs() < retryAt) {
            return MirrorDecision.act(in.timers(), remove);
        }
        // back to the step that failed; a fencing that timed out fences again (found by the simulation: retrying
        // into MIRRORING let a partition mirror at a leader epoch no higher than the source's)
        MirrorPartitionState retryTo = switch (rec.previousState()) {
            case UNKNOWN, LOG_TRUNCATION -> LOG_TRUNCATION;
            case ULE_RECOVERY -> ULE_RECOVERY;
            case EPOCH_FENCING -> EPOCH_FENCING;
            case STOPPING -> STOPPING;
            default -> MIRRORING;
        };
        MirrorPartitionState to = MirrorSteps.fencedOr(in, retryTo);
        long end = in.view().logEndOffset();
        // a retry into MIRRORING by a leader that has not compared its log with the source's yet compares first,
        // in the same pass: the failure may have been that very comparison (a leader elected uncleanly that could
        // not reach the source), and the partition must not stand as MIRRORING, even for a pass, with a log that
        // is not the source's prefix (simulation seed 1398); the decision after it judges the comparison
        boolean compareFirst = to == MIRRORING && end > 0 && in.timers().reconciledAt() < rec.reconcileRequests();
        MirrorAction[] actions = compareFirst ? new MirrorAction[] {remove, new MirrorAction.ComparePeer(end)}
                : new MirrorAction[] {remove};
        return steps.transition(in, new MirrorPartitionRecord(to, in.view().leaderEpoch(),
                rec.minLeaderEpoch(), rec.lastMirroredEpoch(), rec.lastMirroredOffset(), rec.retryAttempt(),
                rec.lastError(), FAILED, rec.progress(), rec.truncation(), rec.reconcileRequests()),
                "retry " + rec.retryAttempt() + " after the backoff", actions);
    }

    /**
     * What the source's condition means for this partition, at every pass but a failover's (which needs nothing of
     * the source): a source that no longer holds the topic fails it for good with the reason (a newer reason
     * replaces an older one: a deleted topic created again names both topic IDs); a source that has not answered
     * for the bound, or an address that answers for another cluster, fails a MIRRORING partition, retriably; while
     * the source does not answer (or another cluster does) a FAILED partition does not retry into MIRRORING. Empty:
     * the pass goes on as without a problem.
     */
    private Optional<MirrorDecision> sourceProblem(MirrorInput in, SourceProblem problem) {
        MirrorPartitionRecord rec = in.record();
        MirrorPartitionState state = rec.state();
        MirrorAction remove = new MirrorAction.RemoveFetcher();
        int epoch = in.view().leaderEpoch();
        if (problem.kind() == SourceProblem.Kind.GONE && state == LOG_TRUNCATION) {
            // a failback's truncation asks the peer itself, and a doubt there (another cluster at the address, a
            // topic it cannot answer for) waits in LOG_TRUNCATION with the error and cuts nothing (decision 55)
            return Optional.empty();
        }
        if (problem.kind() == SourceProblem.Kind.GONE) {
            if (state == FAILED && rec.retryAttempt() < 0 && rec.lastError().equals(Optional.of(problem.reason()))) {
                return Optional.of(MirrorDecision.act(in.timers(), remove));
            }
            // the transactions the source left open here can never be ended by it: aborted, so that read_committed
            // readers of this partition are not held at its last stable offset for good (issue 26)
            return Optional.of(steps.transition(in, rec.failed(problem.reason(), false, epoch), problem.reason()
                    + " (not retried)", remove, new MirrorAction.AbortOpenTransactions()));
        }
        if (state == FAILED && rec.retryAttempt() >= 0) {
            return Optional.of(failedWhileSourceAway(in, problem));
        }
        if (state == MIRRORING && (problem.kind() == SourceProblem.Kind.UNREACHABLE
                || problem.kind() == SourceProblem.Kind.WRONG_CLUSTER)) {
            return Optional.of(steps.transition(in, rec.failed(problem.reason(), true, epoch), problem.reason()
                    + " (will retry once it answers)", remove));
        }
        return Optional.empty();
    }

    /**
     * A retriable FAILED partition while the source is away stays FAILED: a retry that falls due is counted as an
     * attempt (and the next one backs off further) rather than taken into MIRRORING, so describe shows FAILED with
     * the source's reason throughout, in every run, and never a lag measured against a source it cannot see. The
     * retry proper happens at the first due time after the source answers again ({@link #retry}).
     */
    private MirrorDecision failedWhileSourceAway(MirrorInput in, SourceProblem problem) {
        MirrorPartitionRecord rec = in.record();
        MirrorAction remove = new MirrorAction.RemoveFetcher();
        long now = in.nowMs();
        MirrorTimers timers = in.timers().retryAtMs() < 0 // failed under another leader: a full backoff from now
                ? in.timers().retryAt(now + steps.backoffMs(rec.retryAttempt())) : in.timers();
        boolean due = now >= timers.retryAtMs();
        boolean sameReason = rec.lastError().equals(Optional.of(problem.reason()));
        if (problem.kind() == SourceProblem.Kind.UNANSWERED || !due && sameReason) {
            return MirrorDecision.act(timers, remove);
        }
        MirrorPartitionRecord to = rec.failed(problem.reason(), true, in.view().leaderEpoch());
        MirrorDecision d = steps.transition(in, to, problem.reason() + (due ? " (retry " + rec.retryAttempt()
                + " found the source still away)" : ""), remove);
        return new MirrorDecision(d.actions(), d.write(), d.reason(), false,
                d.timers().retryAt(now + steps.backoffMs(to.retryAttempt())));
    }

    private MirrorDecision fenceAgain(MirrorInput in, int sourceEpoch) {
        MirrorPartitionRecord rec = in.record();
        if (rec.state() != MIRRORING) {
            return MirrorDecision.nothing(in.timers()); // the fetch raced a state change: nothing to fence
        }
        return steps.transition(in, rec.transitionTo(EPOCH_FENCING, in.view().leaderEpoch())
                        .withMinLeaderEpoch(steps.fenceTarget(in.view(), sourceEpoch)), "a source batch has epoch "
                        + sourceEpoch + " >= local leader epoch " + in.view().leaderEpoch());
    }

    private MirrorDecision fetchFailed(MirrorInput in, MirrorEvent.FetchFailed failure) {
        MirrorPartitionRecord rec = in.record();
        if (rec.state() != MIRRORING) {
            return MirrorDecision.nothing(in.timers());
        }
        return steps.transition(in, rec.failed(failure.reason(), failure.retriable(), in.view().leaderEpoch()),
                failure.reason() + (failure.retriable() ? " (will retry)"
                        : " (not retriable: stop and start the topic)"));
    }

}
