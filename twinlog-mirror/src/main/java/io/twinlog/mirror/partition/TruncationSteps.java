package io.twinlog.mirror.partition;

import io.twinlog.common.mirror.TruncationPoints;
import io.twinlog.mirror.LastMirroredTruncation;
import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorTruncation;
import io.twinlog.mirror.store.PointInTimeOutcome;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.random.RandomGenerator;

import static io.twinlog.common.mirror.MirrorPartitionState.EPOCH_FENCING;
import static io.twinlog.common.mirror.MirrorPartitionState.MIRRORING;
import static io.twinlog.common.mirror.MirrorPartitionState.ULE_RECOVERY;

/**
 * The {@link MirrorPartitionMachine}'s steps that cut a log, pure like it: LOG_TRUNCATION (the failback's point,
 * decided with the peer, applied by the leader, recorded and awaited from the replicas that must take part),
 * ULE_RECOVERY, and a divergence from the source (followed, or reported FAILED with the operator's two choices). The
 * rules are in the machine's Javadoc; the truncation point ids are drawn from the machine's random source, so a
 * seeded run replays. Split from the machine, which dispatches to these by state and event.
 */
final class TruncationSteps {
    private final MirrorSteps steps;
    private final MirrorSettings settings;
    private final RandomGenerator random;

    TruncationSteps(MirrorSteps steps, MirrorSettings settings, RandomGenerator random) {
        this.steps = steps;
        this.settings = settings;
        this.random = random;
    }

    /**
     * LOG_TRUNCATION, partition-wide (decision 38): first the point is decided on the leader (the end of the
     * peer's last mirrored epoch in this log, never past its last mirrored offset; 0 without such a record), the
     * leader's own log is cut to it and it is recorded; then the partition waits until the replicas that must take
     * part have applied it explicitly (their brokers say so through the metadata) and caught up: the ISR, with
     * min.insync.replicas met, or with {@code mirror.support.unclean.leader.election} every assigned replica, back
     * in the ISR. Nothing is appended meanwhile, so the leader's log is the point's prefix throughout.
     */
    MirrorDecision truncate(MirrorInput in) {
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
        long backoffMs = steps.backoffMs(next.retryAttempt());
        MirrorDecision d = steps.transition(in, next, "no truncation point decided, nothing cut: " + failed.failure() + ": "
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
        return steps.transition(in, base.withTruncation(base.truncation().with(new TruncationPoints.Point(id, to),
                        in.view().logEndOffset() - to)),
                "truncation point " + id + " at offset " + to + " for every replica (" + why + ")",
                actions.toArray(new MirrorAction[0]));
    }
    /**
     * ULE_RECOVERY: the source diverged and this cluster follows it (the flag, or the operator's start after a
     * FAILED divergence): the proposed point is recorded and awaited like LOG_TRUNCATION's, then fencing.
     */
    MirrorDecision recover(MirrorInput in) {
        MirrorPartitionRecord rec = in.record();
        if (rec.truncation().pending()) {
            return awaitTruncation(in, rec.truncation());
        }
        long proposed = rec.truncation().proposed();
        if (proposed >= 0) {
            return recordPoint(in, rec, proposed, "the source diverged at offset " + proposed
                    + ": what this cluster holds from there is cut to follow the source");
        }
        return steps.transition(in, rec.transitionTo(EPOCH_FENCING, in.view().leaderEpoch())
                .withMinLeaderEpoch(steps.fenceTarget(in.view(), -1)), "nothing left to recover");
    }
    /**
     * The source no longer holds what this cluster mirrored (an unclean leader election there). The point both
     * still agree on is Kafka's follower rule: the lower of where the source's epoch ends and where the same (or
     * the largest lower) epoch ends here.
     */
    MirrorDecision sourceDiverged(MirrorInput in, MirrorEvent.SourceDiverged d) {
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
            return steps.transition(in, in.record().failed(reason, true, view.leaderEpoch()), reason,
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
    MirrorDecision diverged(MirrorInput in, long to, String cause, String what, boolean consent) {
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
        return steps.transition(in, rec.failed(reason, false, view.leaderEpoch()).withPreviousState(ULE_RECOVERY)
                .withTruncation(rec.truncation().proposing(to)), reason, remove);
    }
    /**
     * A failover to a point in time (STOPPING): the log is cut at {@code cut} on every replica as a failback's is, by
     * a truncation point applied first by the leader after the tail's copy to the quarantine; the partition stays
     * STOPPING, and what the cut removes goes into the record's {@code pointInTime}.
     */
    MirrorDecision cutAtTime(MirrorInput in, TimeCut cut) {
        MirrorPartitionRecord rec = in.record();
        // the records are not counted (-1): the offsets say what goes, and the quarantine copy counts what it copied
        PointInTimeOutcome outcome = rec.pointInTime().cut(cut.offset(), cut.logEnd(), -1L, cut.keptTimestamp());
        return recordPoint(in, rec.withPointInTime(outcome), cut.offset(), "failover to the point in time "
                + Instant.ofEpochMilli(cut.atMs()) + ": offsets " + cut.offset() + " to " + (cut.logEnd() - 1)
                + " were mirrored after it", new MirrorAction.RemoveFetcher());
    }

    /** The point-in-time cut of a failover awaited from the replicas (STOPPING goes on once they hold it). */
    MirrorDecision awaitCut(MirrorInput in, MirrorTruncation truncation) {
        return awaitTruncation(in, truncation, false);
    }

    private MirrorDecision awaitTruncation(MirrorInput in, MirrorTruncation truncation) {
        return awaitTruncation(in, truncation, true);
    }

    /** {@code thenFence}: a failback's truncation goes on to EPOCH_FENCING; a failover's cut stays STOPPING. */
    private MirrorDecision awaitTruncation(MirrorInput in, MirrorTruncation truncation, boolean thenFence) {
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
        if (missing.isEmpty() && !thenFence) {
            return steps.transition(in, in.record().withTruncation(truncation.appliedBy(everyReplica)),
                    "truncation point " + point.id() + " at offset " + point.offset() + " applied by "
                    + (everyReplica ? "every replica " : "the ISR ") + required + "; the failover goes on");
        }
        if (missing.isEmpty()) {
            return steps.transition(in, in.record().withTruncation(truncation.appliedBy(everyReplica))
                    .transitionTo(EPOCH_FENCING, view.leaderEpoch()).withMinLeaderEpoch(steps.fenceTarget(view, -1)), "truncation point " + point.id()
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
        return steps.transition(in, in.record().failed(reason, !everyReplica, view.leaderEpoch()), reason);
    }
}
