package io.twinlog.share.fetch;

import io.twinlog.share.partition.SharePartitions;
import org.apache.kafka.clients.consumer.internals.ShareAcquireMode;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.message.ShareFetchResponseData.AcquiredRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.server.share.acknowledge.ShareAcknowledgementBatch;
import org.apache.kafka.server.share.fetch.DelayedShareFetchGroupKey;
import org.apache.kafka.server.share.fetch.DelayedShareFetchKey;
import org.apache.kafka.server.share.fetch.ShareAcquiredRecords;
import org.apache.kafka.server.storage.log.FetchPartitionData;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * A working stand-in for the share partitions, for the fetch path's tests: every record read is acquired whole (no
 * in-flight limit, no persister), the next fetch offset moves past what was acquired, a release puts the member's
 * offsets back. Calls are recorded for the tests to check.
 */
final class InMemorySharePartitions implements SharePartitions {
    final Map<TopicIdPartition, Long> nextOffsets = new ConcurrentHashMap<>();
    final Map<TopicIdPartition, CompletableFuture<Void>> initializations = new ConcurrentHashMap<>();
    final Set<TopicIdPartition> lockedElsewhere = ConcurrentHashMap.newKeySet();
    final List<String> released = new CopyOnWriteArrayList<>();
    final List<String> emptied = new CopyOnWriteArrayList<>();
    final List<List<ShareAcknowledgementBatch>> acknowledged = new CopyOnWriteArrayList<>();
    final List<List<AcquiredRecords>> returned = new CopyOnWriteArrayList<>();
    private volatile Consumer<DelayedShareFetchKey> wakeup = key -> { };

    @Override
    public CompletableFuture<Void> initialize(String groupId, TopicIdPartition partition) {
        return initializations.computeIfAbsent(partition, p -> {
            nextOffsets.putIfAbsent(p, 0L);
            return CompletableFuture.completedFuture(null);
        });
    }

    /** Leaves {@code partition} loading until the returned future is completed. */
    CompletableFuture<Void> loadLater(TopicIdPartition partition) {
        CompletableFuture<Void> loading = new CompletableFuture<>();
        initializations.put(partition, loading);
        loading.thenRun(() -> nextOffsets.putIfAbsent(partition, 0L));
        return loading;
    }

    @Override
    public Optional<FetchLock> tryFetchLock(String groupId, TopicIdPartition partition) {
        CompletableFuture<Void> init = initializations.get(partition);
        if (init == null || !init.isDone() || init.isCompletedExceptionally() || lockedElsewhere.contains(partition)) {
            return Optional.empty();
        }
        return Optional.of(new FetchLock() {
            @Override
            public long nextFetchOffset() {
                return nextOffsets.get(partition);
            }

            @Override
            public ShareAcquiredRecords acquire(String memberId, ShareAcquireMode acquireMode, int batchSize,
                                                int maxRecords, long fetchOffset, FetchPartitionData data) {
                List<AcquiredRecords> acquired = new ArrayList<>();
                long next = fetchOffset;
                int count = 0;
                for (RecordBatch batch : data.records.batches()) {
                    if (count >= maxRecords) {
                        break;
                    }
                    long first = Math.max(batch.baseOffset(), fetchOffset);
                    acquired.add(new AcquiredRecords().setFirstOffset(first).setLastOffset(batch.lastOffset())
                            .setDeliveryCount((short) 1));
                    count += (int) (batch.lastOffset() - first + 1);
                    next = batch.lastOffset() + 1;
                }
                nextOffsets.put(partition, next);
                return new ShareAcquiredRecords(acquired, count);
            }

            @Override
            public void close() {
            }
        });
    }

    @Override
    public CompletableFuture<Void> acknowledge(String groupId, String memberId, TopicIdPartition partition,
                                               List<ShareAcknowledgementBatch> batches) {
        acknowledged.add(batches);
        wakeup.accept(new DelayedShareFetchGroupKey(groupId, partition));
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public void returnUndelivered(String groupId, String memberId, TopicIdPartition partition,
                                  List<AcquiredRecords> acquired) {
        returned.add(acquired);
    }

    @Override
    public CompletableFuture<Void> releaseAcquiredRecords(String groupId, String memberId) {
        released.add(groupId + "/" + memberId);
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public void onGroupEmpty(String groupId) {
        emptied.add(groupId);
    }

    @Override
    public void setWakeupListener(Consumer<DelayedShareFetchKey> listener) {
        this.wakeup = listener;
    }

    @Override
    public void close() {
    }
}
