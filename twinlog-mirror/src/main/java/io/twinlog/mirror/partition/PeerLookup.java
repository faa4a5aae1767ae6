package io.twinlog.mirror.partition;

import io.twinlog.mirror.LastMirroredTruncation.LastMirrored;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * What the source (the peer) answered when asked what it last mirrored from this cluster (LastMirroredEpochs), for
 * the LOG_TRUNCATION of a failback: not asked yet, a failure to get an answer one can trust, or its answer (empty
 * when it has no record). Only an {@link Answered} (or {@link Compared}) may lead to a cut: a {@link Failed} is a
 * doubt, and a doubt cuts nothing (issue 25, point 2).
 */
public sealed interface PeerLookup {
    PeerLookup NOT_ASKED = new NotAsked();

    record NotAsked() implements PeerLookup {
    }

    /** Why the peer could not be asked or compared with; the partition keeps its log and asks again later. */
    enum Failure {
        /** The peer accepted a connection (or none was set up) but did not answer in time. */
        TIMEOUT,
        /** The peer refused the connection or closed it before answering. */
        DISCONNECTED,
        /** TLS or SASL authentication to the peer failed. */
        AUTHENTICATION,
        /** The peer refused to say: the mirror's principal there lacks a right. */
        AUTHORIZATION,
        /** The peer at the mirror's address is not the cluster the mirror recorded as its source. */
        WRONG_CLUSTER,
        /** Anything else: an error answer, an answer that does not parse, a bad client config. */
        ERROR
    }

    /** The peer could not be asked, or its answer cannot be trusted; {@code reason} is for the operator. */
    record Failed(Failure failure, String reason) implements PeerLookup {
    }

    /**
     * The peer answered: {@code lastMirrored} is its record, or empty when it has none — it serves
     * LastMirroredEpochs and has no record of the partition, or it does not serve the API at all (an Apache Kafka
     * cluster, as its ApiVersions answer says).
     */
    record Answered(Optional<LastMirrored> lastMirrored) implements PeerLookup {
    }

    /**
     * The answer, and where this log and the peer's first differ below the point it gives ({@code firstDifference},
     * empty when they agree there): the reconciliation of issue 12, point 4.
     */
    record Compared(Optional<LastMirrored> lastMirrored, OptionalLong firstDifference) implements PeerLookup {
    }
}
