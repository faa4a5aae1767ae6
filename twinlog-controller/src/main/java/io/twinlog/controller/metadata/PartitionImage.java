package io.twinlog.controller.metadata;

import java.util.List;
import java.util.Set;

/**
 * One partition as the broker sees it: assignment plus leadership; {@code state} is null until the controller has
 * written it. {@code stateVersion} is the ZooKeeper version of the state node, for the controller's conditional
 * writes.
 */
public record PartitionImage(int partition, List<Integer> replicas, PartitionState state, int stateVersion) {

    public int leader() {
        return state == null ? PartitionState.NO_LEADER : state.leader();
    }

    public int leaderEpoch() {
        return state == null ? -1 : state.leaderEpoch();
    }

    public List<Integer> isr() {
        return state == null ? List.of() : state.isr();
    }

    /** The leader, if it is one of the live brokers; else -1 (clients see LEADER_NOT_AVAILABLE). */
    public int liveLeader(Set<Integer> liveBrokers) {
        int l = leader();
        return l >= 0 && liveBrokers.contains(l) ? l : PartitionState.NO_LEADER;
    }
}
