package io.twinlog.transaction.internals;

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.coordinator.transaction.TxnTransitMetadata;

/** What the coordinator does with an InitProducerId for a transactional id ({@link TransactionDecisions}). */
public sealed interface InitDecision {
    /** Answer with this error; nothing is written and the metadata has no pending transition. */
    record Fail(Errors error) implements InitDecision {
    }

    /** Write this transition to the transaction log; once committed, answer with its producer id and epoch. */
    record Write(TxnTransitMetadata transit) implements InitDecision {
    }

    /**
     * An open transaction stands in the way: write this epoch fence, then abort the transaction, and answer
     * CONCURRENT_TRANSACTIONS so that the producer retries and gets a second, clean bump (Kafka's behaviour).
     */
    record FenceThenAbort(TxnTransitMetadata fence) implements InitDecision {
    }
}
