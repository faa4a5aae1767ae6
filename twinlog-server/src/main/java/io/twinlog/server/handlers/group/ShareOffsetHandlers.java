package io.twinlog.server.handlers.group;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.AlterShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.AlterShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DeleteShareGroupOffsetsResponseData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsRequestData;
import org.apache.kafka.common.message.DescribeShareGroupOffsetsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.AlterShareGroupOffsetsResponse;
import org.apache.kafka.common.requests.DeleteShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DeleteShareGroupOffsetsResponse;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsRequest;
import org.apache.kafka.common.requests.DescribeShareGroupOffsetsResponse;
import org.apache.kafka.common.resource.ResourceType;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A share group's start offsets (KIP-932): DescribeShareGroupOffsets (DESCRIBE on the group; topics the principal
 * may not describe answered TOPIC_AUTHORIZATION_FAILED, or left out when the request names none),
 * AlterShareGroupOffsets (READ on the group, READ on each topic) and DeleteShareGroupOffsets (DELETE on the group,
 * READ on each topic), Kafka 4.4's rules; the hosted group coordinator reads and writes the offsets through the
 * persister.
 */
final class ShareOffsetHandlers {
    private static final String TOPIC_REFUSED = "The principal may not read this topic";

    private final GroupRequests groups;

    ShareOffsetHandlers(GroupRequests groups) {
        this.groups = groups;
    }

    RequestHandler describe() {
        return groups.<DescribeShareGroupOffsetsRequest,
                List<DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseGroup>>handler(
                (request, body) -> {
                    List<CompletableFuture<DescribeShareGroupOffsetsResponseData
                            .DescribeShareGroupOffsetsResponseGroup>> described = new ArrayList<>();
                    body.data().groups().forEach(group -> described.add(describeGroup(request, group)));
                    return CompletableFuture.allOf(described.toArray(CompletableFuture[]::new))
                            .thenApply(done -> described.stream().map(CompletableFuture::join).toList());
                },
                (request, described) -> new DescribeShareGroupOffsetsResponse(
                        new DescribeShareGroupOffsetsResponseData().setGroups(described)));
    }

