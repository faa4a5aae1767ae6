package io.twinlog.server.handlers;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.security.BrokerAuthorization;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.DescribeTopicPartitionsRequestData;
import org.apache.kafka.common.message.DescribeTopicPartitionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeTopicPartitionsRequest;
import org.apache.kafka.common.requests.DescribeTopicPartitionsResponse;
import org.apache.kafka.common.resource.ResourceType;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * DescribeTopicPartitions (used by {@code Admin.describeTopics} when served): topics in name order, each with
 * leader, leader epoch, replicas, ISR and offline replicas, paged by {@code responsePartitionLimit} with a cursor.
 * Eligible leader replicas (KIP-966) are not kept: those lists are empty.
 */
public final class DescribeTopicPartitionsHandler implements RequestHandler {
    private final BrokerContext ctx;

    public DescribeTopicPartitionsHandler(BrokerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void handle(Request request) {
        DescribeTopicPartitionsRequest body = request.body();
        DescribeTopicPartitionsRequestData data = body.data();
        MetadataImage image = ctx.image();
        TreeSet<String> names = new TreeSet<>();
        // Kafka's rule: DESCRIBE on the topic; listing every topic leaves out the others, naming one refuses it
        BrokerAuthorization auth = ctx.authorization();
        if (data.topics().isEmpty()) {
            image.topics().keySet().stream().filter(name -> auth.allowed(request.context(), AclOperation.DESCRIBE,
                    ResourceType.TOPIC, name, false)).forEach(names::add);
        } else {
            data.topics().forEach(t -> names.add(t.name()));
        }
        DescribeTopicPartitionsRequestData.Cursor cursor = data.cursor();
        int remaining = Math.max(1, data.responsePartitionLimit());
        DescribeTopicPartitionsResponseData response = new DescribeTopicPartitionsResponseData();
        for (String name : cursor == null ? names : names.tailSet(cursor.topicName(), true)) {
            TopicImage t = image.topic(name).orElse(null);
            DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic rt =
                    new DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic().setName(name);
            if (!data.topics().isEmpty() && !auth.allowed(request.context(), AclOperation.DESCRIBE,
                    ResourceType.TOPIC, name)) {
                response.topics().add(rt.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                        .setTopicId(Uuid.ZERO_UUID));
                continue;
            }
            if (t == null) {
                response.topics().add(rt.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()).setTopicId(Uuid.ZERO_UUID));
                continue;
            }
            rt.setTopicId(t.topicId()).setIsInternal(Topic.isInternal(name))
                    .setTopicAuthorizedOperations(auth.authorizedOperations(request.context(), ResourceType.TOPIC,
                            name));
            int first = cursor != null && cursor.topicName().equals(name) ? cursor.partitionIndex() : 0;
            List<DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponsePartition> parts = new ArrayList<>();
            for (PartitionImage p : t.partitions().tailMap(first).values()) {
                if (remaining == 0) {
                    response.setNextCursor(new DescribeTopicPartitionsResponseData.Cursor().setTopicName(name)
                            .setPartitionIndex(p.partition()));
                    break;
                }
                int leader = p.liveLeader(image.brokers().keySet());
                parts.add(new DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponsePartition()
                        .setPartitionIndex(p.partition())
                        .setErrorCode(leader >= 0 ? Errors.NONE.code() : Errors.LEADER_NOT_AVAILABLE.code())
                        .setLeaderId(leader)
                        .setLeaderEpoch(p.leaderEpoch())
                        .setReplicaNodes(new ArrayList<>(p.replicas()))
                        .setIsrNodes(new ArrayList<>(p.isr()))
                        // the 4.4 admin client reads these lists unconditionally: empty, not null
                        .setEligibleLeaderReplicas(new ArrayList<>())
                        .setLastKnownElr(new ArrayList<>())
                        .setOfflineReplicas(image.offlineReplicas(t, p)));
                remaining--;
            }
            rt.setPartitions(parts);
            response.topics().add(rt);
            if (response.nextCursor() != null) {
                break;
            }
            if (remaining == 0) {
                String next = names.higher(name);
                if (next != null) {
                    response.setNextCursor(new DescribeTopicPartitionsResponseData.Cursor().setTopicName(next)
                            .setPartitionIndex(0));
                }
                break;
            }
        }
        request.respond(new DescribeTopicPartitionsResponse(response));
    }
}
