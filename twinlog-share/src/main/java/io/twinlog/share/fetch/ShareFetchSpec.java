package io.twinlog.share.fetch;

import org.apache.kafka.clients.consumer.internals.ShareAcquireMode;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.server.storage.log.FetchIsolation;

import java.util.List;

/**
 * What one ShareFetch asks of this broker: the member, the long-poll bounds ({@code maxWaitMs}, {@code minBytes}),
 * the byte and record caps, the acquire mode (whether {@code maxRecords} is exact, KIP-1206), the preferred batch
 * size and the partitions to acquire from, in the order to try them.
 */
public record ShareFetchSpec(String groupId, String memberId, long maxWaitMs, int minBytes, int maxBytes,
                             int maxRecords, ShareAcquireMode acquireMode, int batchSize, FetchIsolation isolation,
                             List<TopicIdPartition> partitions) {
    public ShareFetchSpec {
        partitions = List.copyOf(partitions);
    }
}
