package io.twinlog.mirror.partition;

import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * What the source (the peer) answered when asked what it last mirrored from this cluster (LastMirroredEpochs), for
 * the LOG_TRUNCATION of a failback: not asked yet, unreachable, or its answer (empty when it has no record).
 */
public sealed interface PeerLookup {
    PeerLookup NOT_ASKED = new NotAsked();

    record NotAsked() implements PeerLookup {
    }

    record Unreachable(String reason) implements PeerLookup {
    }

    record Answered(Optional<LastMirrored> lastMirrored) implements PeerLookup {
    }

    /**
     * The answer, and where this log and the peer's first differ below the point it gives ({@code firstDifference},
     * empty when they agree there): the reconciliation of issue 12, point 4.
     */
    record Compared(Optional<LastMirrored> lastMirrored, OptionalLong firstDifference) implements PeerLookup {
    }
}
