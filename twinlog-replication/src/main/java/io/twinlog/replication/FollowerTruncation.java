package io.twinlog.replication;

import org.apache.kafka.server.common.OffsetAndEpoch;

import java.util.Optional;

/**
 * Where a follower truncates when its leader reports a diverging epoch (KIP-320/KIP-595): pure, so the rule is
 * tested on its own.
 *
 * <p>The leader answered "your last fetched epoch E ends at offset L for me" (or is unknown: epoch -1). The
 * follower looks up the largest epoch it has that is ≤ E and that epoch's end offset F:
 * <ul>
 *   <li>same epoch: both logs agree up to min(L, F) — truncate there, done;</li>
 *   <li>an older epoch E' &lt; E: truncate to min(L, F) and fetch again with lastFetchedEpoch E', letting the leader
 *       check that older epoch (the search walks back one epoch per round trip);</li>
 *   <li>no epoch at all ≤ E, or the leader knows no epoch ≤ E: nothing is known to agree — truncate to the log
 *       start.</li>
 * </ul>
 * The high watermark alone is never used: after an unclean election records below it may differ.
 */
public final class FollowerTruncation {
    private FollowerTruncation() {
    }

    /**
     * @param leaderEpoch      epoch of the leader's diverging-epoch answer (-1 if the leader has none ≤ requested)
     * @param leaderEndOffset  end offset of that epoch on the leader
     * @param localEndForEpoch this replica's {@code endOffsetForEpoch(leaderEpoch)}
     * @param logStartOffset   this replica's log start offset
     * @param logEndOffset     this replica's log end offset
     * @return the offset to truncate to (never above the log end)
     */
    public static long truncationOffset(int leaderEpoch, long leaderEndOffset, Optional<OffsetAndEpoch> localEndForEpoch,
                                        long logStartOffset, long logEndOffset) {
        if (leaderEpoch < 0 || leaderEndOffset < 0 || localEndForEpoch.isEmpty() || localEndForEpoch.get().epoch() < 0) {
            return logStartOffset;
        }
        long agreed = Math.min(leaderEndOffset, localEndForEpoch.get().offset());
        return Math.max(logStartOffset, Math.min(agreed, logEndOffset));
    }
}
