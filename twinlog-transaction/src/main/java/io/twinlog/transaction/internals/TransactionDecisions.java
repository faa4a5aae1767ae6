package io.twinlog.transaction.internals;

import io.twinlog.transaction.ExpectedProducer;
import io.twinlog.transaction.ProducerIdSource;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.coordinator.transaction.TransactionMetadata;
import org.apache.kafka.coordinator.transaction.TransactionState;
import org.apache.kafka.server.common.TransactionVersion;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The transaction coordinator's rules, as Kafka 4.4's coordinator applies them, over Kafka's own
 * {@link TransactionMetadata} state machine: which request is refused with which error, and which transition is
 * written. No I/O: the caller (the coordinator's event thread) writes what is decided. A decided transition has
 * already been marked pending on the metadata by the library's {@code prepare*} call, as in Kafka.
 */
public final class TransactionDecisions {
    private TransactionDecisions() {
    }

    /**
     * Checks an InitProducerId before its transactional id is looked up: an empty id is INVALID_REQUEST (the
     * producer client refuses it too), a timeout above {@code transaction.max.timeout.ms} (or not positive)
     * INVALID_TRANSACTION_TIMEOUT.
     */
    public static Optional<Errors> checkInit(String transactionalId, int timeoutMs, int maxTimeoutMs) {
        if (transactionalId.isEmpty()) {
            return Optional.of(Errors.INVALID_REQUEST);
        }
        if (timeoutMs <= 0 || timeoutMs > maxTimeoutMs) {
            return Optional.of(Errors.INVALID_TRANSACTION_TIMEOUT);
        }
        return Optional.empty();
    }

    /**
     * InitProducerId for a known transactional id: a transition already in flight or a transaction being completed
     * is CONCURRENT_TRANSACTIONS (retriable); an expected producer that is neither the current one (nor the
     * previous one retrying after its epoch ran out) is PRODUCER_FENCED; otherwise the epoch is bumped (a new
     * producer id once the epoch is exhausted), and an open transaction is fenced and aborted first.
     */
    public static InitDecision initProducerId(TransactionMetadata txn, int timeoutMs, Optional<ExpectedProducer> expected,
                                              ProducerIdSource producerIds, long nowMs) {
        if (txn.pendingTransitionInProgress()) {
            return new InitDecision.Fail(Errors.CONCURRENT_TRANSACTIONS);
        }
        if (expected.isPresent() && !isValidExpectedProducer(txn, expected.get())) {
            return new InitDecision.Fail(Errors.PRODUCER_FENCED);
        }
        switch (txn.state()) {
            case PREPARE_ABORT, PREPARE_COMMIT -> {
                return new InitDecision.Fail(Errors.CONCURRENT_TRANSACTIONS);
            }
            case EMPTY, COMPLETE_ABORT, COMPLETE_COMMIT -> {
                if (txn.isProducerEpochExhausted()
                        && expected.map(e -> e.epoch() == txn.producerEpoch()).orElse(true)) {
                    OptionalLong producerId = producerIds.generateProducerId();
                    if (producerId.isEmpty()) {
                        return new InitDecision.Fail(Errors.COORDINATOR_LOAD_IN_PROGRESS);
                    }
                    return new InitDecision.Write(txn.prepareProducerIdRotation(producerId.getAsLong(), timeoutMs,
                            nowMs, expected.isPresent()));
                }
                try {
                    return new InitDecision.Write(txn.prepareIncrementProducerEpoch(timeoutMs,
                            expected.map(ExpectedProducer::epoch), nowMs));
                } catch (ApiException e) {
                    // PRODUCER_FENCED: the expected epoch is neither the current nor the last one
                    return new InitDecision.Fail(Errors.forException(e));
                }
            }
            case ONGOING -> {
                return new InitDecision.FenceThenAbort(txn.prepareFenceProducerEpoch());
            }
            default -> throw new IllegalStateException("Transactional id " + txn.transactionalId() + " is in state "
                    + txn.state() + ", which no InitProducerId can find: the coordinator's state is corrupt");
        }
    }

    /**
     * Kafka's rule for a producer re-initializing with its last producer id and epoch: accepted if the metadata was
     * just created (epoch -1), if the producer id is the current one (its epoch is checked by the bump), or if it
     * is the previous one and its epoch was exhausted (a retry after a rotation whose answer was lost).
     */
    private static boolean isValidExpectedProducer(TransactionMetadata txn, ExpectedProducer expected) {
        return txn.producerEpoch() == RecordBatch.NO_PRODUCER_EPOCH
                || expected.producerId() == txn.producerId()
                || (expected.producerId() == txn.prevProducerId()
                && TransactionMetadata.isEpochExhausted(expected.epoch()));
    }

    /**
     * AddPartitionsToTxn (and AddOffsetsToTxn, which adds the group's offsets partition) from the producer that
     * owns the id (Kafka's {@code handleAddPartitionsToTransaction}), also for a partition leader adding a partition
     * for a transaction version 2 producer: a transition in flight is CONCURRENT_TRANSACTIONS (retriable), an unknown
     * id or another producer id INVALID_PRODUCER_ID_MAPPING, another epoch PRODUCER_FENCED, a transaction being
     * completed CONCURRENT_TRANSACTIONS; partitions already in the open transaction need no write.
     */
    public static TxnDecision addPartitions(Optional<TransactionMetadata> found, long producerId, short producerEpoch,
                                            Set<TopicPartition> partitions, TransactionVersion version, long nowMs) {
        if (found.isEmpty()) {
            return new TxnDecision.Reply(Errors.INVALID_PRODUCER_ID_MAPPING);
        }
        TransactionMetadata txn = found.get();
        // Kafka's order: a transition in flight first, whoever asks
        if (txn.pendingTransitionInProgress()) {
            return new TxnDecision.Reply(Errors.CONCURRENT_TRANSACTIONS);
        }
        if (txn.producerId() != producerId) {
            return new TxnDecision.Reply(Errors.INVALID_PRODUCER_ID_MAPPING);
        }
        if (txn.producerEpoch() != producerEpoch) {
            return new TxnDecision.Reply(Errors.PRODUCER_FENCED);
        }
        if (txn.state() == TransactionState.PREPARE_COMMIT || txn.state() == TransactionState.PREPARE_ABORT) {
            return new TxnDecision.Reply(Errors.CONCURRENT_TRANSACTIONS);
        }
        if (txn.state() == TransactionState.ONGOING && txn.topicPartitions().containsAll(partitions)) {
            return new TxnDecision.Reply(Errors.NONE);
        }
        return new TxnDecision.Write(txn.prepareAddPartitions(partitions, nowMs, version));
    }

    /**
     * A partition leader's verification (KIP-890, AddPartitionsToTxn v4+ with {@code verifyOnly}; Kafka's
     * {@code handleVerifyPartitionsInTransaction}): an unknown id or another producer id is INVALID_PRODUCER_ID_MAPPING,
     * another epoch PRODUCER_FENCED, a transition in flight or a transaction being completed CONCURRENT_TRANSACTIONS,
     * each for every partition; otherwise each partition is NONE if the open transaction has it, else
     * TRANSACTION_ABORTABLE (a write that came after its transaction ended, or that the producer never added). Nothing
     * is written.
     */
    public static Map<TopicPartition, Errors> verifyPartitions(Optional<TransactionMetadata> found, long producerId,
                                                               short producerEpoch,
                                                               Collection<TopicPartition> partitions) {
        Errors all = null;
        if (found.isEmpty() || found.get().producerId() != producerId) {
            all = Errors.INVALID_PRODUCER_ID_MAPPING;
        } else if (found.get().producerEpoch() != producerEpoch) {
            all = Errors.PRODUCER_FENCED;
        } else if (found.get().pendingTransitionInProgress()
                || found.get().state() == TransactionState.PREPARE_COMMIT
                || found.get().state() == TransactionState.PREPARE_ABORT) {
            all = Errors.CONCURRENT_TRANSACTIONS;
        }
        Map<TopicPartition, Errors> errors = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            errors.put(tp, all != null ? all : found.get().topicPartitions().contains(tp) ? Errors.NONE
                    : Errors.TRANSACTION_ABORTABLE);
        }
        return errors;
    }

    /**
     * EndTxn (Kafka's {@code endTransaction}): by the rules of {@code version}, the request's transaction version
     * for a producer's EndTxn, the transaction's own for the coordinator's aborts. See
     * {@link #endTransactionWithoutBump} and {@link #endTransactionWithBump}.
     */
    public static TxnDecision endTransaction(Optional<TransactionMetadata> found, long producerId, short producerEpoch,
                                             TransactionResult result, boolean fromClient,
                                             TransactionVersion version, ProducerIdSource producerIds, long nowMs) {
        return version.supportsEpochBump()
                ? endTransactionWithBump(found, producerId, producerEpoch, result, fromClient, version, producerIds,
                        nowMs)
                : endTransactionWithoutBump(found, producerId, producerEpoch, result, fromClient, version, nowMs);
    }

    /**
     * EndTxn without KIP-890's epoch bump (transaction version 0 or 1; Kafka's {@code endTransactionWithTV1}): from
     * the producer, exactly its epoch; from the coordinator itself (aborting a fenced or timed-out transaction), an
     * epoch not below the id's. An open transaction goes to PREPARE_COMMIT or PREPARE_ABORT (the epoch fence the
     * coordinator prepared, if any, is folded into the abort); a retry of a completed end is NONE; a retry of an end
     * being completed CONCURRENT_TRANSACTIONS; anything else (ending with no transaction open, committing an abort)
     * INVALID_TXN_STATE.
     */
    static TxnDecision endTransactionWithoutBump(Optional<TransactionMetadata> found, long producerId,
                                                short producerEpoch, TransactionResult result, boolean fromClient,
                                                TransactionVersion version, long nowMs) {
        if (found.isEmpty() || found.get().producerId() != producerId) {
            return new TxnDecision.Reply(Errors.INVALID_PRODUCER_ID_MAPPING);
        }
        TransactionMetadata txn = found.get();
        if ((fromClient && producerEpoch != txn.producerEpoch()) || producerEpoch < txn.producerEpoch()) {
            return new TxnDecision.Reply(Errors.PRODUCER_FENCED);
        }
        boolean fencing = txn.pendingState().equals(Optional.of(TransactionState.PREPARE_EPOCH_FENCE));
        if (txn.pendingTransitionInProgress() && !fencing) {
            return new TxnDecision.Reply(Errors.CONCURRENT_TRANSACTIONS);
        }
        boolean commit = result == TransactionResult.COMMIT;
        switch (txn.state()) {
            case ONGOING -> {
                TransactionState next = commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT;
                if (fencing) {
                    if (commit) {
                        return new TxnDecision.Reply(Errors.INVALID_TXN_STATE);
                    }
                    // the fenced epoch becomes the transaction's: its ABORT markers fence the old producer's
                    // appends on every partition
                    txn.pendingState(Optional.empty());
                    txn.setProducerEpoch(producerEpoch);
                    txn.setLastProducerEpoch(RecordBatch.NO_PRODUCER_EPOCH);
                }
                return new TxnDecision.Write(txn.prepareAbortOrCommit(next, version, RecordBatch.NO_PRODUCER_ID,
                        nowMs, false));
            }
            case COMPLETE_COMMIT -> {
                return new TxnDecision.Reply(commit ? Errors.NONE : Errors.INVALID_TXN_STATE);
            }
            case COMPLETE_ABORT -> {
                return new TxnDecision.Reply(commit ? Errors.INVALID_TXN_STATE : Errors.NONE);
            }
            case PREPARE_COMMIT -> {
                return new TxnDecision.Reply(commit ? Errors.CONCURRENT_TRANSACTIONS : Errors.INVALID_TXN_STATE);
            }
            case PREPARE_ABORT -> {
                return new TxnDecision.Reply(commit ? Errors.INVALID_TXN_STATE : Errors.CONCURRENT_TRANSACTIONS);
            }
            case EMPTY -> {
                return new TxnDecision.Reply(Errors.INVALID_TXN_STATE);
            }
            default -> throw new IllegalStateException("Transactional id " + txn.transactionalId() + " is in state "
                    + txn.state() + ", which no EndTxn can find: the coordinator's state is corrupt");
        }
    }

    /**
     * EndTxn with KIP-890's epoch bump (transaction version 2, EndTxn v5; Kafka's {@code endTransaction}): every end
     * bumps the producer's epoch (a new producer id once the epoch is exhausted), which the answer hands back, so a
     * late write of the ended transaction is fenced on every partition. Because an epoch that is still the same
     * means the next transaction never started, a retry is recognized by the epoch being one below the id's (or by
     * the previous producer id after a rotation): a retried end that completed is NONE, one still being completed
     * CONCURRENT_TRANSACTIONS. An abort with no transaction open (EMPTY, or after a completed end) is written too
     * (it bumps the epoch); a commit with none is INVALID_TXN_STATE. A transition in flight other than the
     * coordinator's own epoch fence is CONCURRENT_TRANSACTIONS before anything else is checked, as in Kafka.
     */
    static TxnDecision endTransactionWithBump(Optional<TransactionMetadata> found, long producerId,
                                             short producerEpoch, TransactionResult result, boolean fromClient,
                                             TransactionVersion version, ProducerIdSource producerIds, long nowMs) {
        if (found.isEmpty()) {
            return new TxnDecision.Reply(Errors.INVALID_PRODUCER_ID_MAPPING);
        }
        TransactionMetadata txn = found.get();
        boolean fencing = txn.pendingState().equals(Optional.of(TransactionState.PREPARE_EPOCH_FENCE));
        boolean retryOnOverflow = !fencing && txn.prevProducerId() == producerId
                && producerEpoch == Short.MAX_VALUE - 1 && txn.producerEpoch() == 0;
        boolean retryOnEpochBump = !fencing && txn.producerEpoch() == producerEpoch + 1;
        boolean retry = retryOnEpochBump || retryOnOverflow;
        boolean validEpoch;
        if (fencing) {
            validEpoch = (!fromClient || producerEpoch == txn.producerEpoch()) && producerEpoch >= txn.producerEpoch();
        } else {
            validEpoch = switch (txn.state()) {
                case PREPARE_COMMIT, PREPARE_ABORT -> retry;
                case COMPLETE_COMMIT, COMPLETE_ABORT -> retry || producerEpoch == txn.producerEpoch();
                default -> producerEpoch == txn.producerEpoch();
            };
        }
        if (txn.pendingTransitionInProgress() && !fencing) {
            return new TxnDecision.Reply(Errors.CONCURRENT_TRANSACTIONS);
        }
        if (txn.producerId() != producerId && !retryOnOverflow) {
            return new TxnDecision.Reply(Errors.INVALID_PRODUCER_ID_MAPPING);
        }
        if (!validEpoch) {
            return new TxnDecision.Reply(Errors.PRODUCER_FENCED);
        }
        boolean commit = result == TransactionResult.COMMIT;
        switch (txn.state()) {
            case ONGOING -> {
                return complete(txn, commit ? TransactionState.PREPARE_COMMIT : TransactionState.PREPARE_ABORT,
                        false, fencing, version, producerIds, nowMs);
            }
            case COMPLETE_COMMIT -> {
                if (commit) {
                    return new TxnDecision.Reply(retry ? Errors.NONE : Errors.INVALID_TXN_STATE);
                }
                return retry ? new TxnDecision.Reply(Errors.INVALID_TXN_STATE)
                        : complete(txn, TransactionState.PREPARE_ABORT, true, false, version, producerIds, nowMs);
            }
            case COMPLETE_ABORT -> {
                if (commit) {
                    return new TxnDecision.Reply(Errors.INVALID_TXN_STATE);
                }
                return retry ? new TxnDecision.Reply(Errors.NONE)
                        : complete(txn, TransactionState.PREPARE_ABORT, true, false, version, producerIds, nowMs);
            }
            case PREPARE_COMMIT -> {
                return new TxnDecision.Reply(commit ? Errors.CONCURRENT_TRANSACTIONS : Errors.INVALID_TXN_STATE);
            }
            case PREPARE_ABORT -> {
                return new TxnDecision.Reply(commit ? Errors.INVALID_TXN_STATE : Errors.CONCURRENT_TRANSACTIONS);
            }
            case EMPTY -> {
                return commit ? new TxnDecision.Reply(Errors.INVALID_TXN_STATE)
                        : complete(txn, TransactionState.PREPARE_ABORT, true, false, version, producerIds, nowMs);
            }
            default -> throw new IllegalStateException("Transactional id " + txn.transactionalId() + " is in state "
                    + txn.state() + ", which no EndTxn can find: the coordinator's state is corrupt");
        }
    }

    /**
     * The PREPARE_x transition of a transaction version 2 end: the epoch bump is the library's; a new producer id is
     * taken when the epoch is exhausted; the coordinator's own fence is cleared, its bump being the abort's.
     */
    private static TxnDecision complete(TransactionMetadata txn, TransactionState next, boolean noPartitionAdded,
                                        boolean fencing, TransactionVersion version, ProducerIdSource producerIds,
                                        long nowMs) {
        long nextProducerId = RecordBatch.NO_PRODUCER_ID;
        if (txn.isProducerEpochExhausted()) {
            OptionalLong id = producerIds.generateProducerId();
            if (id.isEmpty()) {
                return new TxnDecision.Reply(Errors.COORDINATOR_LOAD_IN_PROGRESS);
            }
            nextProducerId = id.getAsLong();
        }
        if (fencing && next == TransactionState.PREPARE_ABORT) {
            txn.pendingState(Optional.empty());
        } else if (fencing) {
            return new TxnDecision.Reply(Errors.INVALID_TXN_STATE);
        }
        return new TxnDecision.Write(txn.prepareAbortOrCommit(next, version, nextProducerId, nowMs,
                noPartitionAdded));
    }
}
