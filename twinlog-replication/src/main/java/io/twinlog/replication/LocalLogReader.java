package io.twinlog.replication;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.LogOffsetMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * One pass of a Fetch request over the local logs: each partition read within the partition's and the request's
 * byte limits, a follower's fetch also recording its progress on the leader (which may move the high watermark or
 * a follower's log start, waking the requests waiting on them), a divergence or an error answered at once. Runs on
 * request handler threads (and the fetch purgatory's completion); the partitions do their own locking. Split from
 * {@link ReplicaManager}; logs under its logger, as before.
 */
final class LocalLogReader {
    private static final Logger log = LoggerFactory.getLogger(ReplicaManager.class);

    private final Function<TopicPartition, Partition> hosted;
    private final DelayedOperations delayed;
    private final IsrChangeSender isrChanges;
    private final Time time;

    /** @param hosted the hosted partition, or throws the ApiException that says why not */
    LocalLogReader(Function<TopicPartition, Partition> hosted, DelayedOperations delayed, IsrChangeSender isrChanges,
                   Time time) {
        this.hosted = hosted;
        this.delayed = delayed;
        this.isrChanges = isrChanges;
        this.time = time;
    }

    LocalReadResult read(FetchParams params, LinkedHashMap<TopicIdPartition, FetchRequest.PartitionData> fetchInfos) {
        LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> responses = new LinkedHashMap<>();
        Map<TopicIdPartition, LogOffsetMetadata> offsets = new HashMap<>();
        int bytesRead = 0;
        boolean anyError = false;
        int remaining = params.maxBytes();
        for (Map.Entry<TopicIdPartition, FetchRequest.PartitionData> e : fetchInfos.entrySet()) {
            TopicIdPartition tip = e.getKey();
            FetchRequest.PartitionData fetch = e.getValue();
            FetchResponseData.PartitionData data = new FetchResponseData.PartitionData()
                    .setPartitionIndex(tip.partition());
            try {
                Partition partition = hosted.apply(tip.topicPartition());
                int partitionMax = Math.max(0, Math.min(fetch.maxBytes, remaining));
                if (params.replicaId() >= 0) {
                    Partition.FollowerFetch ff = partition.readForFollower(params.replicaId(), params.replicaEpoch(),
                            fetch.fetchOffset, fetch.currentLeaderEpoch, fetch.lastFetchedEpoch, partitionMax,
                            bytesRead == 0, time.milliseconds(), isrChanges);
                    if (ff.highWatermarkMoved()) {
                        delayed.completeAll(tip.topicPartition());
                    }
                    if (partition.updateFollowerLogStartOffset(params.replicaId(), fetch.logStartOffset)) {
                        delayed.completeDeleteRecords(tip.topicPartition());
                    }
                    data.setHighWatermark(ff.highWatermark()).setLastStableOffset(ff.highWatermark())
                            .setLogStartOffset(ff.logStartOffset());
                    if (ff.divergingEpoch().isPresent()) {
                        anyError = true; // answer at once: the follower must truncate before anything else
                        data.setDivergingEpoch(ff.divergingEpoch().get()).setRecords(MemoryRecords.EMPTY);
                    } else {
                        Records records = ff.info().records;
                        bytesRead += records.sizeInBytes();
                        remaining = Math.max(0, remaining - records.sizeInBytes());
                        offsets.put(tip, ff.info().fetchOffsetMetadata);
                        data.setRecords(records);
                    }
                    responses.put(tip, data);
                    continue;
                }
                Partition.ReadResult r = partition.read(fetch.fetchOffset, fetch.currentLeaderEpoch,
                        fetch.lastFetchedEpoch, partitionMax, params.isolation(), bytesRead == 0);
                if (r.divergingEpoch().isPresent()) {
                    anyError = true; // answer at once: the reader must truncate before it reads on
                    data.setHighWatermark(r.highWatermark()).setLastStableOffset(r.lastStableOffset())
                            .setLogStartOffset(r.logStartOffset()).setDivergingEpoch(r.divergingEpoch().get())
                            .setRecords(MemoryRecords.EMPTY);
                    responses.put(tip, data);
                    continue;
                }
                Records records = r.info().records;
                int size = records.sizeInBytes();
                bytesRead += size;
                remaining = Math.max(0, remaining - size);
                offsets.put(tip, r.info().fetchOffsetMetadata);
                data.setHighWatermark(r.highWatermark())
                        .setLastStableOffset(r.lastStableOffset())
                        .setLogStartOffset(r.logStartOffset())
                        .setRecords(records);
                if (r.info().abortedTransactions.isPresent()) {
                    data.setAbortedTransactions(r.info().abortedTransactions.get());
                }
            } catch (ApiException ex) {
                anyError = true;
                data.setErrorCode(Errors.forException(ex).code())
                        .setHighWatermark(-1).setLastStableOffset(-1).setLogStartOffset(-1)
                        .setRecords(MemoryRecords.EMPTY);
            } catch (IOException | RuntimeException ex) {
                // broad: any other failure is this partition's error answer, logged with its stack trace
                anyError = true;
                log.error("Unexpected error reading {} at offset {}", tip, fetch.fetchOffset, ex);
                data.setErrorCode(Errors.forException(ex).code())
                        .setHighWatermark(-1).setLastStableOffset(-1).setLogStartOffset(-1)
                        .setRecords(MemoryRecords.EMPTY);
            }
            responses.put(tip, data);
        }
        return new LocalReadResult(responses, offsets, bytesRead, anyError);
    }

    /** What one pass read: the answers, where each read ended, the bytes, and whether any partition erred. */
    record LocalReadResult(LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> responses,
                           Map<TopicIdPartition, LogOffsetMetadata> fetchOffsetMetadata, int bytesRead,
                           boolean anyError) {
    }
}
