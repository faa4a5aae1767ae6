package io.twinlog.mirror.partition;

import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;

import java.util.Optional;

/**
 * Whether a decision of {@link MirrorPartitionMachine} records a failback: in LOG_TRUNCATION, a truncation point
 * decided from the source's last mirrored record of this cluster (the source mirrored this log before, so this
 * cluster now mirrors back from it). Pure, like the machine beside it; the shell counts a failback when the
 * record of such a decision is written ({@code ClusterMirror} {@code Failbacks}), not each time the source is asked:
 * the source may be asked again within one failback (a refused write, a comparison that failed and was retried, a
 * new leader before the point was recorded), but a recorded point is awaited, not decided again, until the next
 * start.
 *
 * <p>Not a failback: a point decided without an answer of the source (an empty log, whose point is 0 without
 * asking), one from a source with no record of this cluster (a first start: everything is mirrored again), one of
 * a recovery from a source divergence (ULE_RECOVERY), and a decision that only asks or compares.
 */
public final class FailbackDecision {
    private FailbackDecision() {
    }

    /**
     * @param from     the partition's recorded state the decision was made in
     * @param decision what the machine decided
     * @param peer     the peer's answer as the driver had it when the decision was made
     */
    public static boolean recordsFailback(MirrorPartitionState from, MirrorDecision decision, PeerLookup peer) {
        Optional<LastMirrored> lastMirrored = peer instanceof PeerLookup.Answered a ? a.lastMirrored()
                : peer instanceof PeerLookup.Compared c ? c.lastMirrored() : Optional.empty();
        return from == MirrorPartitionState.LOG_TRUNCATION && decision.write().isPresent() && lastMirrored.isPresent()
                && decision.actions().stream().anyMatch(MirrorAction.ApplyTruncationPoint.class::isInstance);
    }
}
