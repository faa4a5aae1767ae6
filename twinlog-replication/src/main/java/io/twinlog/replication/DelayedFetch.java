package io.twinlog.replication;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.server.purgatory.DelayedOperation;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.LogOffsetMetadata;
import org.apache.kafka.storage.internals.log.LogOffsetSnapshot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A fetch long-poll: completes when at least {@code minBytes} became readable across its partitions (counted from
 * segment positions, without reading), when a partition can no longer be served here (leadership moved, log
 * truncated), or at {@code maxWaitMs}. On completion the partitions are read again and answered.
 */
final class DelayedFetch extends DelayedOperation {
    private static final Logger log = LoggerFactory.getLogger(DelayedFetch.class);
    private final ReplicaManager replicaManager;
    private final FetchParams params;
    private final LinkedHashMap<TopicIdPartition, FetchRequest.PartitionData> fetchInfos;
    private final Map<TopicIdPartition, LogOffsetMetadata> fetchOffsetMetadata;
    private final Consumer<LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData>> callback;

    DelayedFetch(ReplicaManager replicaManager, FetchParams params,
                 LinkedHashMap<TopicIdPartition, FetchRequest.PartitionData> fetchInfos,
                 Map<TopicIdPartition, LogOffsetMetadata> fetchOffsetMetadata,
                 Consumer<LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData>> callback) {
        super(params.maxWaitMs());
        this.replicaManager = replicaManager;
        this.params = params;
        this.fetchInfos = fetchInfos;
        this.fetchOffsetMetadata = fetchOffsetMetadata;
        this.callback = callback;
    }

    @Override
    public boolean tryComplete() {
        long accumulatedBytes = 0;
        for (Map.Entry<TopicIdPartition, LogOffsetMetadata> e : fetchOffsetMetadata.entrySet()) {
            Partition partition = replicaManager.partition(e.getKey().topicPartition()).orElse(null);
            if (partition == null || !partition.isLeader()) {
                return forceComplete();
            }
            LogOffsetSnapshot snapshot;
            try {
                snapshot = partition.offsetSnapshot();
            } catch (Exception ex) {
                // broad: a partition that cannot be read, for any reason, is answered by the completion, which
                // reads it again and answers its error
                log.debug("Completing the fetch of {}: its offsets cannot be read", e.getKey(), ex);
                return forceComplete();
            }
            LogOffsetMetadata end = endOffset(snapshot);
            LogOffsetMetadata start = e.getValue();
            if (end.messageOffset < start.messageOffset) {
                return forceComplete(); // truncated below the fetch offset: answer with what is true now
            }
            if (end.messageOffset == start.messageOffset) {
                continue;
            }
            if (start.messageOffsetOnly() || end.messageOffsetOnly() || start.onOlderSegment(end)) {
                return forceComplete(); // new data on a later segment: there is at least one batch to return
            }
            if (start.onSameSegment(end)) {
                int partitionMax = fetchInfos.get(e.getKey()).maxBytes;
                accumulatedBytes += Math.min(end.positionDiff(start), partitionMax);
            }
        }
        if (accumulatedBytes >= params.minBytes()) {
            return forceComplete();
        }
        return false;
    }

    private LogOffsetMetadata endOffset(LogOffsetSnapshot snapshot) {
        if (params.isolation() == FetchIsolation.TXN_COMMITTED) {
            return snapshot.lastStableOffset();
        }
        if (params.isolation() == FetchIsolation.LOG_END) {
            return snapshot.logEndOffset();
        }
        return snapshot.highWatermark();
    }

    @Override
    public void onExpiration() {
        // nothing to record: onComplete answers with whatever is readable now
    }

    @Override
    public void onComplete() {
        callback.accept(replicaManager.readFromLocalLog(params, fetchInfos).responses());
    }
}
