package io.twinlog.share.partition;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.internals.ShareAcquireMode;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.message.ShareFetchResponseData.AcquiredRecords;
import org.apache.kafka.server.share.acknowledge.ShareAcknowledgementBatch;
import org.apache.kafka.server.share.fetch.DelayedShareFetchKey;
import org.apache.kafka.server.share.fetch.ShareAcquiredRecords;
import org.apache.kafka.server.storage.log.FetchPartitionData;

/**
 * What the ShareFetch/ShareAcknowledge path asks of this broker's share partitions (one per group and partition
 * this broker leads): the seam between the request handlers and the in-flight record state, so that either side
 * can change without the other. Futures complete exceptionally with Kafka's {@code ApiException}s
 * (NOT_LEADER_OR_FOLLOWER, FENCED_STATE_EPOCH, INVALID_RECORD_STATE, ...), which handlers turn into error codes.
 * No method blocks on the network or ZooKeeper: persister round trips are futures.
 */
public interface SharePartitions extends AutoCloseable {

    /**
     * Loads the partition's share state from the persister the first time (start offset, state epoch, in-flight
     * batches; an uninitialized start offset resolves {@code share.auto.offset.reset}); later calls complete at once.
     */
    CompletableFuture<Void> initialize(String groupId, TopicIdPartition partition);

    /**
     * Takes the partition's fetch lock (one acquiring fetch at a time per share partition). Empty when another
     * fetch holds it, the partition is not initialized, or it cannot acquire more records now (in-flight limit).
     */
    Optional<FetchLock> tryFetchLock(String groupId, TopicIdPartition partition);

    /** A held fetch lock; {@link #close()} releases it. */
    interface FetchLock extends AutoCloseable {
        /** Where the next read should start (the lowest AVAILABLE offset). */
        long nextFetchOffset();

        /**
         * Acquires for {@code memberId} the records read from {@link #nextFetchOffset()}: AVAILABLE ones become
         * ACQUIRED with their delivery count raised and an acquisition lock started. At most {@code maxRecords}:
         * rounded up to whole log batches in {@code BATCH_OPTIMIZED} mode, exactly in {@code RECORD_LIMIT} mode
         * (KIP-1206).
         */
        ShareAcquiredRecords acquire(String memberId, ShareAcquireMode acquireMode, int batchSize, int maxRecords,
                                     long fetchOffset, FetchPartitionData data);

        /** {@link #acquire(String, ShareAcquireMode, int, int, long, FetchPartitionData)} in Kafka's default mode. */
        default ShareAcquiredRecords acquire(String memberId, int batchSize, int maxRecords, long fetchOffset,
                                             FetchPartitionData data) {
            return acquire(memberId, ShareAcquireMode.BATCH_OPTIMIZED, batchSize, maxRecords, fetchOffset, data);
        }

        @Override
        void close();
    }

    /**
     * Applies a member's acknowledgements (ACCEPT 1, RELEASE 2, REJECT 3) and persists them; RENEW (4, KIP-1222)
     * restarts the acquisition lock of records the member holds, in memory only.
     */
    CompletableFuture<Void> acknowledge(String groupId, String memberId, TopicIdPartition partition,
                                        List<ShareAcknowledgementBatch> batches);

    /**
     * Makes records acquired for {@code memberId} that never reached it (its ShareFetch answer was throttled away by
     * a client quota) AVAILABLE again, their delivery not counted. In memory only; a partition without a share
     * state here is left alone.
     */
    void returnUndelivered(String groupId, String memberId, TopicIdPartition partition,
                           List<AcquiredRecords> acquired);

    /** Makes every record {@code memberId} holds in the group's partitions on this broker AVAILABLE again. */
    CompletableFuture<Void> releaseAcquiredRecords(String groupId, String memberId);

    /** The group has no members left on this broker's sessions: its share partitions may be dropped. */
    void onGroupEmpty(String groupId);

    /**
     * Called when records of a share partition became acquirable (acknowledged, released, lock expired) or a share
     * partition was fenced, so waiting ShareFetches can try again. One listener; set before the first fetch.
     */
    void setWakeupListener(Consumer<DelayedShareFetchKey> listener);

    /**
     * The group's {@code share.isolation.level}: how ShareFetch reads the log for it. Under read_committed the read
     * (FetchIsolation TXN_COMMITTED) carries the aborted transactions, whose records {@code acquire} archives.
     */
    default IsolationLevel isolationLevel(String groupId) {
        return IsolationLevel.READ_UNCOMMITTED;
    }
}
