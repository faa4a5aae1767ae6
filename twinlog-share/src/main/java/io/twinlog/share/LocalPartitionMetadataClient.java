package io.twinlog.share;

import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.server.util.PartitionMetadataClient;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The latest offsets of partitions (their high watermarks, what ListOffsets LATEST answers a read-uncommitted
 * consumer) for the lag column of DescribeShareGroupOffsets v1 (KIP-1226): read from the replicas this broker leads.
 * A partition led elsewhere is answered NOT_LEADER_OR_FOLLOWER and its lag is shown as unknown; asking its leader
 * (Kafka's {@code NetworkPartitionMetadataClient}) is for a later step of share groups.
 */
public final class LocalPartitionMetadataClient implements PartitionMetadataClient {
    private final ReplicaManager replicaManager;

    public LocalPartitionMetadataClient(ReplicaManager replicaManager) {
        this.replicaManager = replicaManager;
    }

    @Override
    public Map<TopicPartition, CompletableFuture<OffsetResponse>> listLatestOffsets(Set<TopicPartition> partitions) {
        Map<TopicPartition, CompletableFuture<OffsetResponse>> offsets = new HashMap<>();
        for (TopicPartition tp : partitions) {
            Optional<Partition> leader = replicaManager.partition(tp).filter(Partition::isLeader);
            offsets.put(tp, CompletableFuture.completedFuture(leader
                    .map(p -> new OffsetResponse(p.log().highWatermark(), Errors.NONE))
                    .orElseGet(() -> new OffsetResponse(-1, Errors.NOT_LEADER_OR_FOLLOWER))));
        }
        return offsets;
    }

    @Override
    public void close() {
    }
}
