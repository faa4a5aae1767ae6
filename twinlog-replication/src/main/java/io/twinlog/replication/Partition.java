package io.twinlog.replication;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.FencedLeaderEpochException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownLeaderEpochException;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogOffsetSnapshot;
import org.apache.kafka.storage.internals.log.OffsetResultHolder;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * One partition hosted on this broker: its log, its role (leader or follower) in the current leader epoch, and the
 * high watermark.
 *
 * <p>Threading: the role and epoch change under the write lock (metadata thread); appends and reads hold the read
 * lock, so an append never runs against a half-applied leadership change. Every client-facing call checks the
 * role first and the client's leader epoch second ({@code NOT_LEADER_OR_FOLLOWER}, {@code FENCED_LEADER_EPOCH},
 * {@code UNKNOWN_LEADER_EPOCH}).
 *
 * <p>High watermark: advanced only by the leader, to the smallest log end offset in the ISR; with the ISR holding
 * only the leader that is the leader's own log end offset.
 */
public final class Partition {
    private static final Logger log = LoggerFactory.getLogger(Partition.class);

    private final TopicPartition topicPartition;
    private final Uuid topicId;
    private final int localBrokerId;
    private final UnifiedLog log_;
    private final ReentrantReadWriteLock leaderIsrLock = new ReentrantReadWriteLock();
    private final String logPrefix;
    private volatile int leaderId = -1;
    private volatile int leaderEpoch = -1;
    private volatile List<Integer> replicas = List.of();
    private volatile List<Integer> isr = List.of();

    public Partition(TopicPartition topicPartition, Uuid topicId, int localBrokerId, UnifiedLog log) {
        this.topicPartition = topicPartition;
        this.topicId = topicId;
        this.localBrokerId = localBrokerId;
        this.log_ = log;
        this.logPrefix = "[Partition " + topicPartition + " broker=" + localBrokerId + "] ";
    }

    public TopicPartition topicPartition() {
        return topicPartition;
    }

    public Uuid topicId() {
        return topicId;
    }

    public UnifiedLog log() {
        return log_;
    }

    public int leaderId() {
        return leaderId;
    }

    public int leaderEpoch() {
        return leaderEpoch;
    }

    public List<Integer> replicas() {
        return replicas;
    }

    public List<Integer> isr() {
        return isr;
    }

    public boolean isLeader() {
        return leaderId == localBrokerId;
    }

    /**
     * Applies a leadership record. Becoming leader in a new epoch starts that epoch at the current log end offset
     * in the leader-epoch cache, as Kafka does, so later epoch lookups (OffsetsForLeaderEpoch) are exact.
     *
     * @return true if the record changed the role or epoch
     */
    public boolean applyLeadership(int newLeaderId, int newLeaderEpoch, List<Integer> newReplicas, List<Integer> newIsr) {
        leaderIsrLock.writeLock().lock();
        try {
            if (newLeaderEpoch < leaderEpoch) {
                log.info("{}Ignoring stale leadership record: epoch {} < current {}", logPrefix, newLeaderEpoch,
                        leaderEpoch);
                return false;
            }
            boolean changed = newLeaderEpoch != leaderEpoch || newLeaderId != leaderId;
            int previousEpoch = leaderEpoch;
            leaderId = newLeaderId;
            leaderEpoch = newLeaderEpoch;
            replicas = List.copyOf(newReplicas);
            isr = List.copyOf(newIsr);
            if (changed && newLeaderId == localBrokerId) {
                Optional<Integer> latest = log_.latestEpoch();
                if (latest.isEmpty() || latest.get() < newLeaderEpoch) {
                    log_.assignEpochStartOffset(newLeaderEpoch, log_.logEndOffset());
                }
                maybeIncrementHighWatermark();
                log.info("{}Became leader in epoch {} (was epoch {}) with log end offset {}, high watermark {}, "
                        + "ISR {}", logPrefix, newLeaderEpoch, previousEpoch, log_.logEndOffset(),
                        log_.highWatermark(), newIsr);
            } else if (changed) {
                log.info("{}Leader is now broker {} in epoch {}", logPrefix, newLeaderId, newLeaderEpoch);
            }
            return changed;
        } finally {
            leaderIsrLock.writeLock().unlock();
        }
    }

