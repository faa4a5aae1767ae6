package io.twinlog.replication;

import org.apache.kafka.common.protocol.Errors;

/**
 * The outcome of DeleteRecords for one partition: the low watermark reached, or an error. While waiting,
 * {@code requiredOffset} is the log start offset every in-sync replica must reach.
 */
public record DeleteRecordsResult(Errors error, long lowWatermark, long requiredOffset, boolean done) {
    public static DeleteRecordsResult error(Errors error) {
        return new DeleteRecordsResult(error, -1L, -1L, true);
    }

    public static DeleteRecordsResult completed(long lowWatermark) {
        return new DeleteRecordsResult(Errors.NONE, lowWatermark, lowWatermark, true);
    }

    static DeleteRecordsResult waitingFor(long requiredOffset) {
        return new DeleteRecordsResult(Errors.NONE, -1L, requiredOffset, false);
    }
}
