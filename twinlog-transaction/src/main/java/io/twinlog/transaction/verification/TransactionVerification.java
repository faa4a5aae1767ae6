package io.twinlog.transaction.verification;

import io.twinlog.replication.ReplicaManager;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidPidMappingException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The partition leader's half of KIP-890: before the first transactional write of a producer epoch to a partition,
 * the leader asks the coordinator ({@link TransactionVerifier}) whether the partition is in the producer's open
 * transaction (or, for transaction version 2 producers, has it added), and appends with the log's
 * {@link VerificationGuard}, so a write that arrives after its transaction ended (a delayed Produce of an aborted
 * transaction) is refused instead of opening a transaction no coordinator will ever end, which would pin the last
 * stable offset and every read_committed consumer for good. Writes to a partition where the producer's transaction
 * is already open need no question and go straight on.
 *
 * <p>Errors reach the producer as Kafka's {@code ReplicaManager} sends them: INVALID_TXN_STATE ("not added to the
 * transaction"), the coordinator being unreachable, loading, moving or busy as NOT_ENOUGH_REPLICAS (retriable without a
 * metadata refresh); for a transaction version 2 producer CONCURRENT_TRANSACTIONS is first retried here for up to
 * {@code add.partitions.to.txn.retry.backoff.max.ms} (the previous transaction's markers are being written).
 */
public final class TransactionVerification implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TransactionVerification.class);

    private final ReplicaManager replicaManager;
    private final TransactionVerifier verifier;
    private final boolean enabled;
    private final long retryBackoffMs;
    private final long retryMaxMs;
    private final Time time;
    private final ScheduledExecutorService retries;

    /** What one producer's transactional batch of one partition starts with. */
    public record FirstBatch(long producerId, short producerEpoch, int baseSequence) {
        public static FirstBatch of(RecordBatch batch) {
            return new FirstBatch(batch.producerId(), batch.producerEpoch(), batch.baseSequence());
        }
    }

    /** A produce request's verification: the guard of each partition to append, the error of each refused. */
    public record Outcome(Map<TopicPartition, VerificationGuard> guards, Map<TopicPartition, ApiException> errors) {
        static Outcome none() {
            return new Outcome(Map.of(), Map.of());
        }
    }

    /**
     * @param enabled        {@code transaction.partition.verification.enable}: off, nothing is asked (and the log does
     *                       not require it)
     * @param retryBackoffMs {@code add.partitions.to.txn.retry.backoff.ms}
     * @param retryMaxMs     {@code add.partitions.to.txn.retry.backoff.max.ms}, capped by the request timeout
     */
    public TransactionVerification(int brokerId, ReplicaManager replicaManager, TransactionVerifier verifier,
                                   boolean enabled, long retryBackoffMs, long retryMaxMs, Time time) {
        this.replicaManager = replicaManager;
        this.verifier = verifier;
        this.enabled = enabled;
        this.retryBackoffMs = retryBackoffMs;
        this.retryMaxMs = retryMaxMs;
        this.time = time;
        this.retries = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "twinlog-txn-verify-retries-" + brokerId);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Verifies a Produce request's transactional partitions. Completes at once (on the caller's thread) when no
     * partition needs the coordinator; otherwise on the verifier's thread.
     *
     * @param batches each partition's first transactional batch
     */
    public CompletableFuture<Outcome> verifyProduce(String transactionalId, Map<TopicPartition, FirstBatch> batches,
                                                    short produceVersion) {
        if (!enabled || transactionalId == null || batches.isEmpty()) {
            return CompletableFuture.completedFuture(Outcome.none());
        }
        Set<Long> producerIds = batches.values().stream().map(FirstBatch::producerId).collect(Collectors.toSet());
        if (producerIds.size() > 1) {
            Map<TopicPartition, ApiException> errors = new LinkedHashMap<>();
            batches.keySet().forEach(tp -> errors.put(tp, new InvalidPidMappingException(
                    "Transactional records contained more than one producer ID")));
            return CompletableFuture.completedFuture(new Outcome(Map.of(), errors));
        }
        VerificationOperation operation = VerificationOperation.forProduceVersion(produceVersion);
        FirstBatch producer = batches.values().iterator().next();
        CompletableFuture<Outcome> outcome = new CompletableFuture<>();
        attempt(transactionalId, producer, batches, operation, time.milliseconds() + retryMaxMs,
                new HashMap<>(), new HashMap<>(), outcome);
        return outcome;
    }

    /** One round: guards started, the coordinator asked about those that need it, CONCURRENT_TRANSACTIONS retried. */
    private void attempt(String transactionalId, FirstBatch producer, Map<TopicPartition, FirstBatch> batches,
                         VerificationOperation operation, long retryDeadlineMs,
                         Map<TopicPartition, VerificationGuard> guards, Map<TopicPartition, ApiException> errors,
                         CompletableFuture<Outcome> outcome) {
        Map<TopicPartition, VerificationGuard> toAsk = new LinkedHashMap<>();
        batches.forEach((tp, batch) -> {
            try {
                VerificationGuard guard = replicaManager.maybeStartTransactionVerification(tp, batch.producerId(),
                        batch.baseSequence(), batch.producerEpoch(), operation.supportsEpochBump());
                if (guard != VerificationGuard.SENTINEL) {
                    toAsk.put(tp, guard);
                }
            } catch (ApiException e) {
                errors.put(tp, e);
            }
        });
        if (toAsk.isEmpty()) {
            outcome.complete(new Outcome(guards, errors));
            return;
        }
        verifier.verify(transactionalId, producer.producerId(), producer.producerEpoch(), toAsk.keySet(), operation)
                .whenComplete((answers, failure) -> {
                    if (failure != null) {
                        log.error("Verifying the transaction of {} failed", transactionalId, failure);
                        toAsk.keySet().forEach(tp -> errors.put(tp, Errors.UNKNOWN_SERVER_ERROR.exception()));
                        outcome.complete(new Outcome(guards, errors));
                        return;
                    }
                    Map<TopicPartition, FirstBatch> retry = new LinkedHashMap<>();
                    toAsk.forEach((tp, guard) -> {
                        Errors error = answers.getOrDefault(tp, Errors.UNKNOWN_SERVER_ERROR);
                        if (error == Errors.NONE) {
                            guards.put(tp, guard);
                        } else if (error == Errors.CONCURRENT_TRANSACTIONS && operation.supportsEpochBump()
                                && time.milliseconds() + retryBackoffMs < retryDeadlineMs) {
                            retry.put(tp, batches.get(tp));
                        } else {
                            errors.put(tp, produceError(error, operation));
                        }
                    });
                    if (retry.isEmpty()) {
                        outcome.complete(new Outcome(guards, errors));
                        return;
                    }
                    try {
                        retries.schedule(() -> attempt(transactionalId, producer, retry, operation, retryDeadlineMs,
                                guards, errors, outcome), retryBackoffMs, TimeUnit.MILLISECONDS);
                    } catch (RejectedExecutionException closing) {
                        retry.keySet().forEach(tp -> errors.put(tp, produceError(Errors.CONCURRENT_TRANSACTIONS,
                                operation)));
                        outcome.complete(new Outcome(guards, errors));
                    }
                });
    }

    /** A verification's code as the Produce answer carries it (Kafka's {@code ReplicaManager}). */
    static ApiException produceError(Errors error, VerificationOperation operation) {
        switch (error) {
            case INVALID_TXN_STATE:
                return error.exception("Partition was not added to the transaction");
            case NETWORK_EXCEPTION:
            case COORDINATOR_LOAD_IN_PROGRESS:
            case COORDINATOR_NOT_AVAILABLE:
            case NOT_COORDINATOR:
                return notEnoughReplicas(error);
            case CONCURRENT_TRANSACTIONS:
                // producers before transaction version 2 do not retry CONCURRENT_TRANSACTIONS on a produce
                return operation.supportsEpochBump() ? error.exception() : notEnoughReplicas(error);
            default:
                return error.exception();
        }
    }

    private static ApiException notEnoughReplicas(Errors error) {
        return new NotEnoughReplicasException("Unable to verify the partition has been added to the transaction. "
                + "Underlying error: " + error);
    }

    /**
     * The group coordinator's verification before a transactional offset commit to {@code offsetsPartition}
     * (Kafka's {@code CoordinatorPartitionWriter.maybeStartTransactionVerification}): the guard to append with, or the
     * coordinator's refusal as the future's exception.
     */
    public CompletableFuture<VerificationGuard> verifyOffsetCommit(TopicPartition offsetsPartition,
                                                                    String transactionalId, long producerId,
                                                                    short producerEpoch, int txnOffsetCommitVersion) {
        if (!enabled) {
            return CompletableFuture.completedFuture(VerificationGuard.SENTINEL);
        }
        VerificationOperation operation = VerificationOperation.forTxnOffsetCommitVersion(txnOffsetCommitVersion);
        VerificationGuard guard;
        try {
            guard = replicaManager.maybeStartTransactionVerification(offsetsPartition, producerId,
                    RecordBatch.NO_SEQUENCE, producerEpoch, operation.supportsEpochBump());
        } catch (ApiException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (guard == VerificationGuard.SENTINEL) {
            return CompletableFuture.completedFuture(guard);
        }
        return verifier.verify(transactionalId, producerId, producerEpoch, Set.of(offsetsPartition), operation)
                .thenCompose(answers -> {
                    Errors error = answers.getOrDefault(offsetsPartition, Errors.UNKNOWN_SERVER_ERROR);
                    return error == Errors.NONE ? CompletableFuture.completedFuture(guard)
                            : CompletableFuture.failedFuture(error.exception());
                });
    }

    @Override
    public void close() {
        retries.shutdownNow();
    }
}
