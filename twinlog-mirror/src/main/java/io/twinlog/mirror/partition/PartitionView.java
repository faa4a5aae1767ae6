package io.twinlog.mirror.partition;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * What the mirror state machine may know of the local partition its broker leads, read at one moment: the leader
 * epoch the controller gave it, its log end, high watermark and epoch history, the offset of the last
 * producer-state barrier in its log (decision 24), its replicas and ISR; and, for the partition-wide truncation
 * (decision 38), where this leader last saw each follower fetch, the topic's {@code min.insync.replicas} and
 * {@code mirror.support.unclean.leader.election}, and which replicas have applied which truncation point.
 *
 * @param followerLogEnds      per follower, its log end as of its last fetch (-1: unknown since the leader's cut)
 * @param truncationsApplied   per replica (this broker included), the id of the truncation point it applied
 */
public record PartitionView(int leaderEpoch, long logEndOffset, long highWatermark, EpochHistory epochs,
                            OptionalLong producerStateBarrier, List<Integer> replicas, List<Integer> isr,
                            Map<Integer, Long> followerLogEnds, int minInsyncReplicas,
                            boolean uncleanElectionSupport, Map<Integer, Long> truncationsApplied) {
    public PartitionView {
        replicas = List.copyOf(replicas);
        isr = List.copyOf(isr);
        followerLogEnds = Map.copyOf(followerLogEnds);
        truncationsApplied = Map.copyOf(truncationsApplied);
    }

    /** A view without follower positions or truncation confirmations (min ISR 1, flag off). */
    public PartitionView(int leaderEpoch, long logEndOffset, long highWatermark, EpochHistory epochs,
                         OptionalLong producerStateBarrier, List<Integer> replicas, List<Integer> isr) {
        this(leaderEpoch, logEndOffset, highWatermark, epochs, producerStateBarrier, replicas, isr, Map.of(), 1,
                false, Map.of());
    }

    /** This view with what the cluster's metadata says of the topic's flag and the replicas' confirmations. */
    public PartitionView withCluster(boolean uncleanElectionSupport, Map<Integer, Long> truncationsApplied) {
        return new PartitionView(leaderEpoch, logEndOffset, highWatermark, epochs, producerStateBarrier, replicas,
                isr, followerLogEnds, minInsyncReplicas, uncleanElectionSupport, truncationsApplied);
    }

    /** The latest epoch the log holds, or -1 for an empty history. */
    public int latestLogEpoch() {
        return epochs.latestEpoch().orElse(-1);
    }
}
