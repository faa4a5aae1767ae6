package io.twinlog.server.handlers.share;

import io.twinlog.common.Endpoint;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.handlers.FutureResponses;
import io.twinlog.server.security.BrokerAuthorization;
import io.twinlog.share.fetch.ShareFetchSpec;
import io.twinlog.share.fetch.ShareFetches;
import io.twinlog.share.fetch.ShareSessions;
import io.twinlog.share.partition.SharePartitions;
import io.twinlog.server.quota.BrokerQuotas;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.internals.ShareAcquireMode;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.ShareSessionLimitReachedException;
import org.apache.kafka.common.message.ShareAcknowledgeRequestData;
import org.apache.kafka.common.message.ShareAcknowledgeResponseData;
import org.apache.kafka.common.message.ShareFetchRequestData;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeRequest;
import org.apache.kafka.common.requests.ShareAcknowledgeResponse;
import org.apache.kafka.common.requests.ShareFetchRequest;
import org.apache.kafka.common.requests.ShareFetchResponse;
import org.apache.kafka.common.requests.ShareRequestMetadata;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfig;
import org.apache.kafka.coordinator.group.modern.share.ShareGroupConfigProvider;
import org.apache.kafka.server.share.ErroneousAndValidPartitionData;
import org.apache.kafka.server.share.acknowledge.ShareAcknowledgementBatch;
import org.apache.kafka.server.share.context.ShareFetchContext;
import org.apache.kafka.server.storage.log.FetchIsolation;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * ShareFetch and ShareAcknowledge v1-2 (KIP-932) with Kafka 4.4's rules: behind {@link ShareFeature}; a group id
 * and READ on it for the whole request (INVALID_REQUEST, GROUP_AUTHORIZATION_FAILED), a member id of 1-36
 * characters (INVALID_REQUEST), the share session's epoch ({@link ShareSessions}), READ on each topic (its
 * partitions TOPIC_AUTHORIZATION_FAILED, for piggybacked acknowledgements too), topic IDs resolved from the image
 * (UNKNOWN_TOPIC_ID), acknowledgement batches checked as Kafka checks them (INVALID_REQUEST for that partition), and
 * NOT_LEADER_OR_FOLLOWER answered with the current leader and its endpoint on the request's listener. Nothing here
 * blocks: the share partitions answer with futures and a fetch waits in the purgatory of {@link ShareFetches}.
 *
 * <p>v2: the acquire mode (KIP-1206: {@code record_limit} acquires exactly {@code maxRecords}) and renew
 * acknowledgements (KIP-1222: type 4, only in a request flagged {@code isRenewAck}; a ShareFetch so flagged must ask
 * for nothing, its byte, record and wait bounds all 0, and fetches nothing). An acquire mode Kafka does not know is
 * INVALID_REQUEST (Kafka fails the request with UNKNOWN_SERVER_ERROR).
 *
 * <p>Client quotas, as Kafka applies them to ShareFetch: the answer is capped by the broker's {@code fetch.max.bytes}
 * and by what the client's {@code consumer_byte_rate} allows over the quota window; its size and handler time are
 * recorded, and an answer over the quota goes out empty (acknowledgement results kept) with {@code throttle_time_ms}.
 * The records it would have carried are given back to the share partitions as never delivered, where Kafka leaves
 * them acquired until their lock expires.
 */
public final class ShareFetchApis {
    private static final String SOURCE = "the share partitions";
    /** Kafka's longest member id, a UUID in text. */
    private static final int MAX_MEMBER_ID_LENGTH = 36;
    private static final short MIN_VERSION = 1;
    /** v2 adds the acquire mode and renew acknowledgements. */
    private static final short MAX_VERSION = 2;
    /** ACCEPT, RELEASE, REJECT up to v1; RENEW (4) from v2. */
    private static final byte MAX_V1_ACKNOWLEDGE_TYPE = AcknowledgeType.REJECT.id;

    private final ShareSessions sessions;
    private final ShareFetches fetches;
    private final SharePartitions partitions;
    private final ShareGroupConfigProvider groupConfigs;
    private final int defaultRecordLockDurationMs;
    private final Supplier<MetadataImage> image;
    private final BrokerAuthorization authorization;
    private final BrokerQuotas quotas;
    private final int fetchMaxBytes;

