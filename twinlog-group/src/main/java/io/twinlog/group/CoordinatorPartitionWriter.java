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
 *
 * <p>The runtime registers its listener only once it has loaded a partition, and its loader reads the high
 * watermark as it goes: a move of the high watermark after the loader's last look and before the registration
 * would reach nobody. A new leader's high watermark is often behind its log end (the followers had not yet learned
 * the last offsets), so such a move is common right after an election, and the runtime would then hold every answer
 * that waits for the loaded records to be committed (a ReadShareGroupState, which writes nothing, timed out after
 * {@code share.coordinator.write.timeout.ms} until the next write). So a listener is told the high watermark at
 * once when it registers, and each listener only ever hears a higher one than it heard before (a notification
 * racing the registration, or two threads moving the high watermark, cannot take it back: the runtime refuses a
 * committed offset that goes down).
 */
public final class CoordinatorPartitionWriter implements PartitionWriter, HighWatermarkListener {
    /** How long a pruning of the share coordinator's log waits for the followers, as a client's DeleteRecords may. */
    static final long DELETE_RECORDS_TIMEOUT_MS = 30_000;

    private final ReplicaManager replicaManager;
    private final TransactionalOffsetVerification verification;
    private final Map<TopicPartition, List<IncreasingHighWatermark>> listeners = new ConcurrentHashMap<>();

    /**
     * @param verification how a transactional offset commit is verified; the share coordinator writes no
     *                     transactional records, so its writer is given one that refuses
     */
    public CoordinatorPartitionWriter(ReplicaManager replicaManager, TransactionalOffsetVerification verification) {
        this.replicaManager = replicaManager;
        this.verification = verification;
    }

    /**
     * Registers the runtime's listener of a partition and tells it the partition's high watermark now, if this broker
     * leads the partition (a follower's high watermark may cover records the coordinator did not load).
     */
    @Override
    public void registerListener(TopicPartition tp, Listener listener) {
        IncreasingHighWatermark registered = new IncreasingHighWatermark(listener);
        listeners.computeIfAbsent(tp, k -> new CopyOnWriteArrayList<>()).add(registered);
        replicaManager.partition(tp).filter(Partition::isLeader)
                .ifPresent(p -> registered.tell(tp, p.log().highWatermark()));
    }

    @Override
    public void deregisterListener(TopicPartition tp, Listener listener) {
        List<IncreasingHighWatermark> l = listeners.get(tp);
        if (l != null) {
            l.removeIf(registered -> registered.listener == listener);
        }
    }

    @Override
    public void onHighWatermarkUpdated(TopicPartition tp, long highWatermark) {
        List<IncreasingHighWatermark> l = listeners.get(tp);
        if (l != null) {
            l.forEach(registered -> registered.tell(tp, highWatermark));
        }
    }

    /** One runtime listener, told only high watermarks above the last one it was told. */
    private static final class IncreasingHighWatermark {
        private final Listener listener;
        private long told = -1L;

        IncreasingHighWatermark(Listener listener) {
            this.listener = listener;
        }

        synchronized void tell(TopicPartition tp, long highWatermark) {
            if (highWatermark > told) {
                told = highWatermark;
                listener.onHighWatermarkUpdated(tp, highWatermark);
            }
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
