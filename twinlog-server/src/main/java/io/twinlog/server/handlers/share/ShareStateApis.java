package io.twinlog.server.handlers.share;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.handlers.ClusterAuthorized;
import io.twinlog.server.handlers.CoordinatorFinder;
import io.twinlog.server.handlers.CoordinatorLocation;
import io.twinlog.server.handlers.FutureResponses;
import io.twinlog.server.handlers.InternalTopicCreator;
import io.twinlog.server.metadata.TopicAdmin;
import io.twinlog.server.security.BrokerAuthorization;
import io.twinlog.share.ShareCoordinatorHost;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.InitializeShareGroupStateRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.DeleteShareGroupStateRequest;
import org.apache.kafka.common.requests.DeleteShareGroupStateResponse;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.InitializeShareGroupStateRequest;
import org.apache.kafka.common.requests.InitializeShareGroupStateResponse;
import org.apache.kafka.common.requests.ReadShareGroupStateRequest;
import org.apache.kafka.common.requests.ReadShareGroupStateResponse;
import org.apache.kafka.common.requests.ReadShareGroupStateSummaryRequest;
import org.apache.kafka.common.requests.ReadShareGroupStateSummaryResponse;
import org.apache.kafka.common.requests.WriteShareGroupStateRequest;
import org.apache.kafka.common.requests.WriteShareGroupStateResponse;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.share.ShareCoordinator;
import org.apache.kafka.coordinator.share.ShareCoordinatorConfig;
import org.apache.kafka.server.share.SharePartitionKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The share-group state RPCs (Initialize/Read/Write/Delete/ReadSummary ShareGroupState), inter-broker calls of
 * Kafka's persister answered by the hosted share coordinator, and FindCoordinator for share keys
 * ({@code group:topicId:partition}): the leader of the key's {@code __share_group_state} partition, the topic created
 * on first use. Kafka's rules: CLUSTER_ACTION on the cluster for all of them, FindCoordinator v6 or later for share
 * keys, a key that does not parse INVALID_REQUEST. All behind {@link ShareFeature}.
 */
