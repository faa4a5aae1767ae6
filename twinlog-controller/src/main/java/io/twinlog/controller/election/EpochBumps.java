package io.twinlog.controller.election;

import io.twinlog.controller.metadata.PartitionState;

import java.util.Optional;

/**
 * Raising a partition's leader epoch without changing its leader (pure). Mirror partitions need it twice: before
 * mirroring and whenever a source batch's epoch reaches the local one (the destination's epoch must stay above
 * every mirrored source epoch, DLE ≥ SLE), and at failover, so that records written locally afterwards carry an
 * epoch above the last mirrored one.
 */
public final class EpochBumps {
    private EpochBumps() {
    }

    /** The new state, or empty if the partition has no leader or its epoch already reaches {@code minLeaderEpoch}. */
    public static Optional<PartitionState> bump(PartitionState state, int minLeaderEpoch) {
        if (state.leader() == PartitionState.NO_LEADER || state.leaderEpoch() >= minLeaderEpoch) {
            return Optional.empty();
        }
        return Optional.of(new PartitionState(state.leader(), minLeaderEpoch, state.isr(), state.partitionEpoch() + 1));
    }
}
