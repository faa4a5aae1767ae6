package io.twinlog.server.handlers.group;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.ShareGroupDescribeResponseData;
import org.apache.kafka.common.message.ShareGroupHeartbeatResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ShareGroupDescribeRequest;
import org.apache.kafka.common.requests.ShareGroupDescribeResponse;
import org.apache.kafka.common.requests.ShareGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ShareGroupHeartbeatResponse;
import org.apache.kafka.common.resource.ResourceType;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * ShareGroupHeartbeat and ShareGroupDescribe (KIP-932), answered by the hosted group coordinator with Kafka 4.4's
 * authorization rules; the coordinator initializes a share group's partitions through the persister before it
 * assigns them, so a new member's first heartbeats carry an empty assignment.
 */
final class ShareGroupHandlers {
    private final GroupRequests groups;

    ShareGroupHandlers(GroupRequests groups) {
        this.groups = groups;
    }

    /**
     * READ on the group (GROUP_AUTHORIZATION_FAILED), DESCRIBE on every topic the member subscribes to (any refused:
     * TOPIC_AUTHORIZATION_FAILED for the heartbeat), as Kafka's broker checks them.
     */
    RequestHandler heartbeat() {
        RequestHandler checked = groups.<ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponseData>handler(
                (request, body) -> groups.host().coordinator().shareGroupHeartbeat(request.context(), body.data()),
                (request, data) -> new ShareGroupHeartbeatResponse(data));
        return request -> {
            ShareGroupHeartbeatRequest body = request.body();
            if (!groups.authorized(request, AclOperation.READ, body.data().groupId())) {
                return;
            }
            List<String> subscribed = body.data().subscribedTopicNames();
            List<String> denied = subscribed == null ? List.of() : subscribed.stream()
                    .filter(t -> !mayDescribeTopic(request, t)).sorted().toList();
            if (denied.isEmpty()) {
                checked.handle(request);
            } else {
                request.respond(new ShareGroupHeartbeatResponse(new ShareGroupHeartbeatResponseData()
                        .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                        .setErrorMessage("The share group member subscribes to topics it may not describe: "
                                + denied)));
            }
        };
    }

    /**
     * DESCRIBE on each group (else that group GROUP_AUTHORIZATION_FAILED); a group whose members subscribe to or are
     * assigned a topic the principal may not describe is answered TOPIC_AUTHORIZATION_FAILED, so describing it does
     * not reveal the topic.
     */
    RequestHandler describe() {
        return groups.<ShareGroupDescribeRequest, List<ShareGroupDescribeResponseData.DescribedGroup>>handler(
                (request, body) -> {
                    List<String> allowed = new ArrayList<>();
                    List<ShareGroupDescribeResponseData.DescribedGroup> refused = new ArrayList<>();
                    for (String groupId : body.data().groupIds()) {
                        if (groups.authorization().allowed(request.context(), AclOperation.DESCRIBE,
                                ResourceType.GROUP, groupId)) {
                            allowed.add(groupId);
                        } else {
                            refused.add(new ShareGroupDescribeResponseData.DescribedGroup().setGroupId(groupId)
                                    .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())
                                    .setErrorMessage("Not authorized to describe group " + groupId));
                        }
                    }
                    CompletableFuture<List<ShareGroupDescribeResponseData.DescribedGroup>> described =
                            allowed.isEmpty() ? CompletableFuture.completedFuture(List.of())
                                    : groups.host().coordinator().shareGroupDescribe(request.context(), allowed);
                    return described.thenApply(list -> {
                        List<ShareGroupDescribeResponseData.DescribedGroup> all = new ArrayList<>();
                        list.forEach(g -> all.add(withTopicsChecked(request, g,
                                body.data().includeAuthorizedOperations())));
                        all.addAll(refused);
                        return all;
                    });
                },
                (request, described) -> new ShareGroupDescribeResponse(
                        new ShareGroupDescribeResponseData().setGroups(described)));
    }

    private ShareGroupDescribeResponseData.DescribedGroup withTopicsChecked(Request request,
            ShareGroupDescribeResponseData.DescribedGroup group, boolean includeAuthorizedOperations) {
        if (group.errorCode() != Errors.NONE.code()) {
            return group;
        }
        Set<String> topics = new TreeSet<>();
        for (ShareGroupDescribeResponseData.Member member : group.members()) {
            topics.addAll(member.subscribedTopicNames());
            if (member.assignment() != null) {
                member.assignment().topicPartitions().stream()
                        .map(ShareGroupDescribeResponseData.TopicPartitions::topicName)
                        .filter(Objects::nonNull).forEach(topics::add);
            }
        }
        if (topics.stream().anyMatch(t -> !mayDescribeTopic(request, t))) {
            return new ShareGroupDescribeResponseData.DescribedGroup().setGroupId(group.groupId())
                    .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                    .setErrorMessage("The group has members subscribed to topics the principal may not describe");
        }
        if (includeAuthorizedOperations) {
            group.setAuthorizedOperations(groups.authorization().authorizedOperations(request.context(),
                    ResourceType.GROUP, group.groupId()));
        }
        return group;
    }

    private boolean mayDescribeTopic(Request request, String topic) {
        return groups.authorization().allowed(request.context(), AclOperation.DESCRIBE, ResourceType.TOPIC, topic);
    }
}
