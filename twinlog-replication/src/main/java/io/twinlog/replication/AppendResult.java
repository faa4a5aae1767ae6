package io.twinlog.replication;

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ProduceResponse;

import java.util.List;

/** The outcome of appending one partition's records, as the Produce response reports it. */
public record AppendResult(Errors error, String errorMessage, long baseOffset, long logAppendTimeMs,
                           long logStartOffset, long lastOffset, List<ProduceResponse.RecordError> recordErrors) {

    public static AppendResult error(Errors error, String message) {
        return new AppendResult(error, message, -1L, -1L, -1L, -1L, List.of());
    }

    public AppendResult withError(Errors newError, String message) {
        return new AppendResult(newError, message, baseOffset, logAppendTimeMs, logStartOffset, lastOffset, recordErrors);
    }
}
