package io.twinlog.server.handlers.group;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.security.BrokerAuthorization;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ConsumerGroupDescribeRequest;
import org.apache.kafka.common.requests.ConsumerGroupDescribeResponse;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.ListGroupsResponse;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.utils.internals.BufferSupplier;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/**
 * Group administration as the Admin client and {@code kafka-consumer-groups} use it: ListGroups (the groups this
 * broker coordinates; the admin asks every broker), DescribeGroups, DeleteGroups (refused with NON_EMPTY_GROUP
 * while members are active) and ConsumerGroupDescribe, each authorized as Kafka 4.4 does: DESCRIBE on the cluster
 * lists every group, otherwise only the groups the principal may describe; DESCRIBE (DELETE) on each group described
 * (deleted), the others answered GROUP_AUTHORIZATION_FAILED one by one.
 */
final class GroupAdminHandlers {
    private final GroupRequests groups;

    GroupAdminHandlers(GroupRequests groups) {
        this.groups = groups;
    }

    private BrokerAuthorization authorization() {
        return groups.authorization();
    }

    private Predicate<String> mayGroup(Request request, AclOperation operation) {
        return groupId -> authorization().allowed(request.context(), operation, ResourceType.GROUP, groupId);
    }

    RequestHandler listGroups() {
        return groups.<ListGroupsRequest, ListGroupsResponseData>handler(
                (request, body) -> groups.host().coordinator().listGroups(request.context(), body.data()),
                (request, data) -> {
                    if (!authorization().allowedOnClusterQuietly(request.context(), AclOperation.DESCRIBE)) {
                        data.groups().removeIf(g -> !authorization().allowed(request.context(), AclOperation.DESCRIBE,
                                ResourceType.GROUP, g.groupId(), false));
                    }
                    return new ListGroupsResponse(data);
                });
    }

