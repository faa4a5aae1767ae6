package io.twinlog.server.handlers.group;

import io.twinlog.common.Endpoint;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.group.GroupCoordinatorHost;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.FindCoordinatorResponse;
import org.apache.kafka.common.resource.ResourceType;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * FindCoordinator: a group's coordinator is the leader of its {@code __consumer_offsets} partition, as in Kafka
 * (the topic is created on first use). Share-group keys are refused (INVALID_REQUEST).
 *
 * <p>Transaction coordinators are not hosted. A transactional id is answered UNSUPPORTED_VERSION with
 * {@link TransactionsRefused#MESSAGE}, not COORDINATOR_NOT_AVAILABLE: that one is retriable, and a transactional
 * producer retried it until its {@code max.block.ms} ran out without saying why. UNSUPPORTED_VERSION is not
 * retriable, so {@code initTransactions()} fails at once with the message (Kafka answers a feature it has turned
 * off the same way, e.g. ConsumerGroupHeartbeat without the consumer protocol).
 */
final class FindCoordinatorHandler implements RequestHandler {
    private final GroupRequests groups;
    private final OffsetsTopic offsetsTopic;
    private final Supplier<MetadataImage> image;

    FindCoordinatorHandler(GroupRequests groups, OffsetsTopic offsetsTopic, Supplier<MetadataImage> image) {
        this.groups = groups;
        this.offsetsTopic = offsetsTopic;
        this.image = image;
    }

    private record Found(Errors error, String message, int nodeId, String host, int port) {
        static Found error(Errors error, String message) {
            return new Found(error, message, -1, "", -1);
        }
    }

    @Override
    public void handle(Request request) {
        FindCoordinatorRequestData data = ((FindCoordinatorRequest) request.body()).data();
        String listener = request.context().listenerName.value();
        FindCoordinatorResponseData response = new FindCoordinatorResponseData();
        if (request.apiVersion() >= FindCoordinatorRequest.MIN_BATCHED_VERSION) {
            for (String key : data.coordinatorKeys()) {
                Found f = find(request, key, data.keyType(), listener);
                response.coordinators().add(new FindCoordinatorResponseData.Coordinator().setKey(key)
                        .setErrorCode(f.error().code()).setErrorMessage(f.message()).setNodeId(f.nodeId())
                        .setHost(f.host()).setPort(f.port()));
            }
        } else {
            Found f = find(request, data.key(), data.keyType(), listener);
            response.setErrorCode(f.error().code()).setErrorMessage(f.message()).setNodeId(f.nodeId())
                    .setHost(f.host()).setPort(f.port());
        }
        request.respond(new FindCoordinatorResponse(response));
    }

    private Found find(Request request, String key, byte keyType, String listener) {
        if (keyType == FindCoordinatorRequest.CoordinatorType.TRANSACTION.id()) {
            TransactionsRefused.log("FindCoordinator", key);
            return Found.error(Errors.UNSUPPORTED_VERSION, TransactionsRefused.message(key));
        }
        if (keyType != FindCoordinatorRequest.CoordinatorType.GROUP.id()) {
            return Found.error(Errors.INVALID_REQUEST, "Unsupported coordinator key type " + keyType);
        }
        if (key == null || key.isEmpty()) {
            return Found.error(Errors.INVALID_REQUEST, "The group id is empty");
        }
        // Kafka's rule: DESCRIBE on the group
        if (!groups.authorization().allowed(request.context(), AclOperation.DESCRIBE, ResourceType.GROUP, key)) {
            return Found.error(Errors.GROUP_AUTHORIZATION_FAILED, null);
        }
        if (!groups.host().isStarted()) {
            return Found.error(Errors.COORDINATOR_NOT_AVAILABLE, "The group coordinator is starting");
        }
        MetadataImage current = image.get();
        if (current.topic(GroupCoordinatorHost.OFFSETS_TOPIC).isEmpty()) {
            offsetsTopic.ensureCreated();
            return Found.error(Errors.COORDINATOR_NOT_AVAILABLE, GroupCoordinatorHost.OFFSETS_TOPIC
                    + " is being created");
        }
        int partition = groups.host().partitionFor(key);
        Optional<PartitionImage> p = Optional.ofNullable(current.partitions(GroupCoordinatorHost.OFFSETS_TOPIC)
                .get(partition));
        int leader = p.map(pi -> pi.liveLeader(current.brokers().keySet())).orElse(-1);
        BrokerRegistration broker = leader < 0 ? null : current.brokers().get(leader);
        Optional<Endpoint> endpoint = broker == null ? Optional.empty() : broker.endpoint(listener);
        if (endpoint.isEmpty()) {
            return Found.error(Errors.COORDINATOR_NOT_AVAILABLE, "Partition " + partition + " of "
                    + GroupCoordinatorHost.OFFSETS_TOPIC + " has no live leader");
        }
        return new Found(Errors.NONE, null, leader, endpoint.get().host(), endpoint.get().port());
    }
}
