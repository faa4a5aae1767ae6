package io.twinlog.server.handlers;

import io.twinlog.common.Endpoint;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.metadata.TopicAdmin;
import io.twinlog.server.security.BrokerAuthorization;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.resource.Resource;
import org.apache.kafka.common.resource.ResourceType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Metadata: brokers (endpoints of the listener the request arrived on), controller, cluster ID, and topics with
 * leader, leader epoch, replicas, ISR and offline replicas. Unknown topics are auto-created when both the client
 * and {@code auto.create.topics.enable} allow it: as Kafka does, the topic is validated and planned here, written
 * to ZooKeeper on an admin thread (a request thread never waits for it), and answered LEADER_NOT_AVAILABLE until
 * it exists, which clients retry.
 */
public final class MetadataHandler implements RequestHandler {
    private static final Logger log = LoggerFactory.getLogger(MetadataHandler.class);
    private final BrokerContext ctx;
    private final Executor adminThreads;
    /** Topics whose auto-creation is under way: repeated Metadata requests meanwhile do not write again. */
    private final Set<String> creating = ConcurrentHashMap.newKeySet();

    /** @param adminThreads where auto-created topics are written (it may block on ZooKeeper) */
    public MetadataHandler(BrokerContext ctx, Executor adminThreads) {
        this.ctx = ctx;
        this.adminThreads = adminThreads;
    }