    /**
     * @param fetchMaxBytes the broker's {@code fetch.max.bytes}: no ShareFetch answer is larger
     */
    public ShareFetchApis(ShareSessions sessions, ShareFetches fetches, SharePartitions partitions,
                          ShareGroupConfigProvider groupConfigs, ShareGroupConfig brokerConfig,
                          Supplier<MetadataImage> image, BrokerAuthorization authorization, BrokerQuotas quotas,
                          int fetchMaxBytes) {
        this.sessions = sessions;
        this.fetches = fetches;
        this.partitions = partitions;
        this.groupConfigs = groupConfigs;
        this.defaultRecordLockDurationMs = brokerConfig.shareGroupRecordLockDurationMs();
        this.image = image;
        this.authorization = authorization;
        this.quotas = quotas;
        this.fetchMaxBytes = fetchMaxBytes;
    }

    public void register(ApiRegistry.Builder registry) {
        registry.add(ApiKeys.SHARE_FETCH, MIN_VERSION, MAX_VERSION, ShareFeature.gate(image, this::shareFetch))
                .add(ApiKeys.SHARE_ACKNOWLEDGE, MIN_VERSION, MAX_VERSION,
                        ShareFeature.gate(image, this::shareAcknowledge));
    }

    /**
     * A group id, READ on it and a valid member id; otherwise the request is answered here and false returned.
     */
    private boolean admitted(Request request, String groupId, String memberId) {
        if (groupId == null) {
            request.respond(request.errorResponse(new InvalidRequestException("Invalid group id in the request.")));
            return false;
        }
        if (!authorization.allowed(request.context(), AclOperation.READ, ResourceType.GROUP, groupId)) {
            request.respond(request.errorResponse(new GroupAuthorizationException("Not authorized to access group: "
                    + groupId)));
            return false;
        }
        if (memberId == null || memberId.isEmpty() || memberId.length() > MAX_MEMBER_ID_LENGTH) {
            request.respond(request.errorResponse(new InvalidRequestException("Invalid member id in the request.")));
            return false;
        }
        return true;
    }

