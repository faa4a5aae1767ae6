package io.twinlog.replication;

import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogOffsetMetadata;
import org.apache.kafka.storage.internals.log.LogOffsetSnapshot;
import org.apache.kafka.storage.internals.log.OffsetResultHolder;

import org.apache.kafka.storage.internals.log.UnifiedLog;

import java.io.IOException;
import java.util.Optional;

/**
 * A partition leader's answers to readers: a consumer's fetch (up to the high watermark or the last stable offset,
 * a divergence reported by epoch), ListOffsets by timestamp within what the reader may read, OffsetsForLeaderEpoch.
 * Each takes the partition's leader/ISR read lock and fences the caller's leader epoch, as before. Split from
 * {@link Partition}, which hands these calls here.
 */
final class LeaderReads {

    private final Partition p;
    /** The partition's log (final there). */
    private final UnifiedLog log_;

    LeaderReads(Partition p) {
        this.p = p;
        this.log_ = p.log();
    }

    /** Reads for a consumer (isolation HIGH_WATERMARK or TXN_COMMITTED) from the leader. */
    Partition.ReadResult read(long fetchOffset, Optional<Integer> currentLeaderEpoch,
                              Optional<Integer> lastFetchedEpoch,
                           int maxBytes, FetchIsolation isolation, boolean minOneMessage) throws IOException {
        p.lock().readLock().lock();
        try {
            p.checkLeader();
            p.checkLeaderEpoch(currentLeaderEpoch);
            LogOffsetSnapshot snapshot = log_.fetchOffsetSnapshot();
            Optional<OffsetAndEpoch> diverging = Optional.empty();
            if (lastFetchedEpoch.isPresent() && lastFetchedEpoch.get() >= 0) {
                if (fetchOffset < snapshot.logStartOffset()) {
                    throw new OffsetOutOfRangeException("Fetch offset " + fetchOffset + " is below the log start "
                            + snapshot.logStartOffset() + " of " + p.topicPartition());
                }
                diverging = DivergingEpoch.forReader(lastFetchedEpoch.get(), fetchOffset,
                        log_.endOffsetForEpoch(lastFetchedEpoch.get()));
            }
            FetchDataInfo info = diverging.isPresent() ? new FetchDataInfo(new LogOffsetMetadata(fetchOffset),
                    MemoryRecords.EMPTY) : log_.read(fetchOffset, maxBytes, isolation, minOneMessage);
            return new Partition.ReadResult(info, snapshot.highWatermark().messageOffset,
                    snapshot.lastStableOffset().messageOffset,
                    snapshot.logStartOffset(), snapshot.logEndOffset().messageOffset,
                    diverging.map(d -> new FetchResponseData.EpochEndOffset().setEpoch(d.epoch())
                            .setEndOffset(d.offset())));
        } finally {
            p.lock().readLock().unlock();
        }
    }

    /**
     * ListOffsets on the leader. LATEST is the last offset a reader of that isolation level may read (high
     * watermark, last stable offset, or for a replica the log end); EARLIEST is the log start; other timestamps
     * search the log and find nothing past what the reader may read.
     */
    Optional<FileRecords.TimestampAndOffset> fetchOffsetForTimestamp(long timestamp, Optional<IsolationLevel> isolation,
                                                                           Optional<Integer> currentLeaderEpoch) {
        p.lock().readLock().lock();
        try {
            p.checkLeader();
            p.checkLeaderEpoch(currentLeaderEpoch);
            long lastFetchable = isolation.isEmpty() ? log_.logEndOffset()
                    : isolation.get() == IsolationLevel.READ_COMMITTED ? log_.lastStableOffset() : log_.highWatermark();
            if (timestamp == ListOffsetsRequest.LATEST_TIMESTAMP) {
                return Optional.of(new FileRecords.TimestampAndOffset(RecordBatch.NO_TIMESTAMP, lastFetchable,
                        Optional.of(p.leaderEpoch())));
            }
            OffsetResultHolder holder = log_.fetchOffsetByTimestamp(timestamp, Optional.empty());
            if (holder.maybeOffsetsError().isPresent()) {
                throw holder.maybeOffsetsError().get();
            }
            Optional<FileRecords.TimestampAndOffset> found = holder.timestampAndOffsetOpt();
            if (timestamp == ListOffsetsRequest.EARLIEST_TIMESTAMP
                    || timestamp == ListOffsetsRequest.EARLIEST_LOCAL_TIMESTAMP) {
                return found;
            }
            return found.filter(t -> t.offset < lastFetchable);
        } finally {
            p.lock().readLock().unlock();
        }
    }

    /** OffsetsForLeaderEpoch on the leader: the end offset of the requested epoch, Kafka semantics. */
    Optional<OffsetAndEpoch> endOffsetForEpoch(int requestedEpoch, Optional<Integer> currentLeaderEpoch) {
        p.lock().readLock().lock();
        try {
            p.checkLeader();
            p.checkLeaderEpoch(currentLeaderEpoch);
            return log_.endOffsetForEpoch(requestedEpoch);
        } finally {
            p.lock().readLock().unlock();
        }
    }
}
