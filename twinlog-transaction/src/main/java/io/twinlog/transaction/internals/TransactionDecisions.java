package io.twinlog.transaction.internals;

import io.twinlog.transaction.ExpectedProducer;
import io.twinlog.transaction.ProducerIdSource;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.coordinator.transaction.TransactionMetadata;

import java.util.Optional;
import java.util.OptionalLong;

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
}
