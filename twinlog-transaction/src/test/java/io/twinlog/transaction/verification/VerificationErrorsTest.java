package io.twinlog.transaction.verification;

import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * How a coordinator's verification answer reaches the producer, as Kafka 4.4's brokers send it: which producers
 * (by request version) know which errors, and which errors are made retriable without a metadata refresh.
 */
@Timeout(10)
class VerificationErrorsTest {

    @Test
    void theRequestVersionSaysWhatTheProducerUnderstands() {
        assertEquals(VerificationOperation.DEFAULT_ERROR, VerificationOperation.forProduceVersion((short) 10));
        assertEquals(VerificationOperation.GENERIC_ERROR_SUPPORTED, VerificationOperation.forProduceVersion((short) 11));
        assertEquals(VerificationOperation.ADD_PARTITION, VerificationOperation.forProduceVersion((short) 12));
        assertEquals(VerificationOperation.DEFAULT_ERROR, VerificationOperation.forTxnOffsetCommitVersion(3));
        assertEquals(VerificationOperation.GENERIC_ERROR_SUPPORTED, VerificationOperation.forTxnOffsetCommitVersion(4));
        assertEquals(VerificationOperation.ADD_PARTITION, VerificationOperation.forTxnOffsetCommitVersion(5));
    }

    @Test
    void coordinatorAnswersAreTranslatedForOlderProducers() {
        assertEquals(Errors.INVALID_PRODUCER_EPOCH, TransactionVerifier.producerFacing(Errors.PRODUCER_FENCED,
                VerificationOperation.ADD_PARTITION));
        assertEquals(Errors.INVALID_TXN_STATE, TransactionVerifier.producerFacing(Errors.TRANSACTION_ABORTABLE,
                VerificationOperation.DEFAULT_ERROR));
        assertEquals(Errors.TRANSACTION_ABORTABLE, TransactionVerifier.producerFacing(Errors.TRANSACTION_ABORTABLE,
                VerificationOperation.GENERIC_ERROR_SUPPORTED));
    }

    @Test
    void aCoordinatorThatCannotAnswerNowIsNotEnoughReplicasForTheProducer() {
        for (Errors error : new Errors[]{Errors.NETWORK_EXCEPTION, Errors.COORDINATOR_LOAD_IN_PROGRESS,
                Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR}) {
            assertEquals(NotEnoughReplicasException.class, TransactionVerification.produceError(error,
                    VerificationOperation.ADD_PARTITION).getClass(), error.name());
        }
        // only transaction version 2 producers retry CONCURRENT_TRANSACTIONS on a produce
        assertEquals(NotEnoughReplicasException.class, TransactionVerification.produceError(
                Errors.CONCURRENT_TRANSACTIONS, VerificationOperation.GENERIC_ERROR_SUPPORTED).getClass());
        assertEquals(Errors.CONCURRENT_TRANSACTIONS, Errors.forException(TransactionVerification.produceError(
                Errors.CONCURRENT_TRANSACTIONS, VerificationOperation.ADD_PARTITION)));
        assertEquals(Errors.INVALID_TXN_STATE, Errors.forException(TransactionVerification.produceError(
                Errors.INVALID_TXN_STATE, VerificationOperation.DEFAULT_ERROR)));
    }
}