    /** Appends client records as leader; acks=all (-1) also requires min.insync.replicas members in the ISR. */
    public LogAppendInfo appendRecordsToLeader(MemoryRecords records, short requiredAcks) throws IOException {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            if (requiredAcks == -1) {
                int minIsr = log_.config().minInSyncReplicas;
                if (isr.size() < minIsr) {
                    throw new NotEnoughReplicasException("The size of the current ISR " + isr
                            + " is insufficient to satisfy the min.isr requirement of " + minIsr + " for partition "
                            + topicPartition);
                }
            }
            LogAppendInfo info = log_.appendAsLeader(records, leaderEpoch, AppendOrigin.CLIENT);
            maybeIncrementHighWatermark();
            return info;
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    /** Moves the high watermark to the smallest log end offset of the ISR members this leader knows of. */
    void maybeIncrementHighWatermark() {
        if (!isLeader()) {
            return;
        }
        // Only the leader's own replica state exists until follower tracking arrives with replication.
        long newHighWatermark = log_.logEndOffset();
        try {
            log_.maybeIncrementHighWatermark(log_.logEndOffsetMetadata());
        } catch (IOException e) {
            throw new IllegalStateException(logPrefix + "could not advance the high watermark to " + newHighWatermark, e);
        }
    }

    /** Reads for a consumer (isolation HIGH_WATERMARK or TXN_COMMITTED) from the leader. */
    public ReadResult read(long fetchOffset, Optional<Integer> currentLeaderEpoch, int maxBytes,
                           FetchIsolation isolation, boolean minOneMessage) throws IOException {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            checkLeaderEpoch(currentLeaderEpoch);
            LogOffsetSnapshot snapshot = log_.fetchOffsetSnapshot();
            FetchDataInfo info = log_.read(fetchOffset, maxBytes, isolation, minOneMessage);
            return new ReadResult(info, snapshot.highWatermark().messageOffset, snapshot.lastStableOffset().messageOffset,
                    snapshot.logStartOffset(), snapshot.logEndOffset().messageOffset);
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    public LogOffsetSnapshot offsetSnapshot() throws IOException {
        return log_.fetchOffsetSnapshot();
    }

    /**
     * ListOffsets on the leader. LATEST is the last offset a consumer of that isolation level may read (high
     * watermark or last stable offset); EARLIEST is the log start; other timestamps search the log and find nothing
     * past what the consumer may read.
     */
    public Optional<FileRecords.TimestampAndOffset> fetchOffsetForTimestamp(long timestamp, IsolationLevel isolation,
                                                                           Optional<Integer> currentLeaderEpoch) {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            checkLeaderEpoch(currentLeaderEpoch);
            long lastFetchable = isolation == IsolationLevel.READ_COMMITTED ? log_.lastStableOffset()
                    : log_.highWatermark();
            if (timestamp == ListOffsetsRequest.LATEST_TIMESTAMP) {
                return Optional.of(new FileRecords.TimestampAndOffset(RecordBatch.NO_TIMESTAMP, lastFetchable,
                        Optional.of(leaderEpoch)));
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
            leaderIsrLock.readLock().unlock();
        }
    }

    /** OffsetsForLeaderEpoch on the leader: the end offset of the requested epoch, Kafka semantics. */
    public Optional<OffsetAndEpoch> endOffsetForEpoch(int requestedEpoch, Optional<Integer> currentLeaderEpoch) {
        leaderIsrLock.readLock().lock();
        try {
            checkLeader();
            checkLeaderEpoch(currentLeaderEpoch);
            return log_.endOffsetForEpoch(requestedEpoch);
        } finally {
            leaderIsrLock.readLock().unlock();
        }
    }

    private void checkLeader() {
        if (!isLeader()) {
            throw new NotLeaderOrFollowerException("Broker " + localBrokerId + " is not the leader of "
                    + topicPartition + " (leader is " + leaderId + ")");
        }
    }

    /** Fences a client whose view of the leader epoch is older (FENCED) or newer (UNKNOWN) than ours. */
    public void checkLeaderEpoch(Optional<Integer> requested) {
        if (requested.isEmpty() || requested.get() == -1) {
            return;
        }
        int r = requested.get();
        if (r < leaderEpoch) {
            throw new FencedLeaderEpochException("Leader epoch " + r + " of the request is older than the current "
                    + leaderEpoch + " of " + topicPartition);
        }
        if (r > leaderEpoch) {
            throw new UnknownLeaderEpochException("Leader epoch " + r + " of the request is newer than the current "
                    + leaderEpoch + " of " + topicPartition);
        }
    }

    static boolean isConsumer(int replicaId) {
        return FetchRequest.isConsumer(replicaId);
    }

    @Override
    public String toString() {
        return logPrefix + "leader=" + leaderId + " epoch=" + leaderEpoch + " isr=" + isr;
    }

    /** What one partition read returned, with the offsets the Fetch response reports. */
    public record ReadResult(FetchDataInfo info, long highWatermark, long lastStableOffset, long logStartOffset,
                             long logEndOffset) {
    }

    /** Exceptions a client should see as an error code, not as a broker failure. */
    public static boolean isClientError(Throwable t) {
        return t instanceof ApiException;
    }
}
