package io.twinlog.mirror;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * Where a partition that starts mirroring from a peer must cut its own log (LOG_TRUNCATION), given what the peer
 * recorded when it failed over from this cluster: its last mirrored epoch (LME) and offset (LMO).
 *
 * <p>Failback: the peer holds this cluster's log up to the LMO, in epochs up to the LME, and its own records after
 * that. What this cluster wrote in the LME after the peer's last fetch, or in any later epoch, the peer never had:
 * it is cut. So the cut is at the end of the LME in the local epoch history, and never past the LMO (with clean
 * elections the two agree). With no record from the peer (it never mirrored from us, or cannot say) the only safe
 * point is 0: everything is mirrored again.
 */
public final class LastMirroredTruncation {
    private LastMirroredTruncation() {
    }

    /**
     * @param localLogEnd      this replica's log end offset
     * @param lastMirrored     the peer's LME and LMO for this partition, if it has them
     * @param localEndOfEpoch  this replica's end offset of the LME (the start of the next epoch, or the log end),
     *                         empty if the local epoch history has no epoch at or below it
     * @return the offset to truncate to (the log keeps everything below it)
     */
    public static long truncationOffset(long localLogEnd, Optional<LastMirrored> lastMirrored,
                                        OptionalLong localEndOfEpoch) {
        if (lastMirrored.isEmpty() || localEndOfEpoch.isEmpty()) {
            return 0L;
        }
        long offset = Math.min(lastMirrored.get().offset(), localEndOfEpoch.getAsLong());
        return Math.max(0L, Math.min(offset, localLogEnd));
    }

    /** The peer's record of the last epoch and offset it mirrored from this cluster. */
    public record LastMirrored(int epoch, long offset) {
    }
}
