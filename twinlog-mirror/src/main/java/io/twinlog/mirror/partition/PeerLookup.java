package io.twinlog.mirror.partition;

import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;

import java.util.Optional;

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
}
