package io.twinlog.transaction.verification;

/**
 * What a partition leader asks a transaction coordinator about a producer's first write to the partition in a
 * transaction (KIP-890), by what the producer's request version lets it understand, as Kafka 4.4's
 * {@code AddPartitionsToTxnManager.TransactionSupportedOperation}: before Produce v11 / TxnOffsetCommit v4 the
 * producer knows none of KIP-890's errors, up to Produce v11 / TxnOffsetCommit v4 it knows TRANSACTION_ABORTABLE,
 * and from Produce v12 / TxnOffsetCommit v5 (transaction version 2) it no longer adds partitions itself, so the
 * leader adds the partition for it.
 */
public enum VerificationOperation {
    /** Verify only; TRANSACTION_ABORTABLE is answered INVALID_TXN_STATE, which such producers know. */
    DEFAULT_ERROR(false),
    /** Verify only; TRANSACTION_ABORTABLE is answered as is. */
    GENERIC_ERROR_SUPPORTED(false),
    /** Add the partition to the transaction (verifyOnly false); the producer's epoch may have been bumped. */
    ADD_PARTITION(true);

    private final boolean supportsEpochBump;

    VerificationOperation(boolean supportsEpochBump) {
        this.supportsEpochBump = supportsEpochBump;
    }

    /** Whether the leader adds the partition (transaction version 2), rather than only verifying it. */
    public boolean supportsEpochBump() {
        return supportsEpochBump;
    }

    public static VerificationOperation forProduceVersion(short version) {
        return version > 11 ? ADD_PARTITION : version > 10 ? GENERIC_ERROR_SUPPORTED : DEFAULT_ERROR;
    }

    public static VerificationOperation forTxnOffsetCommitVersion(int version) {
        return version > 4 ? ADD_PARTITION : version > 3 ? GENERIC_ERROR_SUPPORTED : DEFAULT_ERROR;
    }
}
