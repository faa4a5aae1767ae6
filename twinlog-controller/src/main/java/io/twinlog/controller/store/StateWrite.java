package io.twinlog.controller.store;

import io.twinlog.controller.metadata.PartitionState;
import org.apache.kafka.common.TopicPartition;

/** A partition-state write: the new state and the version it replaces (-1: the state does not exist yet). */
public record StateWrite(TopicPartition partition, PartitionState state, int expectedVersion) {
    public static final int CREATE = -1;

    public boolean creates() {
        return expectedVersion < 0;
    }
}
