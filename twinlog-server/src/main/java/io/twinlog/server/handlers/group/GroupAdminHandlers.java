package io.twinlog.server.handlers.group;

import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.requests.ConsumerGroupDescribeRequest;
import org.apache.kafka.common.requests.ConsumerGroupDescribeResponse;
import org.apache.kafka.common.requests.DeleteGroupsRequest;
import org.apache.kafka.common.requests.DeleteGroupsResponse;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.ListGroupsResponse;
import org.apache.kafka.common.utils.internals.BufferSupplier;

/**
 * Group administration as the Admin client and {@code kafka-consumer-groups} use it: ListGroups (the groups this
 * broker coordinates; the admin asks every broker), DescribeGroups, DeleteGroups (refused with NON_EMPTY_GROUP
 * while members are active) and ConsumerGroupDescribe.
 */
final class GroupAdminHandlers {
    private final GroupRequests groups;

    GroupAdminHandlers(GroupRequests groups) {
        this.groups = groups;
    }

    RequestHandler listGroups() {
        return groups.<ListGroupsRequest, org.apache.kafka.common.message.ListGroupsResponseData>handler(
                (request, body) -> groups.host().coordinator().listGroups(request.context(), body.data()),
                (request, data) -> new ListGroupsResponse(data));
    }

    RequestHandler describeGroups() {
        return groups.<DescribeGroupsRequest, java.util.List<DescribeGroupsResponseData.DescribedGroup>>handler(
                (request, body) -> groups.host().coordinator().describeGroups(request.context(), body.data().groups()),
                (request, described) -> new DescribeGroupsResponse(
                        new DescribeGroupsResponseData().setGroups(described)));
    }

    RequestHandler deleteGroups() {
        return groups.<DeleteGroupsRequest, DeleteGroupsResponseData.DeletableGroupResultCollection>handler(
                (request, body) -> groups.host().coordinator().deleteGroups(request.context(),
                        body.data().groupsNames(), BufferSupplier.NO_CACHING),
                (request, results) -> new DeleteGroupsResponse(new DeleteGroupsResponseData().setResults(results)));
    }

    RequestHandler consumerGroupDescribe() {
        return groups.<ConsumerGroupDescribeRequest,
                java.util.List<ConsumerGroupDescribeResponseData.DescribedGroup>>handler(
                (request, body) -> groups.host().coordinator().consumerGroupDescribe(request.context(),
                        body.data().groupIds()),
                (request, described) -> new ConsumerGroupDescribeResponse(
                        new ConsumerGroupDescribeResponseData().setGroups(described)));
    }
}
