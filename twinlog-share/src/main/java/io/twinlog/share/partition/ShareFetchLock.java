package io.twinlog.share.partition;

import org.apache.kafka.clients.consumer.internals.ShareAcquireMode;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.share.fetch.ShareAcquiredRecords;
import org.apache.kafka.server.share.metrics.SharePartitionMetrics;
import org.apache.kafka.server.storage.log.FetchPartitionData;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The fetch lock of one {@link SharePartitionState}: one ShareFetch at a time reads and acquires, so two fetches
 * never acquire the same offsets from two reads. A flag, not a lock a thread waits on: a fetch that does not get it
 * acquires nothing from this partition this time. The time it was held goes to Kafka's share partition metrics.
 */
final class ShareFetchLock {
    private final Time time;
    private final SharePartitionMetrics metrics;
    private final AtomicBoolean taken = new AtomicBoolean();
    private volatile long takenMs;

    ShareFetchLock(Time time, SharePartitionMetrics metrics) {
        this.time = time;
        this.metrics = metrics;
    }

    boolean tryTake() {
        return taken.compareAndSet(false, true);
    }

    /** Gives back a lock taken but not handed out (nothing to acquire). */
    void giveBack() {
        taken.set(false);
    }

    /** Hands the taken lock to a fetch that reads from {@code fetchOffset} and acquires through {@code state}. */
    SharePartitions.FetchLock handOut(long fetchOffset, SharePartitionState state) {
        takenMs = time.hiResClockMs();
        return new SharePartitions.FetchLock() {
            private boolean released;

            @Override
            public long nextFetchOffset() {
                return fetchOffset;
            }

            @Override
            public ShareAcquiredRecords acquire(String memberId, ShareAcquireMode acquireMode, int batchSize,
                                                int maxRecords, long offset, FetchPartitionData data) {
                if (released) {
                    throw new IllegalStateException("the fetch lock was released");
                }
                return state.acquire(memberId, acquireMode, batchSize, maxRecords, offset, data);
            }

            @Override
            public void close() {
                if (!released) {
                    released = true;
                    metrics.recordFetchLockTimeMs(time.hiResClockMs() - takenMs);
                    taken.set(false);
                }
            }
        };
    }
}
