package io.twinlog.server.handlers.group;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.group.GroupCoordinatorHost;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.handlers.CoordinatorFinder;
import io.twinlog.server.handlers.CoordinatorLocation;
import io.twinlog.server.handlers.InternalTopicCreator;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.resource.ResourceType;

import java.util.function.Supplier;

/**
 * FindCoordinator: a group's coordinator is the leader of its {@code __consumer_offsets} partition, a transactional
 * id's the leader of its {@code __transaction_state} partition, as in Kafka (each topic is created on first use).
 * A share key's ({@code group:topicId:partition}) is the leader of its {@code __share_group_state} partition,
 * while share groups are on (otherwise INVALID_REQUEST, as for any key type Twinlog lacks).
 */
final class FindCoordinatorHandler implements RequestHandler {
    private final GroupRequests groups;
    private final InternalTopicCreator offsetsTopic;
    private final CoordinatorFinder transactions;
    private final CoordinatorFinder shares;
    private final Supplier<MetadataImage> image;

    FindCoordinatorHandler(GroupRequests groups, InternalTopicCreator offsetsTopic, CoordinatorFinder transactions,
                           CoordinatorFinder shares, Supplier<MetadataImage> image) {
        this.groups = groups;
        this.offsetsTopic = offsetsTopic;
        this.transactions = transactions;
        this.shares = shares;
        this.image = image;
    }

    @Override
    public void handle(Request request) {
        FindCoordinatorRequestData data = ((FindCoordinatorRequest) request.body()).data();
        String listener = request.context().listenerName.value();
        FindCoordinatorResponseData response = new FindCoordinatorResponseData();
        if (request.apiVersion() >= FindCoordinatorRequest.MIN_BATCHED_VERSION) {
            for (String key : data.coordinatorKeys()) {
                CoordinatorLocation f = find(request, key, data.keyType(), listener);
                response.coordinators().add(new FindCoordinatorResponseData.Coordinator().setKey(key)
                        .setErrorCode(f.error().code()).setErrorMessage(f.message()).setNodeId(f.nodeId())
                        .setHost(f.host()).setPort(f.port()));
            }
        } else {
            CoordinatorLocation f = find(request, data.key(), data.keyType(), listener);
            response.setErrorCode(f.error().code()).setErrorMessage(f.message()).setNodeId(f.nodeId())
                    .setHost(f.host()).setPort(f.port());
        }
        request.respond(new FindCoordinatorResponse(response));
    }

    private CoordinatorLocation find(Request request, String key, byte keyType, String listener) {
        if (keyType == FindCoordinatorRequest.CoordinatorType.TRANSACTION.id()) {
            return transactions.find(request, key, listener);
        }
        if (keyType == FindCoordinatorRequest.CoordinatorType.SHARE.id()) {
            return shares.find(request, key, listener);
        }
        if (keyType != FindCoordinatorRequest.CoordinatorType.GROUP.id()) {
            return CoordinatorLocation.error(Errors.INVALID_REQUEST, "Unsupported coordinator key type " + keyType);
        }
        if (key == null || key.isEmpty()) {
            return CoordinatorLocation.error(Errors.INVALID_REQUEST, "The group id is empty");
        }
        // Kafka's rule: DESCRIBE on the group
        if (!groups.authorization().allowed(request.context(), AclOperation.DESCRIBE, ResourceType.GROUP, key)) {
            return CoordinatorLocation.error(Errors.GROUP_AUTHORIZATION_FAILED, null);
        }
        if (!groups.host().isStarted()) {
            return CoordinatorLocation.error(Errors.COORDINATOR_NOT_AVAILABLE, "The group coordinator is starting");
        }
        MetadataImage current = image.get();
        if (current.topic(GroupCoordinatorHost.OFFSETS_TOPIC).isEmpty()) {
            offsetsTopic.ensureCreated();
            return CoordinatorLocation.error(Errors.COORDINATOR_NOT_AVAILABLE, GroupCoordinatorHost.OFFSETS_TOPIC
                    + " is being created");
        }
        return CoordinatorLocation.leaderOf(current, GroupCoordinatorHost.OFFSETS_TOPIC,
                groups.host().partitionFor(key), listener);
    }
}
