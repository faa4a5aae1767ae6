package io.twinlog.controller.decisions;

import java.util.List;

/**
 * What a controller decision returns (Kafka's {@code ControllerResult}): the partition-state changes to write, and
 * the answer for the caller if they are written. The shell writes the changes (fenced, version-checked) and
 * replaces the answer for the changed partitions if the write fails.
 */
public record ControllerResult<T>(List<StateChange> changes, T response) {
    public ControllerResult {
        changes = List.copyOf(changes);
    }
}
