package io.twinlog.mirror.partition;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.TruncationPoints;
import io.twinlog.mirror.LastMirroredTruncation;
import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.MirrorTransitions;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorProgress;
import io.twinlog.mirror.store.MirrorTruncation;

import java.util.ArrayList;
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
 */
public final class MirrorPartitionMachine {
    private final MirrorSettings settings;
    private final RandomGenerator random;

    /** @param random jitter of the retry backoff: seeded in simulations, so a run replays exactly */
    public MirrorPartitionMachine(MirrorSettings settings, RandomGenerator random) {
        this.settings = settings;
        this.random = random;
    }

    public MirrorDecision decide(MirrorInput in) {
        if (in.record().writerLeaderEpoch() > in.view().leaderEpoch()) {
            return MirrorDecision.nothing(in.timers()); // written by a newer leader: this leadership is stale
        }
        if (in.event() instanceof MirrorEvent.EpochFencingNeeded fencing) {
            return fenceAgain(in, fencing.sourceEpoch());
        }
        if (in.event() instanceof MirrorEvent.SourceDiverged diverged) {
            return sourceDiverged(in, diverged);
        }
        if (in.event() instanceof MirrorEvent.FetchFailed failure) {
            return fetchFailed(in, failure);
        }
        return pass(in);
    }

