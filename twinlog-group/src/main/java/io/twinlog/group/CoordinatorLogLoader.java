package io.twinlog.group;

import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.common.runtime.CoordinatorLoader;
import org.apache.kafka.coordinator.common.runtime.CoordinatorLoaderImpl;
import org.apache.kafka.coordinator.common.runtime.Deserializer;

/**
 * Kafka's loader of a coordinator partition, reading the local replica's log: what every hosted coordinator runtime
 * (groups, share-group states) replays when this broker is elected leader of one of its partitions.
 */
public final class CoordinatorLogLoader {
    private CoordinatorLogLoader() {
    }

    /**
     * @param serde          the coordinator's record format
     * @param loadBufferSize bytes read at a time ({@code offsets.load.buffer.size}, {@code
     *                       share.coordinator.load.buffer.size})
     */
    public static <T> CoordinatorLoader<T> over(ReplicaManager replicaManager, Time time, Deserializer<T> serde,
                                                int loadBufferSize) {
        return new CoordinatorLoaderImpl<>(time,
                tp -> replicaManager.partition(tp).map(Partition::log),
                tp -> replicaManager.partition(tp).map(p -> p.log().logEndOffset()),
                serde, loadBufferSize, CoordinatorLoaderImpl.DEFAULT_COMMIT_INTERVAL_OFFSETS);
    }
}