    @Override
    public void handle(Request request) {
        MetadataRequest body = request.body();
        MetadataRequestData data = body.data();
        MetadataImage image = ctx.image();
        String listener = request.context().listenerName.value();
        List<MetadataResponseData.MetadataResponseTopic> topics = new ArrayList<>();

        BrokerAuthorization auth = ctx.authorization();
        if (body.isAllTopics()) {
            // Kafka's rule: a topic the principal may not DESCRIBE is left out
            for (TopicImage t : image.topics().values()) {
                if (auth.allowed(request.context(), AclOperation.DESCRIBE, ResourceType.TOPIC, t.name(), false)) {
                    topics.add(topicResponse(t, image));
                }
            }
        } else {
            boolean allowAutoCreate = data.allowAutoTopicCreation() && ctx.config().autoCreateTopicsEnable();
            boolean mayCreateAny = allowAutoCreate
                    && auth.allowedOnClusterQuietly(request.context(), AclOperation.CREATE);
            for (MetadataRequestData.MetadataRequestTopic rt : data.topics()) {
                if (rt.name() == null && rt.topicId() != null && !Uuid.ZERO_UUID.equals(rt.topicId())) {
                    Optional<TopicImage> t = image.topic(rt.topicId());
                    if (t.isPresent() && !auth.allowed(request.context(), AclOperation.DESCRIBE, ResourceType.TOPIC,
                            t.get().name())) {
                        topics.add(new MetadataResponseData.MetadataResponseTopic().setTopicId(rt.topicId())
                                .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
                        continue;
                    }
                    topics.add(t.map(ti -> topicResponse(ti, ctx.image())).orElseGet(() ->
                            new MetadataResponseData.MetadataResponseTopic().setTopicId(rt.topicId())
                                    .setErrorCode(Errors.UNKNOWN_TOPIC_ID.code())));
                    continue;
                }
                String name = rt.name();
                if (!auth.allowed(request.context(), AclOperation.DESCRIBE, ResourceType.TOPIC, name)) {
                    topics.add(new MetadataResponseData.MetadataResponseTopic().setName(name)
                            .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
                    continue;
                }
                Optional<TopicImage> t = image.topic(name);
                if (t.isPresent()) {
                    topics.add(topicResponse(t.get(), image));
                } else if (allowAutoCreate && !mayCreateAny && !auth.allowed(request.context(), AclOperation.CREATE,
                        ResourceType.TOPIC, name)) {
                    topics.add(new MetadataResponseData.MetadataResponseTopic().setName(name)
                            .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
                } else {
                    topics.add(unknownTopic(name, allowAutoCreate));
                }
            }
        }
        MetadataResponseData response = new MetadataResponseData()
                .setClusterId(image.clusterId())
                .setControllerId(image.controllerId())
                .setTopics(new MetadataResponseData.MetadataResponseTopicCollection(topics.iterator()));
        if (data.includeTopicAuthorizedOperations()) {
            response.topics().stream().filter(t -> t.errorCode() == Errors.NONE.code() && t.name() != null)
                    .forEach(t -> t.setTopicAuthorizedOperations(auth.authorizedOperations(request.context(),
                            ResourceType.TOPIC, t.name())));
        }
        // v8-10 only; Kafka's rule: the operations only for a principal that may describe the cluster
        if (data.includeClusterAuthorizedOperations()) {
            response.setClusterAuthorizedOperations(auth.allowedOnCluster(request.context(), AclOperation.DESCRIBE)
                    ? auth.authorizedOperations(request.context(), ResourceType.CLUSTER, Resource.CLUSTER_NAME) : 0);
        }
        for (BrokerRegistration b : ctx.image().brokers().values()) {
            Optional<Endpoint> ep = b.endpoint(listener);
            ep.ifPresent(e -> response.brokers().add(new MetadataResponseData.MetadataResponseBroker()
                    .setNodeId(b.id()).setHost(e.host()).setPort(e.port()).setRack(b.rack().orElse(null))));
        }
        request.respond(new MetadataResponse(response, request.apiVersion()));
    }

    private MetadataResponseData.MetadataResponseTopic unknownTopic(String name, boolean allowAutoCreate) {
        MetadataResponseData.MetadataResponseTopic rt = new MetadataResponseData.MetadataResponseTopic().setName(name);
        try {
            Topic.validate(name);
        } catch (InvalidTopicException e) {
            return rt.setErrorCode(Errors.INVALID_TOPIC_EXCEPTION.code());
        }
        if (!allowAutoCreate || Topic.isInternal(name)) { // internal topics are created by their coordinator
            return rt.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        }
        TopicAdmin.TopicPlan plan;
        try {
            plan = ctx.topicAdmin().plan(name, -1, (short) -1, null, Map.of(), ctx.config().numPartitions(),
                    ctx.config().defaultReplicationFactor());
        } catch (TopicExistsException e) {
            // created meanwhile: answer with what is there, or ask the client to retry
            return ctx.image().topic(name).map(t -> topicResponse(t, ctx.image()))
                    .orElse(rt.setErrorCode(Errors.LEADER_NOT_AVAILABLE.code()));
        } catch (ApiException e) {
            return rt.setErrorCode(Errors.forException(e).code());
        }
        if (creating.add(name)) {
            try {
                adminThreads.execute(() -> create(plan));
            } catch (RejectedExecutionException e) {
                creating.remove(name); // shutting down, or the admin queue is full: the client retries
            }
        }
        return rt.setErrorCode(Errors.LEADER_NOT_AVAILABLE.code());
    }

    private void create(TopicAdmin.TopicPlan plan) {
        try {
            ctx.topicAdmin().create(plan);
            log.info("Auto-created topic {} with {} partitions", plan.name(), plan.assignment().size());
        } catch (TopicExistsException e) {
            log.debug("Topic {} was created concurrently", plan.name());
        } catch (Exception e) {
            // broad: any failure leaves the topic to the client's next Metadata request
            log.warn("Could not auto-create topic {}", plan.name(), e);
        } finally {
            creating.remove(plan.name());
        }
    }

    static MetadataResponseData.MetadataResponseTopic topicResponse(TopicImage t, MetadataImage image) {
        MetadataResponseData.MetadataResponseTopic rt = new MetadataResponseData.MetadataResponseTopic()
                .setName(t.name()).setTopicId(t.topicId()).setIsInternal(Topic.isInternal(t.name()));
        for (PartitionImage p : t.partitions().values()) {
            int leader = p.liveLeader(image.brokers().keySet());
            rt.partitions().add(new MetadataResponseData.MetadataResponsePartition()
                    .setPartitionIndex(p.partition())
                    .setErrorCode(leader >= 0 ? Errors.NONE.code() : Errors.LEADER_NOT_AVAILABLE.code())
                    .setLeaderId(leader)
                    .setLeaderEpoch(p.leaderEpoch())
                    .setReplicaNodes(new ArrayList<>(p.replicas()))
                    .setIsrNodes(new ArrayList<>(p.isr()))
                    .setOfflineReplicas(image.offlineReplicas(t, p)));
        }
        return rt;
    }
}
