package io.twinlog.share.fetch;

import io.twinlog.share.partition.SharePartitions;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.server.purgatory.DelayedOperation;
import org.apache.kafka.server.share.fetch.ShareAcquiredRecords;
import org.apache.kafka.server.storage.log.FetchPartitionData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One ShareFetch waiting for records to acquire (Kafka's {@code DelayedShareFetch}, written for Twinlog's read
 * path). Each try takes the fetch lock of every partition not answered yet, reads from the share partition's next
 * fetch offset and acquires what it read for the member; a partition whose lock is held elsewhere, or that has
 * nothing to give, is tried again at the next wake-up. It completes when the acquired records reach {@code minBytes}
 * or {@code maxRecords}, when a partition fails (answered with its error at once, as Kafka does), when every
 * partition is answered, or at {@code maxWaitMs} with whatever it acquired.
 *
 * <p>Records are acquired as the try finds them and kept for the answer, which goes out at the latest after
 * {@code maxWaitMs}, well inside the acquisition lock. Threads: the request thread's first try, then the wake-up
 * thread (new data, records released, a partition initialized) and the purgatory's expiry thread; the purgatory
 * runs tries and completion under the operation's lock, so the state below needs no other guard, except the
 * initialization failures, which arrive from the persister's thread.
 */
final class ShareFetchOperation extends DelayedOperation {
    private static final Logger log = LoggerFactory.getLogger(ShareFetchOperation.class);

    /** Reads a partition at an offset, with the read's error as {@link FetchPartitionData#error}. */
    @FunctionalInterface
    interface PartitionReader {
        FetchPartitionData read(TopicIdPartition partition, long fetchOffset, int maxBytes, ShareFetchSpec spec);
    }

    private final ShareFetchSpec spec;
    private final Map<TopicIdPartition, Integer> partitionMaxBytes;
    private final SharePartitions sharePartitions;
    private final PartitionReader reader;
    private final CompletableFuture<LinkedHashMap<TopicIdPartition, ShareFetchResponseData.PartitionData>> result;
    private final Map<TopicIdPartition, ShareFetchResponseData.PartitionData> answered = new HashMap<>();
    private final Map<TopicIdPartition, Throwable> initializationFailures = new ConcurrentHashMap<>();
    private int acquiredRecords;
    private long acquiredBytes;
    private boolean failed;

    ShareFetchOperation(ShareFetchSpec spec, Map<TopicIdPartition, Integer> partitionMaxBytes,
                        SharePartitions sharePartitions, PartitionReader reader,
                        CompletableFuture<LinkedHashMap<TopicIdPartition, ShareFetchResponseData.PartitionData>>
                                result) {
        super(spec.maxWaitMs());
        this.spec = spec;
        this.partitionMaxBytes = partitionMaxBytes;
        this.sharePartitions = sharePartitions;
        this.reader = reader;
        this.result = result;
    }

    /** A partition's share state could not be loaded: it is answered with the error at the next try. */
    void initializationFailed(TopicIdPartition partition, Throwable error) {
        initializationFailures.put(partition, error);
    }

    @Override
    public boolean tryComplete() {
        for (TopicIdPartition partition : spec.partitions()) {
            if (answered.containsKey(partition)) {
                continue;
            }
            Throwable initFailure = initializationFailures.remove(partition);
            if (initFailure != null) {
                fail(partition, initFailure);
                continue;
            }
            if (acquiredRecords >= spec.maxRecords()) {
                break;
            }
            tryAcquire(partition);
        }
        if (failed || answered.size() == spec.partitions().size() || acquiredRecords >= spec.maxRecords()
                || acquiredRecords > 0 && acquiredBytes >= spec.minBytes()) {
            return forceComplete();
        }
        return false;
    }

    private void tryAcquire(TopicIdPartition partition) {
        Optional<SharePartitions.FetchLock> lock;
        try {
            lock = sharePartitions.tryFetchLock(spec.groupId(), partition);
        } catch (RuntimeException e) {
            // broad: a failure of any kind is this partition's error answer
            fail(partition, e);
            return;
        }
        if (lock.isEmpty()) {
            return; // another fetch holds it, or it is not initialized yet: a wake-up brings the next try
        }
        try (SharePartitions.FetchLock held = lock.get()) {
            long fetchOffset = held.nextFetchOffset();
            FetchPartitionData data = reader.read(partition, fetchOffset, partitionMaxBytes.get(partition), spec);
            if (data.error != Errors.NONE) {
                answerError(partition, data.error, null);
                return;
            }
            ShareAcquiredRecords acquired = held.acquire(spec.memberId(), spec.acquireMode(), spec.batchSize(),
                    spec.maxRecords() - acquiredRecords, fetchOffset, data);
            if (acquired.acquiredRecords().isEmpty()) {
                return;
            }
            Records records = ShareRecordSlicer.slice(data.records, acquired.acquiredRecords());
            answered.put(partition, new ShareFetchResponseData.PartitionData().setPartitionIndex(partition.partition())
                    .setRecords(records).setAcquiredRecords(List.copyOf(acquired.acquiredRecords())));
            acquiredRecords += acquired.count();
            acquiredBytes += records.sizeInBytes();
        } catch (RuntimeException e) {
            // broad: a failure of any kind is this partition's error answer
            fail(partition, e);
        }
    }

    private void fail(TopicIdPartition partition, Throwable error) {
        Throwable cause = ShareFetches.unwrap(error);
        if (!(cause instanceof ApiException)) {
            log.error("Share fetch of group {} member {} failed on {}", spec.groupId(), spec.memberId(), partition,
                    cause);
        }
        answerError(partition, Errors.forException(cause), cause.getMessage());
    }

    private void answerError(TopicIdPartition partition, Errors error, String message) {
        failed = true;
        answered.put(partition, new ShareFetchResponseData.PartitionData().setPartitionIndex(partition.partition())
                .setErrorCode(error.code()).setErrorMessage(message != null ? message : error.message())
                .setRecords(MemoryRecords.EMPTY));
    }

    @Override
    public void onExpiration() {
        // nothing to record: onComplete answers with what was acquired
    }

    @Override
    public void onComplete() {
        LinkedHashMap<TopicIdPartition, ShareFetchResponseData.PartitionData> response = new LinkedHashMap<>();
        for (TopicIdPartition partition : spec.partitions()) {
            response.put(partition, answered.getOrDefault(partition, new ShareFetchResponseData.PartitionData()
                    .setPartitionIndex(partition.partition()).setRecords(MemoryRecords.EMPTY)));
        }
        result.complete(response);
    }
}
