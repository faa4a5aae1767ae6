package io.twinlog.replication;

import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.server.common.OffsetAndEpoch;

import java.util.Optional;

/**
 * The leader's answer to a follower's fetch that carries the epoch of its last fetched batch (KIP-320): empty if the
 * follower's log agrees with the leader's up to its fetch offset, else the diverging epoch and where it ends on the
 * leader, from which {@link FollowerTruncation} picks the follower's truncation point. Pure.
 *
 * <p>Kafka's lookup ({@code endOffsetForEpoch}) has no answer when the follower's epoch is above every epoch the
 * leader holds, because in one cluster the leader's own epoch is always the largest. A mirror partition's leader
 * breaks that: its epoch history is its source's, and after a failback truncation it may hold only epochs below
 * those its followers still have (or none at all). Answering "no divergence" there would leave the followers'
 * old tails in place for good; so the leader answers with its latest epoch ending at its log end, or, with no epoch
 * at all, the follower's epoch ending at the leader's log end — both send the follower back to what they share.
 */
public final class DivergingEpoch {
    private DivergingEpoch() {
    }

    /**
     * The same question asked by a reader that is not a replica and sends the epoch of its last fetched batch: a
     * mirror fetcher of another cluster (Kafka's own answer, which KIP-1279's destinations rely on to see a source's
     * unclean election; Kafka's consumers do not send the epoch). Kafka's rule, without the mirror-leader cases of
     * {@link #forFollower}: the largest epoch here at or below the reader's, where it ends, if that is a lower epoch
     * or ends before the reader's fetch offset.
     *
     * @throws OffsetOutOfRangeException when this log holds no epoch at or below the reader's
     */
    public static Optional<OffsetAndEpoch> forReader(int lastFetchedEpoch, long fetchOffset,
                                                     Optional<OffsetAndEpoch> endForEpoch) {
        OffsetAndEpoch end = endForEpoch.orElseThrow(() -> new OffsetOutOfRangeException("Could not determine the "
                + "end offset of the last fetched epoch " + lastFetchedEpoch + " in this log"));
        if (end.epoch() < lastFetchedEpoch || end.offset() < fetchOffset) {
            return Optional.of(end);
        }
        return Optional.empty();
    }

    /**
     * @param lastFetchedEpoch the epoch of the follower's last batch (≥ 0)
     * @param fetchOffset      the follower's log end offset
     * @param endForEpoch      the leader's {@code endOffsetForEpoch(lastFetchedEpoch)} (Kafka semantics)
     * @param latestEpoch      the latest epoch in the leader's history, if any
     * @param logEndOffset     the leader's log end offset
     * @return the diverging epoch and its end offset on the leader, or empty if the logs agree
     */
    public static Optional<OffsetAndEpoch> forFollower(int lastFetchedEpoch, long fetchOffset,
                                                       Optional<OffsetAndEpoch> endForEpoch,
                                                       Optional<Integer> latestEpoch, long logEndOffset) {
        if (endForEpoch.isPresent()) {
            OffsetAndEpoch end = endForEpoch.get();
            if (end.epoch() == lastFetchedEpoch && end.offset() >= fetchOffset) {
                return Optional.empty();
            }
            return Optional.of(end);
        }
        if (latestEpoch.isPresent() && latestEpoch.get() < lastFetchedEpoch) {
            return Optional.of(new OffsetAndEpoch(logEndOffset, latestEpoch.get()));
        }
        return Optional.of(new OffsetAndEpoch(logEndOffset, lastFetchedEpoch));
    }
}
