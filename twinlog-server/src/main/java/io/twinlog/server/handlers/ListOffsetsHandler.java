package io.twinlog.server.handlers;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.replication.Partition;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.resource.ResourceType;

import java.util.Optional;

/** ListOffsets: earliest, latest (bounded by the isolation level), by timestamp, and max timestamp. */
public final class ListOffsetsHandler implements RequestHandler {
    /** The first version whose response carries the leader epoch of the offset found. */
    private static final short LEADER_EPOCH_VERSION = 4;
    private final BrokerContext ctx;

    public ListOffsetsHandler(BrokerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void handle(Request request) {
        ListOffsetsRequest body = request.body();
        if (body.data().isolationLevel() != 0 && body.data().isolationLevel() != 1) {
            request.respond(request.errorResponse(new InvalidRequestException(
                    "Unknown isolation level " + body.data().isolationLevel())));
            return;
        }
        // a replica (replica id >= 0) may read up to the log end; consumers up to the HW or LSO
        Optional<IsolationLevel> isolation = body.replicaId() >= 0 ? Optional.empty() : Optional.of(body.isolationLevel());
        ListOffsetsResponseData response = new ListOffsetsResponseData();
        for (ListOffsetsRequestData.ListOffsetsTopic t : body.data().topics()) {
            ListOffsetsResponseData.ListOffsetsTopicResponse tr = new ListOffsetsResponseData.ListOffsetsTopicResponse()
                    .setName(t.name());
            // Kafka's rule: DESCRIBE on the topic
            boolean allowed = ctx.authorization().allowed(request.context(), AclOperation.DESCRIBE,
                    ResourceType.TOPIC, t.name());
            for (ListOffsetsRequestData.ListOffsetsPartition p : t.partitions()) {
                tr.partitions().add(allowed ? listOffset(new TopicPartition(t.name(), p.partitionIndex()), p,
                        isolation, request.apiVersion())
                        : new ListOffsetsResponseData.ListOffsetsPartitionResponse().setPartitionIndex(
                                p.partitionIndex()).setTimestamp(-1).setOffset(-1)
                                .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
            }
            response.topics().add(tr);
        }
        request.respond(new ListOffsetsResponse(response));
    }

    private ListOffsetsResponseData.ListOffsetsPartitionResponse listOffset(TopicPartition tp,
            ListOffsetsRequestData.ListOffsetsPartition p, Optional<IsolationLevel> isolation, short version) {
        ListOffsetsResponseData.ListOffsetsPartitionResponse r = new ListOffsetsResponseData.ListOffsetsPartitionResponse()
                .setPartitionIndex(p.partitionIndex()).setTimestamp(-1).setOffset(-1);
        try {
            if (ctx.image().partition(tp).isEmpty()) {
                throw new UnknownTopicOrPartitionException("Unknown topic or partition " + tp);
            }
            Partition partition = ctx.replicaManager().partitionOrThrow(tp); // KAFKA_STORAGE_ERROR if its log dir failed
            Optional<Integer> currentEpoch = p.currentLeaderEpoch() == -1 ? Optional.empty()
                    : Optional.of(p.currentLeaderEpoch());
            Optional<FileRecords.TimestampAndOffset> found = partition.fetchOffsetForTimestamp(p.timestamp(),
                    isolation, currentEpoch);
            if (found.isPresent()) {
                r.setTimestamp(found.get().timestamp).setOffset(found.get().offset);
                if (version >= LEADER_EPOCH_VERSION) {
                    r.setLeaderEpoch(found.get().leaderEpoch.orElse(-1)); // v1-3 cannot carry it (librdkafka sends v2)
                }
            }
        } catch (ApiException e) {
            r.setErrorCode(Errors.forException(e).code());
        }
        return r;
    }
}
