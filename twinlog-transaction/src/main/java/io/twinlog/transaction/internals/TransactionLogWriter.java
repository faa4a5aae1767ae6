package io.twinlog.transaction.internals;

import io.twinlog.replication.AppendResult;
import io.twinlog.replication.ReplicaManager;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.transaction.TransactionLog;
import org.apache.kafka.coordinator.transaction.TxnTransitMetadata;
import org.apache.kafka.server.common.TransactionVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Writes a transactional id's state to its {@code __transaction_state} partition in Kafka's record format
 * ({@link TransactionLog}) with acks=all, and tells the coordinator the outcome in the error codes Kafka's
 * coordinator gives its clients: the future completes on whichever thread saw the ISR take the record (or time
 * out), never blocking the caller.
 */
public final class TransactionLogWriter {
    private static final Logger log = LoggerFactory.getLogger(TransactionLogWriter.class);
    private final ReplicaManager replicaManager;
    private final long timeoutMs;
    private final Time time;

    /** @param timeoutMs how long a write may wait for the ISR ({@code request.timeout.ms}, as Kafka's) */
    public TransactionLogWriter(ReplicaManager replicaManager, long timeoutMs, Time time) {
        this.replicaManager = replicaManager;
        this.timeoutMs = timeoutMs;
        this.time = time;
    }

    /**
     * Writes {@code transit} as the state of {@code transactionalId}, in the record version {@code version} uses,
     * only while this broker leads {@code tp} in {@code coordinatorEpoch}.
     */
    public CompletableFuture<Errors> write(TopicPartition tp, int coordinatorEpoch, String transactionalId,
                                           TxnTransitMetadata transit, TransactionVersion version) {
        return append(tp, coordinatorEpoch, transactionalId, () -> TransactionLog.valueToBytes(transit, version));
    }

    /** Writes the tombstone that removes an expired transactional id when the partition is compacted. */
    public CompletableFuture<Errors> writeTombstone(TopicPartition tp, int coordinatorEpoch, String transactionalId) {
        return append(tp, coordinatorEpoch, transactionalId, () -> null);
    }

    private CompletableFuture<Errors> append(TopicPartition tp, int coordinatorEpoch, String transactionalId,
                                             Supplier<byte[]> value) {
        CompletableFuture<Errors> outcome = new CompletableFuture<>();
        try {
            MemoryRecords records = MemoryRecords.withRecords(Compression.NONE,
                    new SimpleRecord(time.milliseconds(), TransactionLog.keyToBytes(transactionalId), value.get()));
            replicaManager.appendCoordinatorRecords(timeoutMs, tp, coordinatorEpoch, records, result ->
                    outcome.complete(coordinatorError(tp, transactionalId, result)));
        } catch (RuntimeException e) {
            // broad: an append failure of any kind is the caller's error answer
            log.error("Could not write the state of transactional id {} to {}", transactionalId, tp, e);
            outcome.complete(Errors.UNKNOWN_SERVER_ERROR);
        }
        return outcome;
    }

    /**
     * Kafka's mapping of a failed state write to what the coordinator's client is told: the partition gone or too
     * few replicas in sync mean the coordinator is not available for now; losing leadership or the disk means
     * another broker coordinates it; anything else is a server error (logged, the record was not written).
     */
    static Errors coordinatorError(TopicPartition tp, String transactionalId, AppendResult result) {
        return switch (result.error()) {
            case NONE -> Errors.NONE;
            case UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT
                    -> Errors.COORDINATOR_NOT_AVAILABLE;
            case NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR -> Errors.NOT_COORDINATOR;
            default -> {
                log.error("Writing the state of transactional id {} to {} failed: {} ({})", transactionalId, tp,
                        result.error(), result.errorMessage());
                yield Errors.UNKNOWN_SERVER_ERROR;
            }
        };
    }
}
