package io.twinlog.transaction;

import java.util.OptionalLong;

/**
 * Cluster-unique producer ids for the transaction coordinator: the broker's blocks claimed from ZooKeeper. Never
 * blocks: empty while a block is being claimed, which the coordinator answers COORDINATOR_LOAD_IN_PROGRESS (a
 * retriable error, as Kafka's coordinator answers while its own block request is under way).
 */
@FunctionalInterface
public interface ProducerIdSource {
    OptionalLong generateProducerId();
}
