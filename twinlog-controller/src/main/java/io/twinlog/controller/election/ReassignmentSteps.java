package io.twinlog.controller.election;

import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicAssignment.Reassignment;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The steps of moving a partition's replicas from {@code original} to {@code target} (pure): first the replica set
 * becomes target ∪ original so the new replicas start fetching; once every target replica is in the ISR, the
 * replica set becomes the target, the ISR keeps only target members, and if the leader is leaving, a target member
 * from the ISR takes over (new leader epoch). Nothing is removed before its replacement is in sync.
 */
public final class ReassignmentSteps {
    private ReassignmentSteps() {
    }

    /** The next write for one partition; empty while waiting for the new replicas to catch up. */
    public record Step(List<Integer> replicas, Optional<PartitionState> state, boolean completed) {
    }

    /**
     * The replica set while a reassignment is in progress: the target, then the original replicas that leave (as
     * Kafka lists it, and as it is written when the reassignment is accepted).
     */
    public static List<Integer> replicasDuringMove(Reassignment r) {
        List<Integer> union = new ArrayList<>(r.target());
        for (Integer o : r.original()) {
            if (!union.contains(o)) {
                union.add(o);
            }
        }
        return List.copyOf(union);
    }

    public static Optional<Step> next(List<Integer> replicas, PartitionState state, Reassignment r, Set<Integer> live) {
        List<Integer> union = replicasDuringMove(r);
        if (!replicas.containsAll(union) || !union.containsAll(replicas)) {
            return Optional.of(new Step(union, Optional.empty(), false));
        }
        if (!state.isr().containsAll(r.target())) {
            return Optional.empty();
        }
        List<Integer> isr = new ArrayList<>();
        for (Integer i : r.target()) {
            if (state.isr().contains(i)) {
                isr.add(i);
            }
        }
        int leader = state.leader();
        if (!r.target().contains(leader)) {
            leader = PartitionState.NO_LEADER;
            for (Integer t : r.target()) {
                if (isr.contains(t) && live.contains(t)) {
                    leader = t;
                    break;
                }
            }
        }
        boolean leaderChanged = leader != state.leader();
        PartitionState next = new PartitionState(leader,
                leaderChanged && leader != PartitionState.NO_LEADER ? state.leaderEpoch() + 1 : state.leaderEpoch(),
                List.copyOf(isr), state.partitionEpoch() + 1);
        return Optional.of(new Step(List.copyOf(r.target()), Optional.of(next), true));
    }

    /** Cancelling returns to the original replicas, keeping only original members in the ISR. */
    public static Step cancel(PartitionState state, Reassignment r, Set<Integer> live) {
        return next(r.original(), state, new Reassignment(r.original(), r.target()), live)
                .filter(Step::completed)
                .orElseGet(() -> {
                    List<Integer> isr = new ArrayList<>();
                    for (Integer i : r.original()) {
                        if (state.isr().contains(i)) {
                            isr.add(i);
                        }
                    }
                    int leader = r.original().contains(state.leader()) ? state.leader()
                            : isr.stream().filter(live::contains).findFirst().orElse(PartitionState.NO_LEADER);
                    if (isr.isEmpty()) {
                        isr = List.copyOf(state.isr());
                    }
                    return new Step(List.copyOf(r.original()), Optional.of(new PartitionState(leader,
                            leader != state.leader() && leader != PartitionState.NO_LEADER ? state.leaderEpoch() + 1
                                    : state.leaderEpoch(), List.copyOf(isr), state.partitionEpoch() + 1)), true);
                });
    }
}