public final class ShareStateApis implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ShareStateApis.class);
    private static final String SOURCE = "the share coordinator";
    /** FindCoordinator's first version with the share key type (KIP-932). */
    static final short MIN_SHARE_KEY_VERSION = 6;

    private final ShareCoordinatorHost host;
    private final Supplier<MetadataImage> image;
    private final BrokerAuthorization authorization;
    private final InternalTopicCreator stateTopic;

    public ShareStateApis(ShareCoordinatorHost host, TopicAdmin topicAdmin, Supplier<MetadataImage> image,
                          BrokerAuthorization authorization, Time time) {
        this.host = host;
        this.image = image;
        this.authorization = authorization;
        this.stateTopic = new InternalTopicCreator(ShareCoordinatorHost.STATE_TOPIC,
                ShareCoordinatorConfig.STATE_TOPIC_REPLICATION_FACTOR_CONFIG,
                () -> new InternalTopicCreator.Spec(host.config().shareCoordinatorStateTopicNumPartitions(),
                        host.config().shareCoordinatorStateTopicReplicationFactor(), host.stateTopicConfigs()),
                topicAdmin, image, time);
    }

    public void register(ApiRegistry.Builder registry) {
        ShareCoordinator coordinator = host.coordinator();
        registry.add(ApiKeys.INITIALIZE_SHARE_GROUP_STATE,
                        this.<InitializeShareGroupStateRequest, InitializeShareGroupStateResponse>state(
                                (request, body) -> {
                                    // an initialization replaces a share partition's whole state (start offset and
                                    // acknowledged ranges): logged, so that a state found reset can be traced
                                    log.info("InitializeShareGroupState from {}: {}", request.context().clientId(),
                                            describe(body.data()));
                                    return coordinator.initializeState(request.context(), body.data())
                                            .thenApply(InitializeShareGroupStateResponse::new);
                                }))
                .add(ApiKeys.READ_SHARE_GROUP_STATE, this.<ReadShareGroupStateRequest, ReadShareGroupStateResponse>state(
                        (request, body) -> coordinator.readState(request.context(), body.data())
                                .thenApply(ReadShareGroupStateResponse::new)))
                .add(ApiKeys.WRITE_SHARE_GROUP_STATE,
                        this.<WriteShareGroupStateRequest, WriteShareGroupStateResponse>state(
                                (request, body) -> coordinator.writeState(request.context(), body.data())
                                        .thenApply(WriteShareGroupStateResponse::new)))
                .add(ApiKeys.DELETE_SHARE_GROUP_STATE,
                        this.<DeleteShareGroupStateRequest, DeleteShareGroupStateResponse>state(
                                (request, body) -> coordinator.deleteState(request.context(), body.data())
                                        .thenApply(DeleteShareGroupStateResponse::new)))
                .add(ApiKeys.READ_SHARE_GROUP_STATE_SUMMARY,
                        this.<ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse>state(
                                (request, body) -> coordinator.readStateSummary(request.context(), body.data())
                                        .thenApply(ReadShareGroupStateSummaryResponse::new)));
    }

    /** Group, topic IDs and partitions with their start offsets and state epochs, for the log. */
    private static String describe(InitializeShareGroupStateRequestData data) {
        return "group " + data.groupId() + " " + data.topics().stream().map(t -> t.topicId() + t.partitions().stream()
                .map(p -> p.partition() + " start " + p.startOffset() + " state epoch " + p.stateEpoch())
                .collect(Collectors.joining(", ", " [", "]"))).collect(Collectors.joining("; "));
    }

    /**
     * A state RPC: the switch, CLUSTER_ACTION, then the coordinator (which answers COORDINATOR_NOT_AVAILABLE itself
     * until it has started, and NOT_COORDINATOR per partition for keys of partitions this broker does not lead).
     */
    private <B extends AbstractRequest, R extends AbstractResponse> RequestHandler state(
            BiFunction<Request, B, CompletableFuture<R>> call) {
        RequestHandler handler = request -> {
            B body = request.body();
            FutureResponses.answer(request, call.apply(request, body), response -> response, SOURCE);
        };
        return ShareFeature.gate(image, ClusterAuthorized.require(authorization, AclOperation.CLUSTER_ACTION,
                handler));
    }

    /** FindCoordinator's share key type; while share groups are off, the answer to a key type Twinlog lacks. */
    public CoordinatorFinder finder() {
        return this::find;
    }

    private CoordinatorLocation find(Request request, String key, String listener) {
        MetadataImage current = image.get();
        if (!current.features().shareGroupsEnabled()) {
            return CoordinatorLocation.error(Errors.INVALID_REQUEST, "Unsupported coordinator key type "
                    + FindCoordinatorRequest.CoordinatorType.SHARE.id());
        }
        if (request.apiVersion() < MIN_SHARE_KEY_VERSION) {
            return CoordinatorLocation.error(Errors.INVALID_REQUEST, "Share coordinator keys need FindCoordinator v"
                    + MIN_SHARE_KEY_VERSION + " or later");
        }
        if (!authorization.allowedOnCluster(request.context(), AclOperation.CLUSTER_ACTION)) {
            return CoordinatorLocation.error(Errors.CLUSTER_AUTHORIZATION_FAILED, null);
        }
        SharePartitionKey shareKey;
        try {
            shareKey = SharePartitionKey.getInstance(key);
        } catch (IllegalArgumentException e) {
            return CoordinatorLocation.error(Errors.INVALID_REQUEST, "Invalid share coordinator key " + key + ": "
                    + e.getMessage());
        }
        if (!host.isStarted()) {
            return CoordinatorLocation.error(Errors.COORDINATOR_NOT_AVAILABLE, "The share coordinator is starting");
        }
        if (current.topic(ShareCoordinatorHost.STATE_TOPIC).isEmpty()) {
            stateTopic.ensureCreated();
            return CoordinatorLocation.error(Errors.COORDINATOR_NOT_AVAILABLE, ShareCoordinatorHost.STATE_TOPIC
                    + " is being created");
        }
        return CoordinatorLocation.leaderOf(current, ShareCoordinatorHost.STATE_TOPIC, host.partitionFor(shareKey),
                listener);
    }

    @Override
    public void close() {
        stateTopic.close();
    }
}
