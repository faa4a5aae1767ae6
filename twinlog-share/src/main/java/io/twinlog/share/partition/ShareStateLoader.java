package io.twinlog.share.partition;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.coordinator.group.ShareGroupAutoOffsetResetStrategy;
import org.apache.kafka.server.share.fetch.RecordState;
import org.apache.kafka.server.share.persister.GroupTopicPartitionData;
import org.apache.kafka.server.share.persister.PartitionAllData;
import org.apache.kafka.server.share.persister.PartitionFactory;
import org.apache.kafka.server.share.persister.PartitionIdLeaderEpochData;
import org.apache.kafka.server.share.persister.Persister;
import org.apache.kafka.server.share.persister.PersisterStateBatch;
import org.apache.kafka.server.share.persister.ReadShareGroupStateParameters;
import org.apache.kafka.server.share.persister.ReadShareGroupStateResult;
import org.apache.kafka.server.share.persister.TopicData;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.twinlog.share.partition.ShareStateWriter.persisterException;
import static io.twinlog.share.partition.ShareStateWriter.unwrap;
import static io.twinlog.share.partition.SharePartitionState.log;

/**
 * Loading of one {@link SharePartitionState}: reads the persisted share state (start offset, state epoch, state
 * batches) and builds the in-flight cache from it, resolving {@code share.auto.offset.reset} for an uninitialized
 * start offset.
 *
 * <p>Threading: {@link #read} runs without the state's lock; {@link #checked} and {@link #load} under its write lock.
 */
final class ShareStateLoader {
    private final String groupId;
    private final TopicIdPartition partition;
    private final int leaderEpoch;
    private final Persister persister;
    private final SharePartitionLog partitionLog;
    private final SharePartitionState.GroupSettings settings;
    private final InFlightCache cache;
    private final String logPrefix;

    ShareStateLoader(String groupId, TopicIdPartition partition, int leaderEpoch, Persister persister,
                     SharePartitionLog partitionLog, SharePartitionState.GroupSettings settings, InFlightCache cache,
                     String logPrefix) {
        this.groupId = groupId;
        this.partition = partition;
        this.leaderEpoch = leaderEpoch;
        this.persister = persister;
        this.partitionLog = partitionLog;
        this.settings = settings;
        this.cache = cache;
        this.logPrefix = logPrefix;
    }

    /** Asks the persister for the partition's state; a persister that throws gives a failed future. */
    CompletableFuture<ReadShareGroupStateResult> read() {
        try {
            return persister.readState(new ReadShareGroupStateParameters.Builder()
                    .setGroupTopicPartitionData(new GroupTopicPartitionData.Builder<PartitionIdLeaderEpochData>()
                            .setGroupId(groupId)
                            .setTopicsData(List.of(new TopicData<>(partition.topicId(), List.of(
                                    PartitionFactory.newPartitionIdLeaderEpochData(partition.partition(),
                                            leaderEpoch)))))
                            .build())
                    .build());
        } catch (RuntimeException e) {
            // broad: a failure of any kind is the read's answer, through the future
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * This partition's data of a completed read; throws the read's failure or the partition's error as Kafka's
     * {@code ApiException}, and {@link IllegalStateException} when the persister answered for other partitions.
     */
    PartitionAllData checked(ReadShareGroupStateResult result, Throwable error) {
        if (error != null) {
            throw persisterException(unwrap(error));
        }
        PartitionAllData data = single(result == null ? null : result.topicsData());
        if (data.errorCode() != Errors.NONE.code()) {
            throw persisterException(Errors.forCode(data.errorCode()), data.errorMessage());
        }
        return data;
    }

    private PartitionAllData single(List<TopicData<PartitionAllData>> topics) {
        if (topics == null || topics.size() != 1 || !topics.get(0).topicId().equals(partition.topicId())
                || topics.get(0).partitions().size() != 1
                || topics.get(0).partitions().get(0).partition() != partition.partition()) {
            throw new IllegalStateException("the persister answered for other partitions: " + topics);
        }
        return topics.get(0).partitions().get(0);
    }

    /**
     * Builds the cache from the persisted batches: offsets between them (fetched but never acknowledged by an
     * earlier leader) become AVAILABLE again. An uninitialized start offset resolves {@code share.auto.offset.reset};
     * a start offset past the log end (left by a mirror failback that cut the log) is clamped to the log end, and the
     * persisted batches past it dropped, since those offsets will hold other records.
     */
    void load(PartitionAllData data) {
        long logEnd = partitionLog.logEndOffset();
        long start = data.startOffset();
        String how = "persisted";
        if (start == PartitionFactory.UNINITIALIZED_START_OFFSET) {
            ShareGroupAutoOffsetResetStrategy reset = settings.autoOffsetReset();
            start = resetOffset(reset);
            how = "share.auto.offset.reset=" + reset;
        }
        if (start > logEnd) {
            log.warn("{}start offset {} is past the log end {} (the log was cut since): starting at the log end and "
                    + "dropping the persisted state past it", logPrefix, start, logEnd);
            start = logEnd;
        }
        cache.stateEpoch(data.stateEpoch());
        cache.startAt(start);
        long cursor = start;
        List<PersisterStateBatch> batches = new ArrayList<>(data.stateBatches());
        batches.sort(Comparator.comparingLong(PersisterStateBatch::firstOffset));
        for (PersisterStateBatch batch : batches) {
            long first = Math.max(batch.firstOffset(), cursor);
            long last = Math.min(batch.lastOffset(), logEnd - 1);
            if (first > last) {
                continue;
            }
            if (first > cursor) {
                cache.put(cursor, first - 1, RecordState.AVAILABLE, 0);
            }
            RecordState state = RecordState.forId(batch.deliveryState());
            // only terminal and AVAILABLE states are persisted; anything else did not finish its delivery
            cache.put(first, last, InFlightCache.isTerminal(state) ? state : RecordState.AVAILABLE,
                    batch.deliveryCount());
            cursor = last + 1;
        }
        cache.endAt(cursor);
        cache.markMayHaveAvailable();
        cache.maybeMoveLogStart(partitionLog.logStartOffset());
        cache.advanceStartOffset();
        log.info("{}loaded ({}): start offset {}, end offset {}, state epoch {}, {} persisted batches", logPrefix, how,
                cache.startOffset(), cache.endOffset(), cache.stateEpoch(), batches.size());
    }

    private long resetOffset(ShareGroupAutoOffsetResetStrategy reset) {
        switch (reset.type()) {
            case EARLIEST:
                return partitionLog.logStartOffset();
            case LATEST:
                return partitionLog.highWatermark();
            default:
                // by_duration: the first record at or after now - duration; none yet means none newer: the end
                return partitionLog.offsetForTimestamp(reset.timestamp()).orElseGet(partitionLog::highWatermark);
        }
    }
}
