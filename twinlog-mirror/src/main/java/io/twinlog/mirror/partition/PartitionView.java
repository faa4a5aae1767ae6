package io.twinlog.mirror.partition;

import java.util.List;
import java.util.OptionalLong;

/**
 * What the mirror state machine may know of the local partition its broker leads, read at one moment: the leader
 * epoch the controller gave it, its log end, high watermark and epoch history, the offset of the last
 * producer-state barrier in its log (decision 24), its replicas and ISR.
 */
public record PartitionView(int leaderEpoch, long logEndOffset, long highWatermark, EpochHistory epochs,
                            OptionalLong producerStateBarrier, List<Integer> replicas, List<Integer> isr) {
    public PartitionView {
        replicas = List.copyOf(replicas);
        isr = List.copyOf(isr);
    }

    /** The latest epoch the log holds, or -1 for an empty history. */
    public int latestLogEpoch() {
        return epochs.latestEpoch().orElse(-1);
    }
}
