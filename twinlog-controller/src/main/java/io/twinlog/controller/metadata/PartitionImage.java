package io.twinlog.controller.metadata;

import java.util.List;

/** One partition as the broker sees it: assignment plus leadership; {@code state} is null until written. */
public record PartitionImage(int partition, List<Integer> replicas, PartitionState state) {

    public int leader() {
        return state == null ? PartitionState.NO_LEADER : state.leader();
    }

    public int leaderEpoch() {
        return state == null ? -1 : state.leaderEpoch();
    }

    public List<Integer> isr() {
        return state == null ? List.of() : state.isr();
    }
}
