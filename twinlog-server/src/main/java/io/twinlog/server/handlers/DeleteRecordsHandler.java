package io.twinlog.server.handlers;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.replication.DeleteRecordsResult;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsPartitionResult;
import org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsTopicResult;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DeleteRecordsResponse;
import org.apache.kafka.common.resource.ResourceType;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * DeleteRecords ({@code kafka-delete-records}, {@code Admin.deleteRecords}), sent by the client to each partition's
 * leader: moves the log start offset and answers once every in-sync replica's log start reached it (the replica
 * manager's delayed DeleteRecords), with the resulting low watermark. Refused per partition before anything moves:
 * unknown topics (UNKNOWN_TOPIC_OR_PARTITION), internal topics (INVALID_TOPIC_EXCEPTION, as Kafka: the group
 * coordinator owns {@code __consumer_offsets}), and mirror topics not yet failed over (POLICY_VIOLATION, as produce
 * is refused: a mirror's log is its source's, docs/decisions.md 15).
 */
public final class DeleteRecordsHandler implements RequestHandler {
    private final BrokerContext ctx;

    public DeleteRecordsHandler(BrokerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void handle(Request request) {
        DeleteRecordsRequest body = request.body();
        DeleteRecordsRequestData data = body.data();
        MetadataImage image = ctx.image();
        Map<TopicPartition, DeleteRecordsResult> refused = new LinkedHashMap<>();
        Map<TopicPartition, Long> toDelete = new LinkedHashMap<>();
        for (DeleteRecordsRequestData.DeleteRecordsTopic topic : data.topics()) {
            // Kafka's rule: DELETE on the topic
            boolean allowed = ctx.authorization().allowed(request.context(), AclOperation.DELETE, ResourceType.TOPIC,
                    topic.name());
            for (DeleteRecordsRequestData.DeleteRecordsPartition p : topic.partitions()) {
                TopicPartition tp = new TopicPartition(topic.name(), p.partitionIndex());
                Errors refusal = allowed ? refusal(image, tp) : Errors.TOPIC_AUTHORIZATION_FAILED;
                if (refusal != Errors.NONE) {
                    refused.put(tp, DeleteRecordsResult.error(refusal));
                } else {
                    toDelete.put(tp, p.offset());
                }
            }
        }
        ctx.replicaManager().deleteRecords(data.timeoutMs(), toDelete, results -> {
            Map<TopicPartition, DeleteRecordsResult> all = new LinkedHashMap<>(refused);
            all.putAll(results);
            request.respond(new DeleteRecordsResponse(response(all)));
        });
    }

    private static Errors refusal(MetadataImage image, TopicPartition tp) {
        if (image.topic(tp.topic()).map(t -> !t.partitions().containsKey(tp.partition())).orElse(true)) {
            return Errors.UNKNOWN_TOPIC_OR_PARTITION;
        }
        if (Topic.isInternal(tp.topic())) {
            return Errors.INVALID_TOPIC_EXCEPTION;
        }
        if (MirrorReadOnly.reason(image, tp).isPresent()) {
            return Errors.POLICY_VIOLATION;
        }
        return Errors.NONE;
    }

    private static DeleteRecordsResponseData response(Map<TopicPartition, DeleteRecordsResult> results) {
        DeleteRecordsResponseData data = new DeleteRecordsResponseData();
        Map<String, DeleteRecordsTopicResult> byTopic = new LinkedHashMap<>();
        results.forEach((tp, r) -> {
            DeleteRecordsTopicResult topic = byTopic.computeIfAbsent(tp.topic(), name -> {
                DeleteRecordsTopicResult t = new DeleteRecordsTopicResult().setName(name);
                data.topics().add(t);
                return t;
            });
            topic.partitions().add(new DeleteRecordsPartitionResult().setPartitionIndex(tp.partition())
                    .setLowWatermark(r.lowWatermark()).setErrorCode(r.error().code()));
        });
        return data;
    }
}
