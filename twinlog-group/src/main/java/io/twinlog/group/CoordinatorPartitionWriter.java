package io.twinlog.group;

import io.twinlog.replication.HighWatermarkListener;
import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import io.twinlog.replication.DeleteRecordsResult;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.coordinator.common.runtime.PartitionWriter;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.VerificationGuard;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * How Kafka's coordinator runtime writes to Twinlog: batches go into the local leader replica of a coordinator
 * partition ({@code __consumer_offsets}, {@code __share_group_state}) without waiting for replication, and the
 * runtime learns that they are committed (replicated to the ISR) from high-watermark notifications, which it waits
 * for before answering clients.
 */
public final class CoordinatorPartitionWriter implements PartitionWriter, HighWatermarkListener {
    /** How long a pruning of the share coordinator's log waits for the followers, as a client's DeleteRecords may. */
    static final long DELETE_RECORDS_TIMEOUT_MS = 30_000;

    private final ReplicaManager replicaManager;
    private final TransactionalOffsetVerification verification;
    private final Map<TopicPartition, List<Listener>> listeners = new ConcurrentHashMap<>();

    /**
     * @param verification how a transactional offset commit is verified; the share coordinator writes no
     *                     transactional records, so its writer is given one that refuses
     */
    public CoordinatorPartitionWriter(ReplicaManager replicaManager, TransactionalOffsetVerification verification) {
        this.replicaManager = replicaManager;
        this.verification = verification;
    }

    @Override
    public void registerListener(TopicPartition tp, Listener listener) {
        listeners.computeIfAbsent(tp, k -> new CopyOnWriteArrayList<>()).add(listener);
    }

    @Override
    public void deregisterListener(TopicPartition tp, Listener listener) {
        List<Listener> l = listeners.get(tp);
        if (l != null) {
            l.remove(listener);
        }
    }

    @Override
    public void onHighWatermarkUpdated(TopicPartition tp, long highWatermark) {
        List<Listener> l = listeners.get(tp);
        if (l != null) {
            l.forEach(listener -> listener.onHighWatermarkUpdated(tp, highWatermark));
        }
    }

    @Override
    public LogConfig config(TopicPartition tp) {
        return partition(tp).log().config();
    }

    @Override
    public long append(TopicPartition tp, VerificationGuard guard, MemoryRecords records, short transactionVersion) {
        try {
            return replicaManager.appendAsCoordinator(tp, records, guard, transactionVersion);
        } catch (IOException e) {
            throw new KafkaStorageException("Could not append to " + tp + ": " + e.getMessage(), e);
        }
    }

    /** A transactional offset commit is verified with the producer's transaction coordinator first (KIP-890). */
    @Override
    public CompletableFuture<VerificationGuard> maybeStartTransactionVerification(TopicPartition tp, String transactionalId,
                                                                                  long producerId, short producerEpoch,
                                                                                  int apiVersion) {
        return verification.start(tp, transactionalId, producerId, producerEpoch, apiVersion);
    }

    /**
     * The share coordinator's pruning: records below the offset no share partition's state needs any more go, as
     * DeleteRecords moves the log start, once the followers have it too.
     */
    @Override
    public CompletableFuture<Void> deleteRecords(TopicPartition tp, long deleteBeforeOffset) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        replicaManager.deleteRecords(DELETE_RECORDS_TIMEOUT_MS, Map.of(tp, deleteBeforeOffset), results -> {
            DeleteRecordsResult result = results.get(tp);
            if (result.error() == Errors.NONE) {
                done.complete(null);
            } else {
                done.completeExceptionally(result.error().exception("Could not delete the records of " + tp
                        + " before " + deleteBeforeOffset));
            }
        });
        return done;
    }

    private Partition partition(TopicPartition tp) {
        return replicaManager.partition(tp).orElseThrow(() ->
                new NotLeaderOrFollowerException("This broker does not host " + tp));
    }
}
