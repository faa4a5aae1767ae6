package io.twinlog.controller.decisions;

import io.twinlog.controller.metadata.PartitionState;
import org.apache.kafka.common.protocol.Errors;

import java.util.Optional;

/** The answer for one partition of an AlterPartition request: an error, or the state now in force. */
public record IsrChangeResult(Errors error, Optional<PartitionState> state) {
    public static IsrChangeResult error(Errors error) {
        return new IsrChangeResult(error, Optional.empty());
    }
}
