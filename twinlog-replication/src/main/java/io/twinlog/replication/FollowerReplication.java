package io.twinlog.replication;

import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.Optional;

/**
 * The leader's side of replication: a follower's fetch checked (epochs, membership, divergence), read up to the
 * log end and recorded, which may move the high watermark or propose the follower into the ISR; and the periodic
 * proposal of removing followers that have not caught up. Proposals go to the controller through the
 * {@link IsrChangeSender}, one at a time ({@link FollowerTracker}). Takes the partition's leader/ISR read lock, as
 * before. Split from {@link Partition}, which hands these calls here; logs under its logger.
 */
final class FollowerReplication {
    private static final Logger log = LoggerFactory.getLogger(Partition.class);

    private final Partition p;
    /** The partition's log (final there). */
    private final UnifiedLog log_;

    FollowerReplication(Partition p) {
        this.p = p;
        this.log_ = p.log();
    }

    /**
     * Leader side of a follower's fetch: validates epochs, reports divergence (the follower's last fetched epoch
     * ends earlier here, or is unknown), reads up to the log end, and records the follower's progress.
     */
    Partition.FollowerFetch readForFollower(int replicaId, long brokerEpoch, long fetchOffset,
                                         Optional<Integer> currentLeaderEpoch, Optional<Integer> lastFetchedEpoch,
                                         int maxBytes, boolean minOneMessage, long nowMs,
                                         IsrChangeSender isrChanges) throws IOException {
        p.lock().readLock().lock();
        try {
            p.checkLeader();
            p.checkLeaderEpoch(currentLeaderEpoch);
            if (!p.replicas().contains(replicaId)) {
                throw new NotLeaderOrFollowerException("Broker " + replicaId + " is not a replica of "
                        + p.topicPartition() + " (replicas " + p.replicas() + ")");
            }
            if (lastFetchedEpoch.isPresent() && lastFetchedEpoch.get() >= 0) {
                Optional<OffsetAndEpoch> diverging = DivergingEpoch.forFollower(lastFetchedEpoch.get(), fetchOffset,
                        log_.endOffsetForEpoch(lastFetchedEpoch.get()), log_.latestEpoch(), log_.logEndOffset());
                if (diverging.isPresent()) {
                    return new Partition.FollowerFetch(null, Optional.of(new FetchResponseData.EpochEndOffset()
                            .setEpoch(diverging.get().epoch()).setEndOffset(diverging.get().offset())),
                            log_.highWatermark(), log_.logStartOffset(), log_.logEndOffset(), false);
                }
            }
            long leaderLogEndOffset = log_.logEndOffset();
            FetchDataInfo info = log_.read(fetchOffset, maxBytes, FetchIsolation.LOG_END, minOneMessage);
            boolean highWatermarkMoved = updateFollowerFetchState(replicaId, brokerEpoch, fetchOffset,
                    leaderLogEndOffset, nowMs, isrChanges);
            return new Partition.FollowerFetch(info, Optional.empty(), log_.highWatermark(), log_.logStartOffset(),
                    leaderLogEndOffset, highWatermarkMoved);
        } finally {
            p.lock().readLock().unlock();
        }
    }

    private boolean updateFollowerFetchState(int replicaId, long brokerEpoch, long fetchOffset,
                                             long leaderLogEndOffset, long nowMs, IsrChangeSender isrChanges) {
        List<Integer> expandTo = p.followers().onFollowerFetch(replicaId, brokerEpoch, fetchOffset,
                leaderLogEndOffset, nowMs, p.isr(), () -> log_.highWatermark(), p::leaderEpochStartOffset,
                () -> isrChanges.isEligibleForIsr(replicaId, brokerEpoch));
        if (expandTo != null) {
            // a proposal: the controller logs the change it commits ("ISR of ..."), this line says why
            log.info("{}Proposing ISR {} -> {} to the controller: follower {} caught up to offset {} (high "
                    + "watermark {})", p.logPrefix(),
                    p.isr(), expandTo, replicaId, fetchOffset, log_.highWatermark());
            isrChanges.submit(p, p.leaderEpoch(), p.partitionEpoch(), expandTo);
        }
        return p.maybeIncrementHighWatermark();
    }

    /**
     * Proposes removing followers that have not caught up for {@code maxLagMs}. Called periodically on the
     * leader.
     */
    void maybeShrinkIsr(long nowMs, long maxLagMs, IsrChangeSender isrChanges) {
        p.lock().readLock().lock();
        try {
            if (!p.isLeader()) {
                return;
            }
            FollowerTracker.Shrink shrink = p.followers().proposeShrink(p.isr(), nowMs, maxLagMs,
                    () -> log_.logEndOffset());
            if (shrink != null) {
                log.info("{}Proposing ISR {} -> {} to the controller: followers {} not caught up for {} ms "
                        + "(leader end offset {}, "
                        + "high watermark {}, follower states {})", p.logPrefix(), p.isr(), shrink.shrinkTo(),
                        shrink.lagging(),
                        maxLagMs, log_.logEndOffset(), log_.highWatermark(), p.followers().states());
                isrChanges.submit(p, p.leaderEpoch(), p.partitionEpoch(), shrink.shrinkTo());
            }
        } finally {
            p.lock().readLock().unlock();
        }
    }
}
