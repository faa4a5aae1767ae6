package io.twinlog.mirror.partition;

import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.MirrorTransitions;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorProgress;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.random.RandomGenerator;

import static io.twinlog.common.mirror.MirrorPartitionState.EPOCH_FENCING;
import static io.twinlog.common.mirror.MirrorPartitionState.FAILED;
import static io.twinlog.common.mirror.MirrorPartitionState.MIRRORING;

/**
 * What every step of the {@link MirrorPartitionMachine} shares, pure like it: the one guarded transition (legal by
 * {@link MirrorTransitions}, with the partition's progress, the clocks following the state), the wait for the
 * controller with its deadline, the epoch a fencing targets, and the retry backoff (jittered by the machine's
 * random source). Split from the machine, which reads as the state machine: a state, the step it takes.
 */
final class MirrorSteps {
    private final MirrorSettings settings;
    private final RandomGenerator random;

    MirrorSteps(MirrorSettings settings, RandomGenerator random) {
        this.settings = settings;
        this.random = random;
    }

    /**
     * The controller raises mirror partition epochs; if it does not (no controller elected, ZooKeeper unreachable
     * from it) the partition must not wait for ever with nothing to show: after the deadline it goes FAILED with
     * the reason, retriable, so the retry schedule tries again and describe says why.
     */
    MirrorDecision waitForController(MirrorInput in, String what, MirrorAction... actions) {
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
    MirrorDecision transition(MirrorInput in, MirrorPartitionRecord proposed, String reason,
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
     * What the leader knows now: the fetcher's last source high watermark (else the recorded one), its log end, its
     * newest mirrored timestamp and mirrored-up-to time (else the recorded ones). The
     * source's end is unknown (-1, so describe's lag is -1, never 0) while there is a source problem, and stays as
     * recorded while FAILED: the fetcher's last figure is from before the failure, and a retry into MIRRORING
     * must not record it as current (found with every source broker down: MIRRORING with lag 0 after 20 s).
     */
    static MirrorProgress progress(MirrorInput in) {
        MirrorProgress rec = in.record().progress();
        long recorded = rec.sourceHighWatermark();
        long sourceHw = in.sourceProblem().isPresent() ? MirrorProgress.UNKNOWN.sourceHighWatermark()
                : in.record().state() == FAILED ? recorded : in.sourceHighWatermark().orElse(recorded);
        // the times stay as the leader last knew them whatever the source's state: a source down does not make
        // what was copied newer or older, the RPO grows by itself with the clock (decision 122)
        MirroredTime time = in.mirroredTime().orElse(new MirroredTime(rec.newestMirroredTimestamp(),
                rec.mirroredUpToMs()));
        return new MirrorProgress(sourceHw, in.view().logEndOffset(), time.newestTimestamp(), time.mirroredUpToMs());
    }
    /**
     * MIRRORING only at a leader epoch the controller has raised to the recorded minimum: a partition paused or
     * failed before its fencing completed fences first (found by the simulation: a resume from PAUSED mirrored at
     * an epoch no higher than the source's).
     */
    static MirrorPartitionState fencedOr(MirrorInput in, MirrorPartitionState target) {
        return target == MIRRORING && in.view().leaderEpoch() < in.record().minLeaderEpoch() ? EPOCH_FENCING : target;
    }
    /** Above every epoch the log holds (and {@code sourceEpoch}), by the margin, never below the current epoch. */
    int fenceTarget(PartitionView view, int sourceEpoch) {
        int held = Math.max(sourceEpoch, view.latestLogEpoch());
        return Math.max(view.leaderEpoch(), held + settings.epochMargin());
    }
    long backoffMs(int attempt) {
        return MirrorTransitions.retryBackoffMs(attempt, settings.retryInitialMs(), settings.retryMaxMs(),
                random.nextDouble());
    }
}