    RequestHandler describeGroups() {
        return groups.<DescribeGroupsRequest, List<DescribeGroupsResponseData.DescribedGroup>>handler(
                (request, body) -> {
                    List<String> allowed = new ArrayList<>();
                    List<DescribeGroupsResponseData.DescribedGroup> refused = new ArrayList<>();
                    for (String groupId : body.data().groups()) {
                        if (mayGroup(request, AclOperation.DESCRIBE).test(groupId)) {
                            allowed.add(groupId);
                        } else {
                            refused.add(new DescribeGroupsResponseData.DescribedGroup().setGroupId(groupId)
                                    .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code()));
                        }
                    }
                    CompletableFuture<List<DescribeGroupsResponseData.DescribedGroup>> described = allowed.isEmpty()
                            ? CompletableFuture.completedFuture(new ArrayList<>())
                            : groups.host().coordinator().describeGroups(request.context(), allowed);
                    return described.thenApply(list -> {
                        if (body.data().includeAuthorizedOperations()) {
                            list.stream().filter(g -> g.errorCode() == Errors.NONE.code())
                                    .forEach(g -> g.setAuthorizedOperations(authorization().authorizedOperations(
                                            request.context(), ResourceType.GROUP, g.groupId())));
                        }
                        List<DescribeGroupsResponseData.DescribedGroup> all = new ArrayList<>(list);
                        all.addAll(refused);
                        return all;
                    });
                },
                (request, described) -> new DescribeGroupsResponse(
                        new DescribeGroupsResponseData().setGroups(described)));
    }

    RequestHandler deleteGroups() {
        return groups.<DeleteGroupsRequest, DeleteGroupsResponseData.DeletableGroupResultCollection>handler(
                (request, body) -> {
                    List<String> allowed = new ArrayList<>();
                    List<String> refused = new ArrayList<>();
                    for (String groupId : body.data().groupsNames()) {
                        (mayGroup(request, AclOperation.DELETE).test(groupId) ? allowed : refused).add(groupId);
                    }
                    CompletableFuture<DeleteGroupsResponseData.DeletableGroupResultCollection> deleted =
                            allowed.isEmpty()
                                    ? CompletableFuture.completedFuture(
                                            new DeleteGroupsResponseData.DeletableGroupResultCollection())
                                    : groups.host().coordinator().deleteGroups(request.context(), allowed,
                                            BufferSupplier.NO_CACHING);
                    return deleted.thenApply(results -> {
                        refused.forEach(groupId -> results.add(new DeleteGroupsResponseData.DeletableGroupResult()
                                .setGroupId(groupId).setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())));
                        return results;
                    });
                },
                (request, results) -> new DeleteGroupsResponse(new DeleteGroupsResponseData().setResults(results)));
    }

    RequestHandler consumerGroupDescribe() {
        return groups.<ConsumerGroupDescribeRequest, List<ConsumerGroupDescribeResponseData.DescribedGroup>>handler(
                (request, body) -> {
                    List<String> allowed = new ArrayList<>();
                    List<ConsumerGroupDescribeResponseData.DescribedGroup> refused = new ArrayList<>();
                    for (String groupId : body.data().groupIds()) {
                        if (mayGroup(request, AclOperation.DESCRIBE).test(groupId)) {
                            allowed.add(groupId);
                        } else {
                            refused.add(new ConsumerGroupDescribeResponseData.DescribedGroup().setGroupId(groupId)
                                    .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code())
                                    .setErrorMessage("Not authorized to describe group " + groupId));
                        }
                    }
                    CompletableFuture<List<ConsumerGroupDescribeResponseData.DescribedGroup>> described =
                            allowed.isEmpty() ? CompletableFuture.completedFuture(new ArrayList<>())
                                    : groups.host().coordinator().consumerGroupDescribe(request.context(), allowed);
                    return described.thenApply(list -> {
                        List<ConsumerGroupDescribeResponseData.DescribedGroup> all = new ArrayList<>();
                        for (ConsumerGroupDescribeResponseData.DescribedGroup g : list) {
                            all.add(withTopicsChecked(request, g, body.data().includeAuthorizedOperations()));
                        }
                        all.addAll(refused);
                        return all;
                    });
                },
                (request, described) -> new ConsumerGroupDescribeResponse(
                        new ConsumerGroupDescribeResponseData().setGroups(described)));
    }

    /**
     * Kafka's rule (4.0+): a group whose members subscribe to or are assigned topics the principal may not describe
     * is answered TOPIC_AUTHORIZATION_FAILED, so that describing a group does not reveal those topics.
     */
    private ConsumerGroupDescribeResponseData.DescribedGroup withTopicsChecked(Request request,
            ConsumerGroupDescribeResponseData.DescribedGroup group, boolean includeAuthorizedOperations) {
        if (group.errorCode() != Errors.NONE.code()) {
            return group;
        }
        Set<String> topics = new TreeSet<>();
        for (ConsumerGroupDescribeResponseData.Member member : group.members()) {
            topics.addAll(member.subscribedTopicNames());
            for (ConsumerGroupDescribeResponseData.Assignment assignment
                    : Arrays.asList(member.assignment(), member.targetAssignment())) {
                if (assignment != null) {
                    assignment.topicPartitions().stream()
                            .map(ConsumerGroupDescribeResponseData.TopicPartitions::topicName)
                            .filter(Objects::nonNull).forEach(topics::add);
                }
            }
        }
        List<String> denied = topics.stream().filter(t -> !authorization().allowed(request.context(),
                AclOperation.DESCRIBE, ResourceType.TOPIC, t)).toList();
        if (!denied.isEmpty()) {
            return new ConsumerGroupDescribeResponseData.DescribedGroup().setGroupId(group.groupId())
                    .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                    .setErrorMessage("The group has members subscribed to topics the principal may not describe");
        }
        if (includeAuthorizedOperations) {
            group.setAuthorizedOperations(authorization().authorizedOperations(request.context(), ResourceType.GROUP,
                    group.groupId()));
        }
        return group;
    }
}
