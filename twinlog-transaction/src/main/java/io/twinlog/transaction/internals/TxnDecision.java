package io.twinlog.transaction.internals;

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.coordinator.transaction.TxnTransitMetadata;

/** What the coordinator does with an AddPartitionsToTxn or EndTxn ({@link TransactionDecisions}). */
public sealed interface TxnDecision {
    /** Answer with this code (NONE included: already done, a retry); nothing is written. */
    record Reply(Errors error) implements TxnDecision {
    }

    /** Write this transition to the transaction log; once committed, answer NONE. */
    record Write(TxnTransitMetadata transit) implements TxnDecision {
    }
}
