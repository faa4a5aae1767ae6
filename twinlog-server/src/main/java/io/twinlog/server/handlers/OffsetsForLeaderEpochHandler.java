package io.twinlog.server.handlers;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.replication.Partition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.common.OffsetAndEpoch;

import java.util.Optional;

/**
 * OffsetsForLeaderEpoch: for a requested epoch, the largest epoch not above it and that epoch's end offset, from
 * the leader-epoch cache (Kafka's semantics); UNDEFINED (-1, -1) when the log knows no such epoch.
 */
public final class OffsetsForLeaderEpochHandler implements RequestHandler {
    private final BrokerContext ctx;

    public OffsetsForLeaderEpochHandler(BrokerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void handle(Request request) {
        OffsetsForLeaderEpochRequest body = request.body();
        OffsetForLeaderEpochResponseData response = new OffsetForLeaderEpochResponseData();
        // Kafka's rule: replicas need CLUSTER_ACTION; consumers checking for truncation (KIP-320) DESCRIBE on the topic
        boolean clusterAction = ctx.authorization().allowedOnClusterQuietly(request.context(), AclOperation.CLUSTER_ACTION);
        for (OffsetForLeaderEpochRequestData.OffsetForLeaderTopic t : body.data().topics()) {
            OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult tr =
                    new OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult().setTopic(t.topic());
            boolean allowed = clusterAction || ctx.authorization().allowed(request.context(), AclOperation.DESCRIBE,
                    ResourceType.TOPIC, t.topic());
            for (OffsetForLeaderEpochRequestData.OffsetForLeaderPartition p : t.partitions()) {
                tr.partitions().add(allowed ? endOffset(new TopicPartition(t.topic(), p.partition()), p)
                        : new OffsetForLeaderEpochResponseData.EpochEndOffset().setPartition(p.partition())
                                .setLeaderEpoch(-1).setEndOffset(-1)
                                .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
            }
            response.topics().add(tr);
        }
        request.respond(new OffsetsForLeaderEpochResponse(response));
    }

    private OffsetForLeaderEpochResponseData.EpochEndOffset endOffset(TopicPartition tp,
            OffsetForLeaderEpochRequestData.OffsetForLeaderPartition p) {
        OffsetForLeaderEpochResponseData.EpochEndOffset r = new OffsetForLeaderEpochResponseData.EpochEndOffset()
                .setPartition(p.partition()).setLeaderEpoch(-1).setEndOffset(-1);
        try {
            if (ctx.image().partition(tp).isEmpty()) {
                throw new UnknownTopicOrPartitionException("Unknown topic or partition " + tp);
            }
            Partition partition = ctx.replicaManager().partitionOrThrow(tp); // KAFKA_STORAGE_ERROR if its log dir failed
            Optional<Integer> current = p.currentLeaderEpoch() == -1 ? Optional.empty() : Optional.of(p.currentLeaderEpoch());
            Optional<OffsetAndEpoch> found = partition.endOffsetForEpoch(p.leaderEpoch(), current);
            found.ifPresent(oe -> r.setLeaderEpoch(oe.epoch()).setEndOffset(oe.offset()));
        } catch (ApiException e) {
            r.setErrorCode(Errors.forException(e).code());
        }
        return r;
    }
}
