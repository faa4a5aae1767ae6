package io.twinlog.transaction;

import org.apache.kafka.common.protocol.Errors;

/**
 * How an EndTxn ended: its code and, for transaction version 2, the producer id and epoch the producer goes on with
 * (the epoch is bumped by every end; a new producer id once it ran out). -1 and -1 when refused.
 */
public record EndTxnResult(Errors error, long producerId, short producerEpoch) {
    public static EndTxnResult refused(Errors error) {
        return new EndTxnResult(error, -1L, (short) -1);
    }
}