    private MirrorDecision pass(MirrorInput in) {
        MirrorPartitionRecord rec = in.record();
        MirrorPartitionState state = rec.state();
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
            MirrorPartitionState next = fencedOr(in, wanted.get());
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
            }
            return transition(in, to, "desired state " + in.desired(), actions);
        }
        return switch (state) {
            case LOG_TRUNCATION -> truncate(in);
            case ULE_RECOVERY -> recover(in);
            case EPOCH_FENCING -> fence(in);
            case MIRRORING -> mirror(in);
            case PAUSING -> transition(in, rec.transitionTo(PAUSED, in.view().leaderEpoch()), "fetcher removed",
                    new MirrorAction.RemoveFetcher());
            case STOPPING -> stop(in);
            case FAILED -> retry(in);
            case PAUSED, STOPPED, UNKNOWN -> MirrorDecision.nothing(in.timers());
        };
    }

    /**
     * LOG_TRUNCATION, partition-wide (decision 38): first the point is decided on the leader (the end of the
     * peer's last mirrored epoch in this log, never past its last mirrored offset; 0 without such a record), the
     * leader's own log is cut to it and it is recorded; then the partition waits until the replicas that must take
     * part have applied it explicitly (their brokers say so through the metadata) and caught up: the ISR, with
     * min.insync.replicas met, or with {@code mirror.support.unclean.leader.election} every assigned replica, back
     * in the ISR. Nothing is appended meanwhile, so the leader's log is the point's prefix throughout.
     */
    private MirrorDecision truncate(MirrorInput in) {
        MirrorPartitionRecord rec = in.record();
        PartitionView view = in.view();
        if (rec.truncation().pending()) {
            return awaitTruncation(in, rec.truncation());
        }
        long end = view.logEndOffset();
        long to = 0;
        String why = "the leader's log is empty";
        if (end > 0) {
            if (in.peer() instanceof PeerLookup.NotAsked) {
                if (in.timers().retryAtMs() >= 0 && in.nowMs() < in.timers().retryAtMs()) {
                    return MirrorDecision.nothing(in.timers()); // backing off after a doubt
                }
                return MirrorDecision.act(in.timers(), new MirrorAction.AskPeer());
            }
            if (in.peer() instanceof PeerLookup.Failed failed) {
                return doubt(in, failed);
            }
            Optional<LastMirrored> peer = in.peer() instanceof PeerLookup.Compared c ? c.lastMirrored()
                    : ((PeerLookup.Answered) in.peer()).lastMirrored();
            OptionalLong endOfEpoch = peer.flatMap(p -> view.epochs().endOffsetFor(p.epoch(), end))
                    .map(e -> OptionalLong.of(e.endOffset())).orElse(OptionalLong.empty());
            to = LastMirroredTruncation.truncationOffset(end, peer, endOfEpoch);
            why = peer.isEmpty() ? "the source has no last mirrored epoch from this cluster: everything is mirrored "
                    + "again" : "the source mirrored this log up to offset " + peer.get().offset() + " in epoch "
                    + peer.get().epoch() + "; " + (end - to) + " records written here after that are cut";
            if (to > 0 && in.peer() instanceof PeerLookup.Answered) {
                // what is kept must be what the peer holds: an unclean election here can have replaced records
                // below the last mirrored offset under the same epoch numbers (the seeds' case)
                return MirrorDecision.act(in.timers(), new MirrorAction.ComparePeer(to));
            }
            if (in.peer() instanceof PeerLookup.Compared c && c.firstDifference().isPresent()
                    && c.firstDifference().getAsLong() < to) {
                long differ = c.firstDifference().getAsLong();
                why = "the logs differ from offset " + differ + ", below the last mirrored point " + to + " (an "
                        + "unclean leader election on this cluster?): " + (end - differ) + " records are cut to the "
                        + "last batch both clusters hold";
                to = differ;
            }
        }
        MirrorDecision point = recordPoint(in, rec.withoutError(), to, why);
        if (in.peer() instanceof PeerLookup.Compared) {
            // what this leader keeps is what it just compared batch by batch with the source (the rest is cut, and
            // nothing is appended until it mirrors): MIRRORING need not compare it again after this leader's own
            // epoch fencing; a new leader starts without this memory and compares (decision 98)
            return point.withTimers(point.timers().reconciledUpTo(rec.reconcileRequests()));
        }
        return point;
    }

    /**
     * The peer could not be asked, or compared with, in a way one can trust (a timeout, a dropped connection, an
     * authentication or authorization failure, another cluster at the address, any error): no truncation point is
     * decided and nothing is cut. The partition stays in LOG_TRUNCATION with the error in its record (what
     * {@code --describe} shows, with the attempt) and asks again after the retry backoff, growing per attempt.
     * Cutting to 0 on a doubt would throw away the prefix both clusters share (issue 25, point 2).
     */
    private MirrorDecision doubt(MirrorInput in, PeerLookup.Failed failed) {
        MirrorPartitionRecord next = in.record().withError("Failback waits for the source (" + failed.failure()
                + "): " + failed.reason() + "; nothing is cut until it answers");
        long backoffMs = backoffMs(next.retryAttempt());
        MirrorDecision d = transition(in, next, "no truncation point decided, nothing cut: " + failed.failure() + ": "
                + failed.reason() + "; asking the source again in " + backoffMs + " ms (attempt "
                + next.retryAttempt() + ")");
        return new MirrorDecision(d.actions(), d.write(), d.reason(), false,
                d.timers().retryAt(in.nowMs() + backoffMs));
    }

    /**
     * A new truncation point at {@code to} on top of {@code base}: the leader applies it first (after
     * {@code before}), then it is recorded for every replica and awaited ({@link #awaitTruncation}).
     */
    private MirrorDecision recordPoint(MirrorInput in, MirrorPartitionRecord base, long to, String why,
                                       MirrorAction... before) {
        long id = 0;
        while (id == 0) {
            id = random.nextLong() & Long.MAX_VALUE;
        }
        List<MirrorAction> actions = new ArrayList<>(List.of(before));
        actions.add(new MirrorAction.ApplyTruncationPoint(id, to, why));
        return transition(in, base.withTruncation(base.truncation().with(new TruncationPoints.Point(id, to),
                        in.view().logEndOffset() - to)),
                "truncation point " + id + " at offset " + to + " for every replica (" + why + ")",
                actions.toArray(new MirrorAction[0]));
    }

    /**
     * ULE_RECOVERY: the source diverged and this cluster follows it (the flag, or the operator's start after a
     * FAILED divergence): the proposed point is recorded and awaited like LOG_TRUNCATION's, then fencing.
     */
    private MirrorDecision recover(MirrorInput in) {
        MirrorPartitionRecord rec = in.record();
        if (rec.truncation().pending()) {
            return awaitTruncation(in, rec.truncation());
        }
        long proposed = rec.truncation().proposed();
        if (proposed >= 0) {
            return recordPoint(in, rec, proposed, "the source diverged at offset " + proposed
                    + ": what this cluster holds from there is cut to follow the source");
        }
        return transition(in, rec.transitionTo(EPOCH_FENCING, in.view().leaderEpoch())
                .withMinLeaderEpoch(fenceTarget(in.view(), -1)), "nothing left to recover");
    }

    /**
     * The source no longer holds what this cluster mirrored (an unclean leader election there). The point both
     * still agree on is Kafka's follower rule: the lower of where the source's epoch ends and where the same (or
     * the largest lower) epoch ends here.
     */
    private MirrorDecision sourceDiverged(MirrorInput in, MirrorEvent.SourceDiverged d) {
        PartitionView view = in.view();
        if (in.record().state() != MIRRORING) {
            return MirrorDecision.nothing(in.timers()); // the fetch raced a state change
        }
        long end = view.logEndOffset();
        long to = 0;
        if (d.sourceEpoch() >= 0 && d.sourceEndOffset() >= 0) {
            Optional<EpochHistory.EpochEnd> here = view.epochs().endOffsetFor(d.sourceEpoch(), end);
            if (here.isPresent()) {
                to = Math.min(end, Math.min(d.sourceEndOffset(), here.get().endOffset()));
            }
        }
        Optional<String> futile = futileRecovery(in, to);
        if (futile.isPresent()) {
            String reason = d.reason() + ". " + futile.get() + ": a recovery would change nothing, so none is made "
                    + "and mirroring is retried after the backoff";
            return transition(in, in.record().failed(reason, true, view.leaderEpoch()), reason,
                    new MirrorAction.RemoveFetcher());
        }
        return diverged(in, to, d.reason(), "that the source no longer has", false);
    }

    /**
     * Why cutting this log at {@code to} would change nothing, if it would not: the log ends at or below it, and
     * either no epoch entry starts at or after it either, or the latest truncation point, applied, is at this very
     * log end (it cut there already and the source still reports the divergence). Another point would then only be
     * followed by the same divergence at once: campaign defect 1, an empty log whose checkpoint kept an epoch its
     * leader never wrote in cycled MIRRORING -> ULE_RECOVERY about ten times a second, a new point recorded each
     * time, while describe showed it MIRRORING. Empty: the cut removes records or epochs, a recovery is progress.
     */
    private static Optional<String> futileRecovery(MirrorInput in, long to) {
        PartitionView view = in.view();
        long end = view.logEndOffset();
        if (to < end) {
            return Optional.empty();
        }
        MirrorTruncation truncation = in.record().truncation();
        String held = "This log ends at " + end + " (latest epoch " + view.latestLogEpoch() + ")";
        if (view.epochs().truncatedTo(to).equals(view.epochs())) {
            return Optional.of(held + " and holds no record and no epoch from offset " + to + " to cut");
        }
        if (!truncation.isNone() && !truncation.pending() && truncation.latest().offset() == end) {
            return Optional.of(held + " where truncation point " + truncation.latest().id() + " already cut it");
        }
        return Optional.empty();
    }

    /**
     * This cluster holds records at {@code to} and above that the source does not. With
     * {@code mirror.support.unclean.leader.election} (or the operator's {@code consent}) every replica truncates to
     * {@code to} (the cut records kept in the quarantine) and mirroring goes on (ULE_RECOVERY); without, FAILED for
     * good with what this cluster would lose and the operator's two choices, the point proposed for the start that
     * takes the second.
     */
    private MirrorDecision diverged(MirrorInput in, long to, String cause, String what, boolean consent) {
        MirrorPartitionRecord rec = in.record();
        PartitionView view = in.view();
        long end = view.logEndOffset();
        String held = (end - to) + " records at offsets " + to + " to " + (end - 1);
        MirrorAction remove = new MirrorAction.RemoveFetcher();
        if (view.uncleanElectionSupport() || consent) {
            return recordPoint(in, rec.transitionTo(ULE_RECOVERY, view.leaderEpoch()), to, cause
                    + (consent ? "; the operator's start: " : "; mirror.support.unclean.leader.election: ") + held + " are cut from every replica to follow "
                    + "the source", remove);
        }
        String reason = cause + ". This cluster holds " + held + " " + what + ". Either fail "
                + "over to keep them (--remove), or start the topic again (--start) to follow the source: they are "
                + "then cut from every replica (mirror.support.unclean.leader.election=true does that by itself)";
        return transition(in, rec.failed(reason, false, view.leaderEpoch()).withPreviousState(ULE_RECOVERY)
                .withTruncation(rec.truncation().proposing(to)), reason, remove);
    }

    private MirrorDecision awaitTruncation(MirrorInput in, MirrorTruncation truncation) {
        PartitionView view = in.view();
        TruncationPoints.Point point = truncation.latest();
        boolean everyReplica = view.uncleanElectionSupport();
        List<Integer> required = everyReplica ? view.replicas() : view.isr();
        List<String> missing = new ArrayList<>();
        for (int replica : required) {
            Long applied = view.truncationsApplied().get(replica);
            if (applied == null || applied != point.id()) {
                missing.add(replica + " (has not applied it)");
            } else if (everyReplica && !view.isr().contains(replica)) {
                missing.add(replica + " (not in the ISR)");
            } else if (view.followerLogEnds().containsKey(replica)
                    && view.followerLogEnds().get(replica) < view.logEndOffset()) {
                missing.add(replica + " (catching up: at " + view.followerLogEnds().get(replica) + " of "
                        + view.logEndOffset() + ")");
            }
        }
        if (!everyReplica && view.isr().size() < view.minInsyncReplicas()) {
            missing.add("min.insync.replicas=" + view.minInsyncReplicas() + " (ISR " + view.isr() + ")");
        }
        if (missing.isEmpty()) {
            return transition(in, in.record().withTruncation(truncation.appliedBy(everyReplica))
                    .transitionTo(EPOCH_FENCING, view.leaderEpoch()).withMinLeaderEpoch(fenceTarget(view, -1)), "truncation point " + point.id()
                    + " at offset " + point.offset() + " applied by " + (everyReplica ? "every replica " : "the ISR ")
                    + required + "; log aligned at offset " + view.logEndOffset());
        }
        long now = in.nowMs();
        long since = in.timers().waitingSinceMs() < 0 ? now : in.timers().waitingSinceMs();
        if (now - since < settings.stateTimeoutMs()) {
            return MirrorDecision.act(in.timers().waitingSince(since));
        }
        String reason = "The log truncation waited " + (now - since) + " ms (mirror.state.timeout.ms) for the "
                + "replicas to apply truncation point " + point.id() + " at offset " + point.offset() + ": "
                + String.join(", ", missing) + (everyReplica
                ? ". mirror.support.unclean.leader.election=true needs every assigned replica: bring the broker back "
                + "or reassign the partition, then start the topic again (--start)"
                : "; will retry");
        return transition(in, in.record().failed(reason, !everyReplica, view.leaderEpoch()), reason);
    }

    private MirrorDecision fence(MirrorInput in) {
        MirrorPartitionRecord rec = in.record();
        PartitionView view = in.view();
        if (rec.minLeaderEpoch() < 0) {
            return transition(in, rec.withMinLeaderEpoch(fenceTarget(view, -1)), "fencing");
        }
        if (view.leaderEpoch() >= rec.minLeaderEpoch()) {
            return transition(in, rec.transitionTo(MIRRORING, view.leaderEpoch()), "local leader epoch "
                    + view.leaderEpoch() + " is above every mirrored source epoch");
        }
        return waitForController(in, "epoch fencing");
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
        MirrorProgress progress = progress(in);
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
     * or reported ({@link #diverged}; the operator's request counts as the consent to repair), never mirrored over.
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
            return Optional.of(transition(in, in.record().failed(reason, true, in.view().leaderEpoch()), reason,
                    new MirrorAction.RemoveFetcher()));
        }
        OptionalLong differ = ((PeerLookup.Compared) in.peer()).firstDifference();
        if (differ.isEmpty() || differ.getAsLong() >= end) {
            return Optional.empty();
        }
        boolean operatorAsked = in.timers().reconciledAt() >= 0;
        return Optional.of(diverged(in, differ.getAsLong(), "This leader's log differs from the source's from offset "
                + differ.getAsLong() + (operatorAsked ? " (found on the operator's request)"
                : " (a replica elected uncleanly here?)"), "that differ from the source's", operatorAsked));
    }

    private MirrorDecision stop(MirrorInput in) {
        MirrorPartitionRecord rec = in.record();
        PartitionView view = in.view();
        MirrorAction remove = new MirrorAction.RemoveFetcher();
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
            return transition(in, rec.withLastMirrored(lme, lmo).withMinLeaderEpoch(target), "recording last mirrored "
                    + "epoch " + lme + " and offset " + lmo + "; " + epoch, remove);
        }
        OptionalLong barrier = view.producerStateBarrier();
        boolean barrierWritten = barrier.isPresent() && barrier.getAsLong() >= rec.lastMirroredOffset();
        if (!barrierWritten && view.logEndOffset() < rec.lastMirroredOffset()) {
            // a leader elected uncleanly lacks records recorded as mirrored: what it holds is what was mirrored
            int lme = view.latestLogEpoch();
            long lmo = view.logEndOffset();
            return transition(in, rec.withLastMirrored(lme, lmo), "the log now ends at " + lmo + ", before the "
                    + "recorded last mirrored offset " + rec.lastMirroredOffset() + " (records lost with a leader): "
                    + "recording last mirrored epoch " + lme + " and offset " + lmo, remove);
        }
        if (view.leaderEpoch() < rec.minLeaderEpoch()) {
            return waitForController(in, "failover", remove);
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
        return transition(in, rec.transitionTo(STOPPED, view.leaderEpoch()), "failed over at offset "
                + rec.lastMirroredOffset() + " (last mirrored epoch " + rec.lastMirroredEpoch() + "; producer-state "
                + "barrier at " + barrier.getAsLong() + "); leader epoch now " + view.leaderEpoch()
                + ", the topic is writable", remove);
    }

    private MirrorDecision retry(MirrorInput in) {
        MirrorPartitionRecord rec = in.record();
        MirrorAction remove = new MirrorAction.RemoveFetcher();
        if (rec.retryAttempt() < 0) {
            return MirrorDecision.act(in.timers(), remove);
        }
        long retryAt = in.timers().retryAtMs();
        if (retryAt < 0) { // failed under another leader (or before a restart): a full backoff from now
            return MirrorDecision.act(in.timers().retryAt(in.nowMs() + backoffMs(rec.retryAttempt())), remove);
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
        MirrorPartitionState to = fencedOr(in, retryTo);
        long end = in.view().logEndOffset();
        // a retry into MIRRORING by a leader that has not compared its log with the source's yet compares first,
        // in the same pass: the failure may have been that very comparison (a leader elected uncleanly that could
        // not reach the source), and the partition must not stand as MIRRORING, even for a pass, with a log that
        // is not the source's prefix (simulation seed 1398); the decision after it judges the comparison
        boolean compareFirst = to == MIRRORING && end > 0 && in.timers().reconciledAt() < rec.reconcileRequests();
        MirrorAction[] actions = compareFirst ? new MirrorAction[] {remove, new MirrorAction.ComparePeer(end)}
                : new MirrorAction[] {remove};
        return transition(in, new MirrorPartitionRecord(to, in.view().leaderEpoch(),
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
            return Optional.of(transition(in, rec.failed(problem.reason(), false, epoch), problem.reason()
                    + " (not retried)", remove, new MirrorAction.AbortOpenTransactions()));
        }
        if (state == FAILED && rec.retryAttempt() >= 0) {
            return Optional.of(failedWhileSourceAway(in, problem));
        }
        if (state == MIRRORING && (problem.kind() == SourceProblem.Kind.UNREACHABLE
                || problem.kind() == SourceProblem.Kind.WRONG_CLUSTER)) {
            return Optional.of(transition(in, rec.failed(problem.reason(), true, epoch), problem.reason()
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
                ? in.timers().retryAt(now + backoffMs(rec.retryAttempt())) : in.timers();
        boolean due = now >= timers.retryAtMs();
        boolean sameReason = rec.lastError().equals(Optional.of(problem.reason()));
        if (problem.kind() == SourceProblem.Kind.UNANSWERED || !due && sameReason) {
            return MirrorDecision.act(timers, remove);
        }
        MirrorPartitionRecord to = rec.failed(problem.reason(), true, in.view().leaderEpoch());
        MirrorDecision d = transition(in, to, problem.reason() + (due ? " (retry " + rec.retryAttempt()
                + " found the source still away)" : ""), remove);
        return new MirrorDecision(d.actions(), d.write(), d.reason(), false,
                d.timers().retryAt(now + backoffMs(to.retryAttempt())));
    }

    private MirrorDecision fenceAgain(MirrorInput in, int sourceEpoch) {
        MirrorPartitionRecord rec = in.record();
        if (rec.state() != MIRRORING) {
            return MirrorDecision.nothing(in.timers()); // the fetch raced a state change: nothing to fence
        }
        return transition(in, rec.transitionTo(EPOCH_FENCING, in.view().leaderEpoch())
                        .withMinLeaderEpoch(fenceTarget(in.view(), sourceEpoch)), "a source batch has epoch "
                        + sourceEpoch + " >= local leader epoch " + in.view().leaderEpoch());
    }

    private MirrorDecision fetchFailed(MirrorInput in, MirrorEvent.FetchFailed failure) {
        MirrorPartitionRecord rec = in.record();
        if (rec.state() != MIRRORING) {
            return MirrorDecision.nothing(in.timers());
        }
        return transition(in, rec.failed(failure.reason(), failure.retriable(), in.view().leaderEpoch()),
                failure.reason() + (failure.retriable() ? " (will retry)"
                        : " (not retriable: stop and start the topic)"));
    }

    /**
     * The controller raises mirror partition epochs; if it does not (no controller elected, ZooKeeper unreachable
     * from it) the partition must not wait for ever with nothing to show: after the deadline it goes FAILED with
     * the reason, retriable, so the retry schedule tries again and describe says why.
     */
    private MirrorDecision waitForController(MirrorInput in, String what, MirrorAction... actions) {
        long now = in.nowMs();
        long since = in.timers().waitingSinceMs() < 0 ? now : in.timers().waitingSinceMs();
        if (now - since < settings.stateTimeoutMs()) {
            return MirrorDecision.act(in.timers().waitingSince(since), actions);
        }
        String reason = "The " + what + " waited " + (now - since) + " ms (mirror.state.timeout.ms) for the "
                + "controller to raise the leader epoch to " + in.record().minLeaderEpoch() + "; it is still "
                + in.view().leaderEpoch() + " (is a controller elected and connected to ZooKeeper?)";
        return transition(in, in.record().failed(reason, true, in.view().leaderEpoch()), reason, actions);
    }

    /**
     * A write of {@code proposed}, with the partition's current progress, after {@code actions}; the clocks follow
     * the state: a new state stops the wait for the controller, and a retriable failure schedules its retry.
     */
    private MirrorDecision transition(MirrorInput in, MirrorPartitionRecord proposed, String reason,
                                      MirrorAction... actions) {
        MirrorPartitionState from = in.record().state();
        MirrorPartitionRecord to = proposed.withProgress(progress(in));
        if (!MirrorTransitions.isValid(from, to.state())) {
            throw new IllegalStateException("Illegal mirror transition " + from + " -> " + to.state() + ": " + reason);
        }
        MirrorTimers timers = in.timers();
        if (from != to.state()) {
            timers = timers.waitingSince(-1L).retryAt(-1L);
        }
        if (to.state() == FAILED && to.retryAttempt() >= 0 && (from != FAILED || timers.retryAtMs() < 0)) {
            timers = timers.retryAt(in.nowMs() + backoffMs(to.retryAttempt()));
        }
        return new MirrorDecision(new ArrayList<>(List.of(actions)), Optional.of(to), reason, false, timers);
    }

    /**
     * What the leader knows now: the fetcher's last source high watermark (else the recorded one), its log end. The
     * source's end is unknown (-1, so describe's lag is -1, never 0) while there is a source problem, and stays as
     * recorded while FAILED: the fetcher's last figure is from before the failure, and a retry into MIRRORING
     * must not record it as current (found with every source broker down: MIRRORING with lag 0 after 20 s).
     */
    private static MirrorProgress progress(MirrorInput in) {
        long recorded = in.record().progress().sourceHighWatermark();
        long sourceHw = in.sourceProblem().isPresent() ? MirrorProgress.UNKNOWN.sourceHighWatermark()
                : in.record().state() == FAILED ? recorded : in.sourceHighWatermark().orElse(recorded);
        return new MirrorProgress(sourceHw, in.view().logEndOffset());
    }

    /**
     * MIRRORING only at a leader epoch the controller has raised to the recorded minimum: a partition paused or
     * failed before its fencing completed fences first (found by the simulation: a resume from PAUSED mirrored at
     * an epoch no higher than the source's).
     */
    private static MirrorPartitionState fencedOr(MirrorInput in, MirrorPartitionState target) {
        return target == MIRRORING && in.view().leaderEpoch() < in.record().minLeaderEpoch() ? EPOCH_FENCING : target;
    }

    /** Above every epoch the log holds (and {@code sourceEpoch}), by the margin, never below the current epoch. */
    private int fenceTarget(PartitionView view, int sourceEpoch) {
        int held = Math.max(sourceEpoch, view.latestLogEpoch());
        return Math.max(view.leaderEpoch(), held + settings.epochMargin());
    }

    private long backoffMs(int attempt) {
        return MirrorTransitions.retryBackoffMs(attempt, settings.retryInitialMs(), settings.retryMaxMs(),
                random.nextDouble());
    }
}
