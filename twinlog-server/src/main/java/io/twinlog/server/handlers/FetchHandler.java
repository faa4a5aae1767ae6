package io.twinlog.server.handlers;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.replication.FetchParams;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.FetchMetadata;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.resource.Resource;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.storage.log.FetchIsolation;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Fetch for consumers: long poll ({@code max.wait.ms}, {@code min.bytes}), request and partition byte limits,
 * read_uncommitted (up to the high watermark) and read_committed (up to the last stable offset, with the aborted
 * transactions of the range). Records go to the socket straight from the log segment files (zero-copy).
 *
 * <p>Fetch sessions (KIP-227) are not kept: every response carries session id 0, which tells the client to send
 * full fetch requests.
 */
public final class FetchHandler implements RequestHandler {
    private final BrokerContext ctx;

    public FetchHandler(BrokerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void handle(Request request) {
        FetchRequest body = request.body();
        byte isolationLevel = body.data().isolationLevel();
        if (isolationLevel != IsolationLevel.READ_UNCOMMITTED.id() && isolationLevel != IsolationLevel.READ_COMMITTED.id()) {
            // Bad client input, not a broker failure: IsolationLevel.forId would throw IllegalArgumentException and
            // reach the dispatcher as an unexpected error (Kafka answers UNKNOWN_SERVER_ERROR there).
            request.respond(request.errorResponse(new InvalidRequestException("Unknown isolation level "
                    + isolationLevel)));
            return;
        }
        MetadataImage image = ctx.image();
        Map<Uuid, String> topicNames = new HashMap<>();
        for (TopicImage t : image.topics().values()) {
            topicNames.put(t.topicId(), t.name());
        }
        Map<TopicIdPartition, FetchRequest.PartitionData> requested = body.fetchData(topicNames);
        LinkedHashMap<TopicIdPartition, FetchRequest.PartitionData> valid = new LinkedHashMap<>();
        LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> errors = new LinkedHashMap<>();
        boolean usesTopicIds = request.apiVersion() >= 13;
        // Kafka's rule: a follower needs CLUSTER_ACTION on the cluster, a consumer READ on each topic
        boolean follower = body.replicaId() >= 0;
        boolean followerAllowed = !follower || ctx.authorization().allowed(request.context(),
                AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, Resource.CLUSTER_NAME);
        Map<String, Boolean> readable = new HashMap<>(); // one check per topic, not per partition
        for (Map.Entry<TopicIdPartition, FetchRequest.PartitionData> e : requested.entrySet()) {
            TopicIdPartition tip = e.getKey();
            if (!followerAllowed || !follower && tip.topic() != null && !readable.computeIfAbsent(tip.topic(),
                    topic -> ctx.authorization().allowed(request.context(), AclOperation.READ, ResourceType.TOPIC,
                            topic))) {
                errors.put(tip, errorData(tip.partition(), Errors.TOPIC_AUTHORIZATION_FAILED));
                continue;
            }
            if (tip.topic() == null) {
                errors.put(tip, errorData(tip.partition(), Errors.UNKNOWN_TOPIC_ID));
                continue;
            }
            TopicImage t = image.topic(tip.topic()).orElse(null);
            if (t == null || !t.partitions().containsKey(tip.partition())) {
                errors.put(tip, errorData(tip.partition(), usesTopicIds && t == null ? Errors.UNKNOWN_TOPIC_ID
                        : Errors.UNKNOWN_TOPIC_OR_PARTITION));
                continue;
            }
            valid.put(new TopicIdPartition(t.topicId(), tip.topicPartition()), e.getValue());
        }
        FetchIsolation isolation = FetchIsolation.of(body);
        FetchParams params = new FetchParams(body.replicaId(), body.replicaEpoch(), body.maxWait(), body.minBytes(),
                body.maxBytes(), isolation);
        ctx.replicaManager().fetchMessages(params, valid, results -> {
            LinkedHashMap<TopicIdPartition, FetchResponseData.PartitionData> all = new LinkedHashMap<>(results);
            all.putAll(errors);
            // Kafka's broker topic metrics count the partitions read from a log (topics that exist), not the
            // ones refused before it: a client's unknown topic must not create meters
            results.forEach((tip, data) -> ctx.topicMetrics().fetched(tip.topic(), follower,
                    Errors.forCode(data.errorCode()), data.records() == null ? 0 : data.records().sizeInBytes()));
            request.respond(FetchResponse.of(Errors.NONE, 0, FetchMetadata.INVALID_SESSION_ID, all, List.of()));
        });
    }

    private static FetchResponseData.PartitionData errorData(int partition, Errors error) {
        return new FetchResponseData.PartitionData().setPartitionIndex(partition).setErrorCode(error.code())
                .setHighWatermark(-1).setLastStableOffset(-1).setLogStartOffset(-1).setRecords(MemoryRecords.EMPTY);
    }
}