    private CompletableFuture<DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseGroup>
            describeGroup(Request request, DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup group) {
        if (!may(request, AclOperation.DESCRIBE, ResourceType.GROUP, group.groupId())) {
            return CompletableFuture.completedFuture(new DescribeShareGroupOffsetsResponseData
                    .DescribeShareGroupOffsetsResponseGroup().setGroupId(group.groupId())
                    .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())
                    .setErrorMessage("Not authorized to describe group " + group.groupId()));
        }
        if (group.topics() == null) {
            // every topic of the group: those the principal may not describe are left out
            return groups.host().coordinator().describeShareGroupAllOffsets(request.context(), group)
                    .thenApply(answer -> answer.setTopics(answer.topics().stream()
                            .filter(t -> may(request, AclOperation.DESCRIBE, ResourceType.TOPIC, t.topicName()))
                            .toList()));
        }
        List<DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestTopic> allowed = new ArrayList<>();
        List<DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic> refused = new ArrayList<>();
        for (DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestTopic topic : group.topics()) {
            if (may(request, AclOperation.DESCRIBE, ResourceType.TOPIC, topic.topicName())) {
                allowed.add(topic);
            } else {
                refused.add(new DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic()
                        .setTopicName(topic.topicName()).setPartitions(topic.partitions().stream()
                                .map(p -> new DescribeShareGroupOffsetsResponseData
                                        .DescribeShareGroupOffsetsResponsePartition().setPartitionIndex(p)
                                        .setStartOffset(-1).setLeaderEpoch(-1).setLag(-1)
                                        .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                                        .setErrorMessage(Errors.TOPIC_AUTHORIZATION_FAILED.message()))
                                .toList()));
            }
        }
        CompletableFuture<DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseGroup> answer =
                allowed.isEmpty()
                        ? CompletableFuture.completedFuture(new DescribeShareGroupOffsetsResponseData
                                .DescribeShareGroupOffsetsResponseGroup().setGroupId(group.groupId()))
                        : groups.host().coordinator().describeShareGroupOffsets(request.context(),
                                group.duplicate().setTopics(allowed));
        return answer.thenApply(a -> {
            List<DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic> topics =
                    new ArrayList<>(a.topics());
            topics.addAll(refused);
            return a.setTopics(topics);
        });
    }

    RequestHandler alter() {
        RequestHandler checked = groups.<AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponseData>handler(
                (request, body) -> {
                    AlterShareGroupOffsetsRequestData allowed = new AlterShareGroupOffsetsRequestData()
                            .setGroupId(body.data().groupId());
                    AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopicCollection refused =
                            new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopicCollection();
                    for (AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic topic
                            : body.data().topics()) {
                        if (may(request, AclOperation.READ, ResourceType.TOPIC, topic.topicName())) {
                            allowed.topics().add(topic.duplicate());
                        } else {
                            refused.add(new AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopic()
                                    .setTopicName(topic.topicName()).setPartitions(topic.partitions().stream()
                                            .map(p -> new AlterShareGroupOffsetsResponseData
                                                    .AlterShareGroupOffsetsResponsePartition()
                                                    .setPartitionIndex(p.partitionIndex())
                                                    .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                                                    .setErrorMessage(TOPIC_REFUSED))
                                            .toList()));
                        }
                    }
                    // the coordinator is asked even with no topic left, as Kafka does: it checks the group id
                    return groups.host().coordinator().alterShareGroupOffsets(request.context(),
                            body.data().groupId(), allowed).thenApply(answer -> {
                                if (answer.errorCode() == Errors.NONE.code()) {
                                    refused.forEach(t -> answer.responses().add(t.duplicate()));
                                }
                                return answer;
                            });
                },
                (request, data) -> new AlterShareGroupOffsetsResponse(data));
        return request -> {
            AlterShareGroupOffsetsRequest body = request.body();
            if (groups.authorized(request, AclOperation.READ, body.data().groupId())) {
                checked.handle(request);
            }
        };
    }

    RequestHandler delete() {
        RequestHandler checked = groups.<DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponseData>handler(
                (request, body) -> {
                    DeleteShareGroupOffsetsRequestData allowed = new DeleteShareGroupOffsetsRequestData()
                            .setGroupId(body.data().groupId());
                    List<DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic> refused =
                            new ArrayList<>();
                    List<DeleteShareGroupOffsetsRequestData.DeleteShareGroupOffsetsRequestTopic> topics =
                            new ArrayList<>();
                    for (DeleteShareGroupOffsetsRequestData.DeleteShareGroupOffsetsRequestTopic topic
                            : body.data().topics()) {
                        if (may(request, AclOperation.READ, ResourceType.TOPIC, topic.topicName())) {
                            topics.add(topic);
                        } else {
                            refused.add(new DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic()
                                    .setTopicName(topic.topicName())
                                    .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                                    .setErrorMessage(TOPIC_REFUSED));
                        }
                    }
                    allowed.setTopics(topics);
                    // the coordinator is asked even with no topic left, as Kafka does: it checks the group id
                    return groups.host().coordinator().deleteShareGroupOffsets(request.context(), allowed)
                            .thenApply(answer -> {
                                if (answer.errorCode() != Errors.NONE.code()) {
                                    return answer;
                                }
                                List<DeleteShareGroupOffsetsResponseData.DeleteShareGroupOffsetsResponseTopic> all =
                                        new ArrayList<>(answer.responses());
                                all.addAll(refused);
                                return answer.setResponses(all);
                            });
                },
                (request, data) -> new DeleteShareGroupOffsetsResponse(data));
        return request -> {
            DeleteShareGroupOffsetsRequest body = request.body();
            if (groups.authorized(request, AclOperation.DELETE, body.data().groupId())) {
                checked.handle(request);
            }
        };
    }

    private boolean may(Request request, AclOperation operation, ResourceType type, String name) {
        return groups.authorization().allowed(request.context(), operation, type, name);
    }
}
