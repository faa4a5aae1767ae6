package io.twinlog.controller.election;

import io.twinlog.controller.metadata.PartitionState;
import org.apache.kafka.common.protocol.Errors;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The controller's decisions about one partition's leadership, as pure functions of (current state, replicas,
 * cluster view, request): they return the next state to write, or nothing when nothing should change, and never do
 * I/O. The controller shell writes the result with a version check and the controller-epoch fence.
 *
 * <p>Rules (Kafka's):
 * <ul>
 *   <li>The leader always comes from the ISR (clean election), in replica order, among live brokers that are not
 *       shutting down. Only when no ISR member is alive and unclean election is allowed does a live out-of-sync
 *       replica lead, and then the ISR is that replica alone.</li>
 *   <li>A dead or shutting-down broker leaves the ISR, except that the ISR is never emptied: the last member stays
 *       (the partition is offline with leader -1) so that it can lead cleanly when it returns; a member that lost
 *       its log is not the one kept while another was in the ISR with it.</li>
 *   <li>Every leader change increments the leader epoch; every change at all increments the partition epoch.</li>
 * </ul>
 */
public final class PartitionChanges {
    private PartitionChanges() {
    }

    /** Leadership of a new partition: first live replica leads in epoch 0; the ISR is the live replicas. */
    public static PartitionState initial(List<Integer> replicas, Set<Integer> liveBrokers) {
        List<Integer> live = new ArrayList<>();
        for (Integer r : replicas) {
            if (liveBrokers.contains(r)) {
                live.add(r);
            }
        }
        if (live.isEmpty()) {
            return new PartitionState(PartitionState.NO_LEADER, 0, List.copyOf(replicas), 0);
        }
        return new PartitionState(live.get(0), 0, List.copyOf(live), 0);
    }

    /**
     * Reacts to the set of live (and shutting-down) brokers: drops unavailable brokers from the ISR and elects a
     * new leader when the current one is unavailable, or when an offline partition's ISR member came back.
     */
    public static Optional<PartitionState> onBrokersChanged(PartitionState state, List<Integer> replicas,
                                                            Set<Integer> liveBrokers, Set<Integer> shuttingDown,
                                                            boolean uncleanElectionAllowed) {
        return onBrokersChanged(state, replicas, liveBrokers, shuttingDown, uncleanElectionAllowed, Set.of());
    }

    /**
     * As {@link #onBrokersChanged(PartitionState, List, Set, Set, boolean)}, with live brokers that may lead only an
     * unclean election and only when no other live replica can: those that lost their log of the partition
     * ({@link EligibleReplicas#lost}). They hold nothing, so an out-of-sync replica with records comes first, but
     * with unclean election allowed and no one else alive, availability is what the operator chose.
     */
    public static Optional<PartitionState> onBrokersChanged(PartitionState state, List<Integer> replicas,
                                                            Set<Integer> liveBrokers, Set<Integer> shuttingDown,
                                                            boolean uncleanElectionAllowed, Set<Integer> lastResort) {
        List<Integer> isr = new ArrayList<>();
        for (Integer r : state.isr()) {
            if (available(r, liveBrokers, shuttingDown)) {
                isr.add(r);
            }
        }
        int leader = state.leader();
        boolean leaderAvailable = leader != PartitionState.NO_LEADER && available(leader, liveBrokers, shuttingDown)
                && isr.contains(leader);
        int newLeader = leader;
        boolean lastResortElected = false;
        if (!leaderAvailable) {
            newLeader = firstInReplicaOrder(replicas, isr);
            if (newLeader == PartitionState.NO_LEADER && leader != PartitionState.NO_LEADER
                    && liveBrokers.contains(leader) && shuttingDown.contains(leader) && state.isr().contains(leader)) {
                // a controlled shutdown with no other in-sync replica: keep the leader until it stops. Checked
                // before the unclean election: an in-sync replica is still alive, and Kafka never elects an
                // out-of-sync replica then (it would drop every record only the leader has)
                newLeader = leader;
                if (!isr.contains(leader)) {
                    isr.add(0, leader);
                }
            }
            if (newLeader == PartitionState.NO_LEADER && uncleanElectionAllowed) {
                newLeader = firstAvailable(replicas, liveBrokers, shuttingDown);
                if (newLeader == PartitionState.NO_LEADER) {
                    newLeader = firstAvailable(replicas, lastResort, shuttingDown);
                    lastResortElected = newLeader != PartitionState.NO_LEADER;
                }
                if (newLeader != PartitionState.NO_LEADER) {
                    isr = new ArrayList<>(List.of(newLeader));
                }
            }
        }
        if (isr.isEmpty()) {
            // never empty the ISR: keep the last members so they can lead cleanly when they return; but not a member
            // that lost its log while the others had the records (campaign seed 1: the lost broker, the partition's
            // last leader, kept as its ISR, left it offline when the two others came back with every record)
            List<Integer> previous = state.isr();
            List<Integer> others = previous.stream().filter(r -> !lastResort.contains(r)).toList();
            if (!others.isEmpty()) {
                previous = others;
            }
            isr = new ArrayList<>(newLeader != PartitionState.NO_LEADER ? List.of(newLeader) : previous);
            if (newLeader == PartitionState.NO_LEADER && leader != PartitionState.NO_LEADER
                    && previous.contains(leader)) {
                isr = new ArrayList<>(List.of(leader));
            }
        }
        if (lastResortElected) {
            // a new leadership even when it is the same broker: it leads knowingly without the records it lost,
            // and the epoch tells it so (its own leadership from before the loss it does not take up)
            return Optional.of(new PartitionState(newLeader, state.leaderEpoch() + 1, List.copyOf(isr),
                    state.partitionEpoch() + 1));
        }
        return changed(state, newLeader, isr);
    }

    /** Outcome of an operator election request. */
    public record ElectionResult(Errors error, String message, Optional<PartitionState> newState) {
        static ElectionResult error(Errors error, String message) {
            return new ElectionResult(error, message, Optional.empty());
        }
    }

    /** ElectLeaders PREFERRED: the first replica leads, if it is alive and in sync. */
    public static ElectionResult electPreferred(PartitionState state, List<Integer> replicas, Set<Integer> liveBrokers,
                                                Set<Integer> shuttingDown) {
        int preferred = replicas.get(0);
        if (state.leader() == preferred) {
            return ElectionResult.error(Errors.ELECTION_NOT_NEEDED, "Leader is already the preferred replica " + preferred);
        }
        if (!available(preferred, liveBrokers, shuttingDown) || !state.isr().contains(preferred)) {
            return ElectionResult.error(Errors.PREFERRED_LEADER_NOT_AVAILABLE, "Preferred replica " + preferred
                    + " is not " + (available(preferred, liveBrokers, shuttingDown) ? "in the ISR " + state.isr() : "alive"));
        }
        return new ElectionResult(Errors.NONE, null, changed(state, preferred, state.isr()));
    }

    /**
     * ElectLeaders UNCLEAN: when the partition has no leader, a live replica leads even if it is out of sync
     * (a clean candidate from the ISR is still preferred). Records the ISR can no longer vouch for may be lost.
     */
    public static ElectionResult electUnclean(PartitionState state, List<Integer> replicas, Set<Integer> liveBrokers,
                                              Set<Integer> shuttingDown) {
        return electUnclean(state, replicas, liveBrokers, shuttingDown, Set.of());
    }

    /** As {@link #electUnclean(PartitionState, List, Set, Set)}, a replica that lost its log last of all. */
    public static ElectionResult electUnclean(PartitionState state, List<Integer> replicas, Set<Integer> liveBrokers,
                                              Set<Integer> shuttingDown, Set<Integer> lastResort) {
        if (state.leader() != PartitionState.NO_LEADER && liveBrokers.contains(state.leader())) {
            return ElectionResult.error(Errors.ELECTION_NOT_NEEDED, "Partition has a live leader " + state.leader());
        }
        Optional<PartitionState> next = onBrokersChanged(state, replicas, liveBrokers, shuttingDown, true,
                lastResort);
        if (next.isEmpty() || next.get().leader() == PartitionState.NO_LEADER) {
            return ElectionResult.error(Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE, "No live replica among " + replicas);
        }
        return new ElectionResult(Errors.NONE, null, next);
    }

    /** Outcome of an AlterPartition (ISR change) request from a leader. */
    public record AlterResult(Errors error, Optional<PartitionState> newState) {
    }

    /**
     * A leader asks to change the ISR. Accepted only from the current leader in the current leader epoch and
     * partition epoch (fencing stale leaders and stale requests); every new member must be a live replica and the
     * leader must stay in the ISR.
     */
    public static AlterResult alterIsr(PartitionState state, List<Integer> replicas, Set<Integer> liveBrokers,
                                       int requestingBroker, int leaderEpoch, int partitionEpoch, List<Integer> newIsr) {
        if (state.leader() != requestingBroker) {
            return new AlterResult(Errors.NOT_LEADER_OR_FOLLOWER, Optional.empty());
        }
        if (leaderEpoch != state.leaderEpoch()) {
            return new AlterResult(leaderEpoch < state.leaderEpoch() ? Errors.FENCED_LEADER_EPOCH
                    : Errors.UNKNOWN_LEADER_EPOCH, Optional.empty());
        }
        if (partitionEpoch != state.partitionEpoch()) {
            return new AlterResult(Errors.INVALID_UPDATE_VERSION, Optional.empty());
        }
        if (!newIsr.contains(requestingBroker)) {
            return new AlterResult(Errors.INVALID_REQUEST, Optional.empty());
        }
        for (Integer r : newIsr) {
            if (!replicas.contains(r) || (!state.isr().contains(r) && !liveBrokers.contains(r))) {
                return new AlterResult(Errors.INELIGIBLE_REPLICA, Optional.empty());
            }
        }
        List<Integer> ordered = new ArrayList<>();
        for (Integer r : replicas) {
            if (newIsr.contains(r)) {
                ordered.add(r);
            }
        }
        Optional<PartitionState> next = changed(state, state.leader(), ordered);
        return new AlterResult(Errors.NONE, Optional.of(next.orElse(state)));
    }

    private static Optional<PartitionState> changed(PartitionState state, int leader, List<Integer> isr) {
        boolean leaderChanged = leader != state.leader();
        if (!leaderChanged && isr.equals(state.isr())) {
            return Optional.empty();
        }
        int leaderEpoch = leaderChanged && leader != PartitionState.NO_LEADER ? state.leaderEpoch() + 1
                : state.leaderEpoch();
        return Optional.of(new PartitionState(leader, leaderEpoch, List.copyOf(isr), state.partitionEpoch() + 1));
    }

    private static boolean available(int broker, Set<Integer> live, Set<Integer> shuttingDown) {
        return live.contains(broker) && !shuttingDown.contains(broker);
    }

    private static int firstInReplicaOrder(List<Integer> replicas, List<Integer> candidates) {
        for (Integer r : replicas) {
            if (candidates.contains(r)) {
                return r;
            }
        }
        return PartitionState.NO_LEADER;
    }

    private static int firstAvailable(List<Integer> replicas, Set<Integer> live, Set<Integer> shuttingDown) {
        for (Integer r : replicas) {
            if (available(r, live, shuttingDown)) {
                return r;
            }
        }
        return PartitionState.NO_LEADER;
    }
}
