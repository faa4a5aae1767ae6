package io.twinlog.controller;

import io.twinlog.controller.decisions.StateChange;
import io.twinlog.controller.metadata.PartitionState;
import org.slf4j.Logger;

import java.util.List;

/**
 * What the controller reports of partition-state changes once they are durable: one log line per change (INFO;
 * an unclean election WARN, naming what may be lost) and the elections among a written batch, for Kafka's
 * election metrics. Pure apart from the logger given; split from {@link Controller}.
 */
final class WrittenChanges {
    /** The elections in one written batch: whether any moved a leadership to a new leader, how many uncleanly. */
    record Elections(boolean elected, int unclean) {
    }

    private WrittenChanges() {
    }

    /**
     * The elections among {@code changes}: a change that moved a leadership to another broker is one (a partition
     * left without a leader is not), unclean if the new leader was not in the previous ISR.
     */
    static Elections elections(List<StateChange> changes) {
        boolean elected = false;
        int unclean = 0;
        for (StateChange c : changes) {
            boolean newLeader = c.kind() == StateChange.Kind.LEADERSHIP && c.next().leader() != PartitionState.NO_LEADER
                    && c.previous().map(from -> from.leader() != c.next().leader()).orElse(false);
            if (newLeader) {
                elected = true;
                if (c.unclean()) {
                    unclean++;
                }
            }
        }
        return new Elections(elected, unclean);
    }

    /** Logs one change that committed. */
    static void log(Logger log, String logPrefix, StateChange c) {
        PartitionState to = c.next();
        switch (c.kind()) {
            case INITIAL -> log.info("{}Initial leadership of {}: leader {} epoch {} ISR {}", logPrefix, c.partition(),
                    to.leader(), to.leaderEpoch(), to.isr());
            case MIRROR_EPOCH_BUMP -> log.info("{}Leader epoch of mirror partition {}: {} -> {} (leader {} unchanged; "
                    + "{})", logPrefix, c.partition(), c.previous().map(PartitionState::leaderEpoch).orElse(-1),
                    to.leaderEpoch(), to.leader(), c.reason());
            case LEADERSHIP -> {
                PartitionState from = c.previous().orElseThrow();
                if (from.leader() == to.leader()) {
                    log.info("{}ISR of {}: {} -> {} (leader {} epoch {}, {})", logPrefix, c.partition(), from.isr(),
                            to.isr(), to.leader(), to.leaderEpoch(), c.reason());
                } else if (c.unclean()) {
                    log.warn("{}UNCLEAN leader election for {}: leader {} -> {} in epoch {} (no in-sync replica was "
                            + "alive; records not on broker {} are lost), ISR {} -> {} ({})", logPrefix,
                            c.partition(), from.leader(), to.leader(), to.leaderEpoch(), to.leader(), from.isr(),
                            to.isr(), c.reason());
                } else {
                    log.info("{}Leader of {}: {} -> {} in epoch {}, ISR {} -> {} ({})", logPrefix, c.partition(),
                            from.leader(), to.leader(), to.leaderEpoch(), from.isr(), to.isr(), c.reason());
                }
            }
        }
    }
}