    private void shareFetch(Request request) {
        ShareFetchRequest body = request.body();
        ShareFetchRequestData data = body.data();
        String groupId = data.groupId();
        String memberId = data.memberId();
        if (!admitted(request, groupId, memberId)) {
            return;
        }
        boolean renew = request.apiVersion() >= MAX_VERSION && data.isRenewAck();
        Optional<ShareAcquireMode> acquireMode = acquireMode(data.shareAcquireMode());
        // a renewal fetches nothing, so its acquire mode does not matter
        Optional<String> refusal = renew ? renewFetchRefusal(data) : acquireMode.isPresent() ? Optional.empty()
                : Optional.of("Unknown share acquire mode id: " + data.shareAcquireMode());
        if (refusal.isPresent()) {
            request.respond(request.errorResponse(new InvalidRequestException(refusal.get())));
            return;
        }
        boolean acknowledgementsPresent = data.topics().stream().flatMap(t -> t.partitions().stream())
                .anyMatch(p -> p.acknowledgementBatches() != null && !p.acknowledgementBatches().isEmpty());
        MetadataImage current = image.get();
        Map<Uuid, String> topicNames = current.topicNames();
        int epoch = data.shareSessionEpoch();
        ShareFetchContext context;
        try {
            context = sessions.newContext(groupId, memberId, epoch, body.shareFetchData(topicNames),
                    body.forgottenTopics(topicNames), acknowledgementsPresent, request.context().connectionId);
        } catch (ShareSessionLimitReachedException e) {
            // as Kafka: answered after the request's wait, so that a full cache is not asked again at once
            fetches.schedule(() -> request.respond(request.errorResponse(e)), data.maxWaitMs());
            return;
        } catch (ApiException e) {
            request.respond(request.errorResponse(e));
            return;
        }
        Map<String, Boolean> readable = new HashMap<>();
        CompletableFuture<Map<TopicIdPartition, ShareAcknowledgeResponseData.PartitionData>> acknowledged =
                CompletableFuture.completedFuture(Map.of());
        if (acknowledgementsPresent) {
            Map<TopicIdPartition, List<ShareAcknowledgementBatch>> batches = new LinkedHashMap<>();
            Map<TopicIdPartition, ShareAcknowledgeResponseData.PartitionData> refused = new LinkedHashMap<>();
            for (ShareFetchRequestData.FetchTopic topic : data.topics()) {
                for (ShareFetchRequestData.FetchPartition partition : topic.partitions()) {
                    List<ShareAcknowledgementBatch> list = new ArrayList<>();
                    partition.acknowledgementBatches().forEach(b -> list.add(new ShareAcknowledgementBatch(
                            b.firstOffset(), b.lastOffset(), b.acknowledgeTypes())));
                    collect(topic.topicId(), partition.partitionIndex(), list, topicNames, batches, refused);
                }
            }
            acknowledged = acknowledge(request, groupId, memberId, batches, refused, readable, current, renew);
        }
        // KIP-1222: a renewal fetches nothing, or the fetch's wait could outlast the lock it just renewed
        CompletableFuture<LinkedHashMap<TopicIdPartition, ShareFetchResponseData.PartitionData>> fetched = renew
                ? CompletableFuture.completedFuture(new LinkedHashMap<>())
                : fetch(request, data, context, acquireMode.orElseThrow(), readable, current);
        String listener = request.context().listenerName.value();
        FutureResponses.answer(request, fetched.thenCombine(acknowledged, (all, acks) -> {
            Map<Integer, Node> leaders = new HashMap<>();
            all.forEach((tip, partition) -> leaderIfMoved(current, tip, partition.errorCode(), listener, leaders)
                    .ifPresent(leader -> partition.currentLeader().setLeaderId(leader.leaderId())
                            .setLeaderEpoch(leader.leaderEpoch())));
            ShareFetchResponse response = throttledOrUpdated(request, groupId, memberId, context, all);
            ShareFetchResponseData responseData = response.data();
            ShareFetchResponseData.NodeEndpointCollection endpoints = new ShareFetchResponseData.NodeEndpointCollection();
            leaders.values().forEach(node -> endpoints.add(new ShareFetchResponseData.NodeEndpoint()
                    .setNodeId(node.id()).setHost(node.host()).setPort(node.port()).setRack(node.rack())));
            responseData.setNodeEndpoints(endpoints).setAcquisitionLockTimeoutMs(recordLockDurationMs(groupId));
            mergeAcknowledgements(responseData, acks);
            if (epoch == ShareRequestMetadata.FINAL_EPOCH) {
                sessions.closeSession(groupId, memberId, partitions);
            }
            return response;
        }), response -> response, SOURCE);
    }

