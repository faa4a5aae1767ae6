package io.twinlog.group;

import io.twinlog.replication.HighWatermarkListener;
import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
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
 * How Kafka's coordinator runtime writes to Twinlog: batches go into the local leader replica of a
 * {@code __consumer_offsets} partition without waiting for replication, and the runtime learns that they are
 * committed (replicated to the ISR) from high-watermark notifications, which it waits for before answering clients.
 */
final class CoordinatorPartitionWriter implements PartitionWriter, HighWatermarkListener {
    private final ReplicaManager replicaManager;
    private final TransactionalOffsetVerification verification;
    private final Map<TopicPartition, List<Listener>> listeners = new ConcurrentHashMap<>();

    CoordinatorPartitionWriter(ReplicaManager replicaManager, TransactionalOffsetVerification verification) {
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

    /** Used by the share coordinator only, which Twinlog does not host. */
    @Override
    public CompletableFuture<Void> deleteRecords(TopicPartition tp, long deleteBeforeOffset) {
        return CompletableFuture.failedFuture(new KafkaException("deleteRecords is not supported for " + tp));
    }

    private Partition partition(TopicPartition tp) {
        return replicaManager.partition(tp).orElseThrow(() ->
                new NotLeaderOrFollowerException("This broker does not host " + tp));
    }
}
