package io.twinlog.share.fetch;

import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import io.twinlog.share.partition.SharePartitions;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.ShareAcknowledgeResponseData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.server.purgatory.DelayedOperationKey;
import org.apache.kafka.server.purgatory.DelayedOperationPurgatory;
import org.apache.kafka.server.share.acknowledge.ShareAcknowledgementBatch;
import org.apache.kafka.server.share.fetch.DelayedShareFetchGroupKey;
import org.apache.kafka.server.share.fetch.DelayedShareFetchKey;
import org.apache.kafka.server.share.fetch.DelayedShareFetchPartitionKey;
import org.apache.kafka.server.share.fetch.PartitionMaxBytesStrategy;
import org.apache.kafka.server.storage.log.FetchPartitionData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * ShareFetch and ShareAcknowledge on this broker's share partitions, never blocking the request thread: a fetch
 * loads its partitions' share state (futures), then waits in the {@code ShareFetch} purgatory as a
 * {@link ShareFetchOperation} watched under each partition's {@link DelayedShareFetchPartitionKey} (new records:
 * the leader's high watermark moved) and {@link DelayedShareFetchGroupKey} (records of the group became acquirable
 * again, or the partition was initialized or fenced). The news arrives on threads that must not do the work and is
 * handed to the wake-up thread ({@link ShareWakeups}). A request's {@code maxBytes} is split evenly over its
 * partitions (Kafka's UNIFORM strategy).
 */
public final class ShareFetches implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ShareFetches.class);

    private final ReplicaManager replicaManager;
    private final SharePartitions sharePartitions;
    private final DelayedOperationPurgatory<ShareFetchOperation> purgatory;
    private final ShareWakeups wakeups;

    /**
     * @param purgeIntervalRequests {@code share.fetch.purgatory.purge.interval.requests}: completed operations are
     *                              purged from the watch lists after this many
     */
    public ShareFetches(int brokerId, ReplicaManager replicaManager, SharePartitions sharePartitions,
                        int purgeIntervalRequests) {
        this.replicaManager = replicaManager;
        this.sharePartitions = sharePartitions;
        this.purgatory = new DelayedOperationPurgatory<>("ShareFetch", brokerId, purgeIntervalRequests);
        this.wakeups = new ShareWakeups("twinlog-share-wakeup-" + brokerId, this::onWakeup);
        // called under the leader lock: only hand the news on, and only while some fetch waits
        replicaManager.addHighWatermarkListener((tp, highWatermark) -> {
            if (purgatory.numDelayed() > 0) {
                wakeups.wake(tp);
            }
        });
        sharePartitions.setWakeupListener(wakeups::wake);
    }

    private void onWakeup(Object key) {
        if (key instanceof TopicPartition tp) {
            replicaManager.partition(tp).ifPresent(p -> purgatory.checkAndComplete(
                    new DelayedShareFetchPartitionKey(p.topicId(), tp.partition())));
        } else if (key instanceof DelayedShareFetchKey shareKey) {
            purgatory.checkAndComplete(shareKey);
        }
    }

    /**
     * Acquires records of {@code spec}'s partitions for its member, waiting up to {@code maxWaitMs} for
     * {@code minBytes}. The future completes with an entry for every partition: acquired records (sliced to the
     * acquired batches), nothing, or the partition's error.
     */
    public CompletableFuture<LinkedHashMap<TopicIdPartition, ShareFetchResponseData.PartitionData>> fetch(
            ShareFetchSpec spec) {
        CompletableFuture<LinkedHashMap<TopicIdPartition, ShareFetchResponseData.PartitionData>> result =
                new CompletableFuture<>();
        if (spec.partitions().isEmpty()) {
            result.complete(new LinkedHashMap<>());
            return result;
        }
        LinkedHashSet<TopicIdPartition> distinct = new LinkedHashSet<>(spec.partitions());
        Map<TopicIdPartition, Integer> maxBytes = PartitionMaxBytesStrategy
                .type(PartitionMaxBytesStrategy.StrategyType.UNIFORM)
                .maxBytes(Math.max(spec.maxBytes(), distinct.size()), distinct, distinct.size());
        Map<TopicIdPartition, CompletableFuture<Void>> initialized = new HashMap<>();
        for (TopicIdPartition partition : distinct) {
            initialized.put(partition, initialize(spec.groupId(), partition));
        }
        ShareFetchOperation operation = new ShareFetchOperation(spec, maxBytes, sharePartitions, this::read, result);
        List<DelayedOperationKey> keys = new ArrayList<>();
        for (TopicIdPartition partition : distinct) {
            keys.add(new DelayedShareFetchPartitionKey(partition));
            keys.add(new DelayedShareFetchGroupKey(spec.groupId(), partition));
        }
        // watched before the loads are followed, so a load that completes meanwhile finds it
        purgatory.tryCompleteElseWatch(operation, keys);
        initialized.forEach((partition, future) -> {
            if (!future.isDone() || future.isCompletedExceptionally()) {
                future.whenComplete((v, error) -> {
                    if (error != null) {
                        operation.initializationFailed(partition, error);
                    }
                    wakeups.wake(new DelayedShareFetchGroupKey(spec.groupId(), partition));
                });
            }
        });
        return result;
    }

    private CompletableFuture<Void> initialize(String groupId, TopicIdPartition partition) {
        try {
            return sharePartitions.initialize(groupId, partition);
        } catch (RuntimeException e) {
            // broad: a failure of any kind is this partition's error answer, through the future
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Reads for a share fetch as a consumer reads, from this broker's leader replica. */
    private FetchPartitionData read(TopicIdPartition partition, long fetchOffset, int maxBytes, ShareFetchSpec spec) {
        try {
            Partition p = replicaManager.partitionOrThrow(partition.topicPartition());
            Partition.ReadResult r = p.read(fetchOffset, Optional.empty(), Optional.empty(), maxBytes,
                    spec.isolation(), true);
            return new FetchPartitionData(Errors.NONE, r.highWatermark(), r.logStartOffset(), r.info().records,
                    Optional.empty(), OptionalLong.of(r.lastStableOffset()), r.info().abortedTransactions,
                    OptionalInt.empty(), false);
        } catch (ApiException e) {
            log.debug("Share fetch read of {} at {} refused: {}", partition, fetchOffset, e.toString());
            return errorData(Errors.forException(e));
        } catch (IOException | RuntimeException e) {
            // broad: a read failure of any kind is this partition's error answer
            log.error("Share fetch read of {} at {} failed", partition, fetchOffset, e);
            return errorData(Errors.forException(e));
        }
    }

    private static FetchPartitionData errorData(Errors error) {
        return new FetchPartitionData(error, -1, -1, MemoryRecords.EMPTY,
                Optional.empty(), OptionalLong.empty(), Optional.empty(), OptionalInt.empty(), false);
    }

    /**
     * Applies a member's acknowledgements partition by partition; each partition's answer carries its own error
     * (the share partition's, e.g. INVALID_RECORD_STATE for records the member does not hold).
     */
    public CompletableFuture<Map<TopicIdPartition, ShareAcknowledgeResponseData.PartitionData>> acknowledge(
            String groupId, String memberId, Map<TopicIdPartition, List<ShareAcknowledgementBatch>> batches) {
        Map<TopicIdPartition, CompletableFuture<ShareAcknowledgeResponseData.PartitionData>> answers =
                new LinkedHashMap<>();
        batches.forEach((partition, partitionBatches) -> {
            CompletableFuture<Void> applied;
            try {
                applied = sharePartitions.acknowledge(groupId, memberId, partition, partitionBatches);
            } catch (RuntimeException e) {
                // broad: a failure of any kind is this partition's error answer, through the future
                applied = CompletableFuture.failedFuture(e);
            }
            answers.put(partition, applied.handle((v, error) -> {
                ShareAcknowledgeResponseData.PartitionData data = new ShareAcknowledgeResponseData.PartitionData()
                        .setPartitionIndex(partition.partition());
                if (error != null) {
                    Throwable cause = unwrap(error);
                    if (!(cause instanceof ApiException)) {
                        log.error("Acknowledgement of group {} member {} on {} failed", groupId, memberId,
                                partition, cause);
                    }
                    data.setErrorCode(Errors.forException(cause).code()).setErrorMessage(cause.getMessage());
                }
                return data;
            }));
        });
        return CompletableFuture.allOf(answers.values().toArray(CompletableFuture[]::new)).thenApply(v -> {
            Map<TopicIdPartition, ShareAcknowledgeResponseData.PartitionData> result = new LinkedHashMap<>();
            answers.forEach((partition, answer) -> result.put(partition, answer.join()));
            return result;
        });
    }

    /** Runs {@code task} on the wake-up thread after {@code delayMs} (a refused fetch answered after its wait). */
    public void schedule(Runnable task, long delayMs) {
        wakeups.schedule(task, delayMs);
    }

    /** ShareFetches waiting in the purgatory. */
    public int waiting() {
        return purgatory.numDelayed();
    }

    /** The failure itself, out of its CompletionException / ExecutionException wrappers. */
    static Throwable unwrap(Throwable t) {
        Throwable c = t;
        while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }

    @Override
    public void close() throws Exception {
        wakeups.close();
        purgatory.shutdown();
    }
}
