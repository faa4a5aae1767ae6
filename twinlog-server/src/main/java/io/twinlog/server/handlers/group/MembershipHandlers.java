package io.twinlog.server.handlers.group;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatResponseData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatRequest;
import org.apache.kafka.common.requests.ConsumerGroupHeartbeatResponse;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.HeartbeatResponse;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.JoinGroupResponse;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupResponse;
import org.apache.kafka.common.requests.SyncGroupRequest;
import org.apache.kafka.common.requests.SyncGroupResponse;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.utils.internals.BufferSupplier;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Group membership: the classic protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) and the consumer protocol's
 * ConsumerGroupHeartbeat (KIP-848). The coordinator decides everything (generations, member ids, rebalances,
 * static members, timeouts); these handlers only pass requests in and answers out, asynchronously: a JoinGroup
 * waits for the rebalance without holding a request thread.
 */
final class MembershipHandlers {
    private final GroupRequests groups;

    MembershipHandlers(GroupRequests groups) {
        this.groups = groups;
    }

    /** Kafka's rule for every membership API: READ on the group. */
    private RequestHandler readingGroup(Function<Request, String> groupId, RequestHandler handler) {
        return request -> {
            if (groups.authorized(request, AclOperation.READ, groupId.apply(request))) {
                handler.handle(request);
            }
        };
    }

    RequestHandler joinGroup() {
        return readingGroup(r -> ((JoinGroupRequest) r.body()).data().groupId(), joinGroupUnchecked());
    }

    RequestHandler syncGroup() {
        return readingGroup(r -> ((SyncGroupRequest) r.body()).data().groupId(), syncGroupUnchecked());
    }

    RequestHandler heartbeat() {
        return readingGroup(r -> ((HeartbeatRequest) r.body()).data().groupId(), heartbeatUnchecked());
    }

    RequestHandler leaveGroup() {
        return readingGroup(r -> ((LeaveGroupRequest) r.body()).data().groupId(), leaveGroupUnchecked());
    }

    RequestHandler consumerGroupHeartbeat() {
        RequestHandler describingTopics = request -> {
            // Kafka's rule (4.0+): DESCRIBE on every topic the member subscribes to by name
            List<String> subscribed = ((ConsumerGroupHeartbeatRequest) request.body()).data().subscribedTopicNames();
            List<String> denied = subscribed == null ? List.of() : subscribed.stream()
                    .filter(t -> !groups.authorization().allowed(request.context(), AclOperation.DESCRIBE,
                            ResourceType.TOPIC, t))
                    .sorted().toList();
            if (denied.isEmpty()) {
                consumerGroupHeartbeatUnchecked().handle(request);
            } else {
                request.respond(new ConsumerGroupHeartbeatResponse(new ConsumerGroupHeartbeatResponseData()
                        .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                        .setErrorMessage("The group member subscribes to topics it may not describe: " + denied)));
            }
        };
        return readingGroup(r -> ((ConsumerGroupHeartbeatRequest) r.body()).data().groupId(), describingTopics);
    }

    private RequestHandler joinGroupUnchecked() {
        return groups.<JoinGroupRequest, JoinGroupResponseData>handler(
                (request, body) -> groups.host().coordinator().joinGroup(request.context(), body.data(),
                        BufferSupplier.NO_CACHING),
                (request, data) -> new JoinGroupResponse(data, request.apiVersion()));
    }

    private RequestHandler syncGroupUnchecked() {
        return groups.<SyncGroupRequest, SyncGroupResponseData>handler((request, body) -> {
            if (!body.areMandatoryProtocolTypeAndNamePresent()) {
                // v5+ must name the protocol type and name the member joined with
                return CompletableFuture.completedFuture(new SyncGroupResponseData()
                        .setErrorCode(Errors.INCONSISTENT_GROUP_PROTOCOL.code()).setAssignment(new byte[0]));
            }
            return groups.host().coordinator().syncGroup(request.context(), body.data(), BufferSupplier.NO_CACHING);
        }, (request, data) -> new SyncGroupResponse(data));
    }

    private RequestHandler heartbeatUnchecked() {
        return groups.<HeartbeatRequest, HeartbeatResponseData>handler(
                (request, body) -> groups.host().coordinator().heartbeat(request.context(), body.data()),
                (request, data) -> new HeartbeatResponse(data));
    }

    private RequestHandler leaveGroupUnchecked() {
        return groups.<LeaveGroupRequest, LeaveGroupResponseData>handler(
                // v0-2 name the leaving member at the top level; normalizedData() makes it the one-member list
                // the coordinator reads (and the one-member answer those versions can carry)
                (request, body) -> groups.host().coordinator().leaveGroup(request.context(), body.normalizedData()),
                (request, data) -> new LeaveGroupResponse(data, request.apiVersion()));
    }

    private RequestHandler consumerGroupHeartbeatUnchecked() {
        return groups.<ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponseData>handler(
                (request, body) -> groups.host().coordinator().consumerGroupHeartbeat(request.context(), body.data()),
                (request, data) -> new ConsumerGroupHeartbeatResponse(data));
    }
}