    /** The request's acquire mode; empty for an id Kafka does not know. */
    private static Optional<ShareAcquireMode> acquireMode(byte id) {
        try {
            return Optional.of(ShareAcquireMode.forId(id));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** Kafka's rule for a ShareFetch flagged {@code isRenewAck}: every fetch bound 0; why not, if one is not. */
    private static Optional<String> renewFetchRefusal(ShareFetchRequestData data) {
        List<String> wrong = new ArrayList<>();
        if (data.maxBytes() != 0) {
            wrong.add("maxBytes");
        }
        if (data.minBytes() != 0) {
            wrong.add("minBytes");
        }
        if (data.maxRecords() != 0) {
            wrong.add("maxRecords");
        }
        if (data.maxWaitMs() != 0) {
            wrong.add("maxWaitMs");
        }
        return wrong.isEmpty() ? Optional.empty()
                : Optional.of(String.join(", ", wrong) + " must be set to 0 if isRenewAck is true.");
    }

    /**
     * The fetch part of a ShareFetch: the session's partitions this principal may read and the image has, acquired
     * in the purgatory within the broker's {@code fetch.max.bytes} and the client's fetch quota window; the others
     * answered with their errors.
     */
    private CompletableFuture<LinkedHashMap<TopicIdPartition, ShareFetchResponseData.PartitionData>> fetch(
            Request request, ShareFetchRequestData data, ShareFetchContext context, ShareAcquireMode acquireMode,
            Map<String, Boolean> readable, MetadataImage current) {
        ErroneousAndValidPartitionData partitioned = context.getErroneousAndValidTopicIdPartitions();
        LinkedHashMap<TopicIdPartition, ShareFetchResponseData.PartitionData> refused =
                new LinkedHashMap<>(partitioned.erroneous());
        List<TopicIdPartition> interested = new ArrayList<>();
        for (TopicIdPartition tip : partitioned.validTopicIdPartitions()) {
            if (!mayRead(request, tip.topic(), readable)) {
                refused.put(tip, ShareFetchResponse.partitionResponse(tip, Errors.TOPIC_AUTHORIZATION_FAILED));
            } else if (current.partition(tip.topicPartition()).isEmpty()) {
                refused.put(tip, ShareFetchResponse.partitionResponse(tip, Errors.UNKNOWN_TOPIC_OR_PARTITION));
            } else {
                interested.add(tip);
            }
        }
        if (interested.isEmpty()) {
            return CompletableFuture.completedFuture(refused);
        }
        String groupId = data.groupId();
        // as Kafka: never more than fetch.max.bytes, nor more than the client's quota allows over its window
        int maxBytes = quotas.maxConsumerFetchBytes(request, Math.min(data.maxBytes(), fetchMaxBytes));
        return fetches.fetch(new ShareFetchSpec(groupId, data.memberId(), data.maxWaitMs(),
                        Math.min(data.minBytes(), maxBytes), maxBytes, data.maxRecords(), acquireMode,
                        data.batchSize(), FetchIsolation.of(FetchRequest.CONSUMER_REPLICA_ID,
                        partitions.isolationLevel(groupId)), interested))
                .thenApply(records -> {
                    LinkedHashMap<TopicIdPartition, ShareFetchResponseData.PartitionData> all =
                            new LinkedHashMap<>(records);
                    all.putAll(refused);
                    return all;
                });
    }

    /**
     * Records the answer's size and handler time against the client's quotas (Kafka's order); over a quota, the
     * answer is the session's empty throttled one and the records acquired for it go back as never delivered.
     * Otherwise the session moves on with the answer.
     */
    private ShareFetchResponse throttledOrUpdated(Request request, String groupId, String memberId,
                                                  ShareFetchContext context,
                                                  LinkedHashMap<TopicIdPartition, ShareFetchResponseData.PartitionData>
                                                          all) {
        int throttleMs = quotas.onConsumerFetchReady(request, context.responseSize(all, request.apiVersion()));
        if (throttleMs <= 0) {
            return context.updateAndGenerateResponseData(groupId, memberId, all);
        }
        all.forEach((tip, partition) -> {
            if (!partition.acquiredRecords().isEmpty()) {
                partitions.returnUndelivered(groupId, memberId, tip, partition.acquiredRecords());
            }
        });
        return context.throttleResponse(throttleMs);
    }

    /** Each acknowledgement's result on its partition of the fetch answer; partitions not fetched are added. */
    private static void mergeAcknowledgements(ShareFetchResponseData responseData,
                                              Map<TopicIdPartition, ShareAcknowledgeResponseData.PartitionData> acks) {
        for (Map.Entry<TopicIdPartition, ShareAcknowledgeResponseData.PartitionData> e : acks.entrySet()) {
            TopicIdPartition tip = e.getKey();
            ShareFetchResponseData.ShareFetchableTopicResponse topic = responseData.responses().find(tip.topicId());
            if (topic == null) {
                topic = new ShareFetchResponseData.ShareFetchableTopicResponse().setTopicId(tip.topicId());
                responseData.responses().add(topic);
            }
            ShareFetchResponseData.PartitionData partition = topic.partitions().stream()
                    .filter(p -> p.partitionIndex() == tip.partition()).findFirst().orElse(null);
            if (partition == null) {
                partition = new ShareFetchResponseData.PartitionData().setPartitionIndex(tip.partition())
                        .setRecords(MemoryRecords.EMPTY);
                topic.partitions().add(partition);
            }
            partition.setAcknowledgeErrorCode(e.getValue().errorCode())
                    .setAcknowledgeErrorMessage(e.getValue().errorMessage());
        }
    }

    private void shareAcknowledge(Request request) {
        ShareAcknowledgeRequest body = request.body();
        ShareAcknowledgeRequestData data = body.data();
        String groupId = data.groupId();
        String memberId = data.memberId();
        if (!admitted(request, groupId, memberId)) {
            return;
        }
        int epoch = data.shareSessionEpoch();
        try {
            sessions.acknowledgeSessionUpdate(groupId, memberId, epoch);
        } catch (ApiException e) {
            request.respond(request.errorResponse(e));
            return;
        }
        MetadataImage current = image.get();
        Map<Uuid, String> topicNames = current.topicNames();
        Map<TopicIdPartition, List<ShareAcknowledgementBatch>> batches = new LinkedHashMap<>();
        Map<TopicIdPartition, ShareAcknowledgeResponseData.PartitionData> refused = new LinkedHashMap<>();
        for (ShareAcknowledgeRequestData.AcknowledgeTopic topic : data.topics()) {
            for (ShareAcknowledgeRequestData.AcknowledgePartition partition : topic.partitions()) {
                List<ShareAcknowledgementBatch> list = new ArrayList<>();
                partition.acknowledgementBatches().forEach(b -> list.add(new ShareAcknowledgementBatch(
                        b.firstOffset(), b.lastOffset(), b.acknowledgeTypes())));
                collect(topic.topicId(), partition.partitionIndex(), list, topicNames, batches, refused);
            }
        }
        String listener = request.context().listenerName.value();
        boolean renew = request.apiVersion() >= MAX_VERSION && data.isRenewAck();
        FutureResponses.answer(request, acknowledge(request, groupId, memberId, batches, refused, new HashMap<>(),
                current, renew).thenApply(acks -> {
                    if (epoch == ShareRequestMetadata.FINAL_EPOCH) {
                        sessions.closeSession(groupId, memberId, partitions);
                    }
                    Map<Integer, Node> leaders = new HashMap<>();
                    LinkedHashMap<TopicIdPartition, ShareAcknowledgeResponseData.PartitionData> answer =
                            new LinkedHashMap<>(acks);
                    answer.forEach((tip, partition) -> leaderIfMoved(current, tip, partition.errorCode(), listener,
                            leaders).ifPresent(leader -> partition.currentLeader().setLeaderId(leader.leaderId())
                            .setLeaderEpoch(leader.leaderEpoch())));
                    return ShareAcknowledgeResponse.of(Errors.NONE, 0, answer, List.copyOf(leaders.values()),
                            recordLockDurationMs(groupId));
                }), response -> response, SOURCE);
    }

    /** A request's acknowledgements of one partition, or UNKNOWN_TOPIC_ID when the image has no such topic. */
    private static void collect(Uuid topicId, int partition, List<ShareAcknowledgementBatch> list,
                                Map<Uuid, String> topicNames,
                                Map<TopicIdPartition, List<ShareAcknowledgementBatch>> batches,
                                Map<TopicIdPartition, ShareAcknowledgeResponseData.PartitionData> refused) {
        String name = topicNames.get(topicId);
        TopicIdPartition tip = new TopicIdPartition(topicId, new TopicPartition(name, partition));
        if (name == null) {
            refused.put(tip, ShareAcknowledgeResponse.partitionResponse(tip, Errors.UNKNOWN_TOPIC_ID));
        } else {
            batches.put(tip, list);
        }
    }

    /**
     * Kafka's checks, then the share partitions: malformed batches make their partition INVALID_REQUEST, a topic the
     * principal may not read TOPIC_AUTHORIZATION_FAILED, a partition the image lacks UNKNOWN_TOPIC_OR_PARTITION; a
     * partition without batches is answered NONE. RENEW (type 4) is known from v2 and only in a request flagged
     * {@code renew} ({@code isRenewAck}).
     */
    private CompletableFuture<Map<TopicIdPartition, ShareAcknowledgeResponseData.PartitionData>> acknowledge(
            Request request, String groupId, String memberId,
            Map<TopicIdPartition, List<ShareAcknowledgementBatch>> batches,
            Map<TopicIdPartition, ShareAcknowledgeResponseData.PartitionData> refused, Map<String, Boolean> readable,
            MetadataImage current, boolean renew) {
        Map<TopicIdPartition, ShareAcknowledgeResponseData.PartitionData> answered = new LinkedHashMap<>(refused);
        Map<TopicIdPartition, List<ShareAcknowledgementBatch>> valid = new LinkedHashMap<>();
        byte maxType = request.apiVersion() >= MAX_VERSION ? AcknowledgeType.RENEW.id : MAX_V1_ACKNOWLEDGE_TYPE;
        batches.forEach((tip, list) -> {
            Errors error = !wellFormed(list, maxType, renew) ? Errors.INVALID_REQUEST
                    : !mayRead(request, tip.topic(), readable) ? Errors.TOPIC_AUTHORIZATION_FAILED
                    : current.partition(tip.topicPartition()).isEmpty() ? Errors.UNKNOWN_TOPIC_OR_PARTITION
                    : Errors.NONE;
            if (error != Errors.NONE || list.isEmpty()) {
                answered.put(tip, ShareAcknowledgeResponse.partitionResponse(tip, error));
            } else {
                valid.put(tip, list);
            }
        });
        if (valid.isEmpty()) {
            return CompletableFuture.completedFuture(answered);
        }
        return fetches.acknowledge(groupId, memberId, valid).thenApply(results -> {
            Map<TopicIdPartition, ShareAcknowledgeResponseData.PartitionData> all = new LinkedHashMap<>(results);
            all.putAll(answered);
            return all;
        });
    }

    /**
     * Kafka's rules for a partition's batches: each first <= last, in order without overlap, with acknowledge types,
     * one type for the whole batch or one per offset, each a known type up to {@code maxType}, RENEW only when the
     * request says {@code renew}.
     */
    static boolean wellFormed(List<ShareAcknowledgementBatch> batches, byte maxType, boolean renew) {
        long previousLast = -1;
        for (ShareAcknowledgementBatch batch : batches) {
            List<Byte> types = batch.acknowledgeTypes();
            if (batch.firstOffset() > batch.lastOffset() || batch.firstOffset() < previousLast
                    || types == null || types.isEmpty()
                    || types.size() > 1 && batch.lastOffset() - batch.firstOffset() != types.size() - 1
                    || types.stream().anyMatch(t -> t < 0 || t > maxType)
                    || !renew && types.contains(AcknowledgeType.RENEW.id)) {
                return false;
            }
            previousLast = batch.lastOffset();
        }
        return true;
    }

    private boolean mayRead(Request request, String topic, Map<String, Boolean> readable) {
        return readable.computeIfAbsent(topic, t -> authorization.allowed(request.context(), AclOperation.READ,
                ResourceType.TOPIC, t));
    }

    private int recordLockDurationMs(String groupId) {
        return groupConfigs.recordLockDurationMsOrDefault(groupId, defaultRecordLockDurationMs);
    }

    /** The partition's leader and epoch as the image has them. */
    private record Leader(int leaderId, int leaderEpoch) {
    }

    /**
     * For a partition answered NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH: its current leader, whose endpoint on
     * {@code listener} goes into {@code nodes}, so the client moves without a metadata round trip.
     */
    private static Optional<Leader> leaderIfMoved(MetadataImage current, TopicIdPartition tip, short errorCode,
                                                  String listener, Map<Integer, Node> nodes) {
        if (errorCode != Errors.NOT_LEADER_OR_FOLLOWER.code() && errorCode != Errors.FENCED_LEADER_EPOCH.code()
                || tip.topic() == null) {
            return Optional.empty();
        }
        Optional<PartitionImage> partition = current.partition(tip.topicPartition());
        if (partition.isEmpty()) {
            return Optional.empty();
        }
        int leaderId = partition.get().liveLeader(current.brokers().keySet());
        BrokerRegistration broker = leaderId < 0 ? null : current.brokers().get(leaderId);
        Optional<Endpoint> endpoint = broker == null ? Optional.empty() : broker.endpoint(listener);
        if (endpoint.isEmpty()) {
            return Optional.of(new Leader(-1, partition.get().leaderEpoch()));
        }
        nodes.put(leaderId, new Node(leaderId, endpoint.get().host(), endpoint.get().port(),
                broker.rack().orElse(null)));
        return Optional.of(new Leader(leaderId, partition.get().leaderEpoch()));
    }
}
