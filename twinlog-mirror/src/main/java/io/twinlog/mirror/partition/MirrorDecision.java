package io.twinlog.mirror.partition;

import io.twinlog.mirror.store.MirrorPartitionRecord;

import java.util.List;
import java.util.Optional;

/**
 * The outcome of one decision: actions for the shell to run, in order, then the record to write (version-checked,
 * before anything else acts on it), why, and the partition's clocks afterwards.
 *
 * @param actions  to run first, in order
 * @param write    the next durable record, if it changes
 * @param reason   why (logged with a state change or an update; empty for a progress-only write or nothing)
 * @param progressOnly the write only refreshes the recorded progress (not logged)
 * @param timers   the clocks to keep
 */
public record MirrorDecision(List<MirrorAction> actions, Optional<MirrorPartitionRecord> write, String reason,
                             boolean progressOnly, MirrorTimers timers) {
    public MirrorDecision {
        actions = List.copyOf(actions);
    }

    static MirrorDecision nothing(MirrorTimers timers) {
        return new MirrorDecision(List.of(), Optional.empty(), "", false, timers);
    }

    static MirrorDecision act(MirrorTimers timers, MirrorAction... actions) {
        return new MirrorDecision(List.of(actions), Optional.empty(), "", false, timers);
    }

    /** The same decision with {@code timers} as the clocks to keep. */
    MirrorDecision withTimers(MirrorTimers timers) {
        return new MirrorDecision(actions, write, reason, progressOnly, timers);
    }

    /** Whether the shell must decide again after running the actions (the partition or peer answer changed). */
    public boolean decideAgain() {
        return actions.stream().anyMatch(MirrorAction::changesView);
    }
}
