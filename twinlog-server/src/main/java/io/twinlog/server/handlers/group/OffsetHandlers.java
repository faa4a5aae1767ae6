package io.twinlog.server.handlers.group;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetCommitResponse;
import org.apache.kafka.common.requests.OffsetDeleteRequest;
import org.apache.kafka.common.requests.OffsetDeleteResponse;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetFetchResponse;
import org.apache.kafka.common.requests.TxnOffsetCommitRequest;
import org.apache.kafka.common.requests.TxnOffsetCommitResponse;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.utils.internals.BufferSupplier;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Committed offsets: OffsetCommit, OffsetFetch (one or many groups, by topic name or, from v10, topic ID) and
 * OffsetDelete. What Kafka's request layer does before its coordinator is done here: partitions of topics this
 * cluster does not have are answered UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID by ID) and never stored; topic
 * IDs are turned into names for the coordinator, which keys offsets by name.
 */
final class OffsetHandlers {
    private final GroupRequests groups;
    private final Supplier<MetadataImage> image;

    OffsetHandlers(GroupRequests groups, Supplier<MetadataImage> image) {
        this.groups = groups;
        this.image = image;
    }

    RequestHandler commit() {
        return request -> {
            if (!groups.ready(request)) {
                return;
            }
            OffsetCommitRequestData data = ((OffsetCommitRequest) request.body()).data();
            // Kafka's rule: READ on the group, then READ on each topic
            if (!groups.authorized(request, AclOperation.READ, data.groupId())) {
                return;
            }
            boolean byId = OffsetCommitResponse.useTopicIds(request.apiVersion());
            MetadataImage current = image.get();
            OffsetCommitResponse.Builder refused = OffsetCommitResponse.newBuilder(byId);
            List<OffsetCommitRequestData.OffsetCommitRequestTopic> known = new ArrayList<>();
            for (OffsetCommitRequestData.OffsetCommitRequestTopic t : data.topics()) {
                Optional<TopicImage> topic = byId ? current.topic(t.topicId()) : current.topic(t.name());
                String name = topic.map(TopicImage::name).orElse(t.name());
                if (name != null && !name.isEmpty() && !groups.authorization().allowed(request.context(),
                        AclOperation.READ, ResourceType.TOPIC, name)) {
                    refused.addPartitions(t.topicId(), t.name(), t.partitions(),
                            OffsetCommitRequestData.OffsetCommitRequestPartition::partitionIndex,
                            Errors.TOPIC_AUTHORIZATION_FAILED);
                    continue;
                }
                if (topic.isEmpty()) {
                    refused.addPartitions(t.topicId(), t.name(), t.partitions(),
                            OffsetCommitRequestData.OffsetCommitRequestPartition::partitionIndex,
                            byId ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION);
                } else {
                    known.add(t.duplicate().setName(topic.get().name())); // by ID, the request carries the ID
                }
            }
            if (known.isEmpty()) {
                request.respond(refused.build());
                return;
            }
            OffsetCommitRequestData forward = data.duplicate().setTopics(known);
            groups.answer(request, groups.host().coordinator().commitOffsets(request.context(), forward,
                    BufferSupplier.NO_CACHING),
                    result -> refused.merge(byId ? withIds(result, current) : result).build());
        };
    }

    /**
     * TxnOffsetCommit (v0-4, {@code sendOffsetsToTransaction}), as Kafka serves it: WRITE on the transactional id,
     * READ on the group (either refusal answers every partition), READ on each topic; unknown partitions
     * UNKNOWN_TOPIC_OR_PARTITION. The rest go to the group coordinator, which writes them as the transaction's
     * pending offsets: its COMMIT marker makes them the group's, its ABORT drops them.
     */
    RequestHandler txnCommit() {
        return request -> {
            if (!groups.ready(request)) {
                return;
            }
            TxnOffsetCommitRequestData data = ((TxnOffsetCommitRequest) request.body()).data();
            if (!groups.authorization().allowed(request.context(), AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                    data.transactionalId())) {
                request.respond(new TxnOffsetCommitResponse(TxnOffsetCommitRequest.getErrorResponse(data,
                        Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)));
                return;
            }
            if (!groups.authorized(request, AclOperation.READ, data.groupId())) {
                return;
            }
            MetadataImage current = image.get();
            short version = request.apiVersion();
            // v6 names topics by topic ID (KIP-1319); the coordinator works by name
            boolean byId = version >= 6;
            List<TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic> refused = new ArrayList<>();
            List<TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic> known = new ArrayList<>();
            for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic t : data.topics()) {
                Optional<TopicImage> byIdTopic = byId ? current.topic(t.topicId()) : Optional.empty();
                String name = byId ? byIdTopic.map(TopicImage::name).orElse("") : t.name();
                boolean readable = byId && byIdTopic.isEmpty() || groups.authorization().allowed(request.context(),
                        AclOperation.READ, ResourceType.TOPIC, name);
                List<TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition> existing = new ArrayList<>();
                List<TxnOffsetCommitResponseData.TxnOffsetCommitResponsePartition> errors = new ArrayList<>();
                for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition p : t.partitions()) {
                    Errors error = byId && byIdTopic.isEmpty() ? Errors.UNKNOWN_TOPIC_ID
                            : !readable ? Errors.TOPIC_AUTHORIZATION_FAILED
                            : current.partition(new TopicPartition(name, p.partitionIndex())).isEmpty()
                            ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.NONE;
                    if (error == Errors.NONE) {
                        existing.add(p);
                    } else {
                        errors.add(new TxnOffsetCommitResponseData.TxnOffsetCommitResponsePartition()
                                .setPartitionIndex(p.partitionIndex()).setErrorCode(error.code()));
                    }
                }
                if (!errors.isEmpty()) {
                    refused.add(new TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic().setName(name)
                            .setTopicId(t.topicId()).setPartitions(errors));
                }
                if (!existing.isEmpty()) {
                    known.add(t.duplicate().setName(name).setPartitions(existing));
                }
            }
            if (known.isEmpty()) {
                request.respond(new TxnOffsetCommitResponse(new TxnOffsetCommitResponseData().setTopics(refused)));
                return;
            }
            groups.answer(request, groups.host().coordinator().commitTransactionalOffsets(request.context(),
                    data.duplicate().setTopics(known), BufferSupplier.NO_CACHING), result -> {
                        if (byId) {
                            result.topics().forEach(t -> t.setTopicId(topicId(current, t.name(), t.topicId())));
                        }
                        result.topics().addAll(refused);
                        if (version < 2) {
                            // Kafka's rule: clients before 2.0 could fail on the loading error; they retry this one
                            result.topics().forEach(t -> t.partitions().forEach(p -> {
                                if (p.errorCode() == Errors.COORDINATOR_LOAD_IN_PROGRESS.code()) {
                                    p.setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code());
                                }
                            }));
                        }
                        return new TxnOffsetCommitResponse(result);
                    });
        };
    }

    /** Puts the topic IDs back on the coordinator's answer (it works by name), for versions that carry them. */
    private static OffsetCommitResponseData withIds(OffsetCommitResponseData result, MetadataImage current) {
        result.topics().forEach(t -> t.setTopicId(topicId(current, t.name(), t.topicId())));
        return result;
    }

    RequestHandler fetch() {
        return request -> {
            if (!groups.ready(request)) {
                return;
            }
            OffsetFetchRequest body = request.body();
            boolean byId = OffsetFetchRequest.useTopicIds(request.apiVersion());
            MetadataImage current = image.get();
            List<CompletableFuture<OffsetFetchResponseData.OffsetFetchResponseGroup>> futures = new ArrayList<>();
            for (OffsetFetchRequestData.OffsetFetchRequestGroup g : body.groups()) {
                futures.add(fetchGroup(request, g, byId, current, body.requireStable()));
            }
            short version = request.apiVersion();
            groups.answer(request, CompletableFuture.allOf(futures.toArray(new CompletableFuture[0]))
                    .thenApply(ignored -> futures.stream().map(CompletableFuture::join).toList()),
                    results -> new OffsetFetchResponse.Builder(results).build(version));
        };
    }

    /**
     * One group's offsets. By ID (v10+), IDs this cluster does not know are answered UNKNOWN_TOPIC_ID here and the
     * rest are asked by name; the answer gets its topic IDs back.
     */
    private CompletableFuture<OffsetFetchResponseData.OffsetFetchResponseGroup> fetchGroup(
            Request request, OffsetFetchRequestData.OffsetFetchRequestGroup group, boolean byId, MetadataImage current,
            boolean requireStable) {
        // Kafka's rule: DESCRIBE on the group; topics the principal may not DESCRIBE are refused (named) or left
        // out (all of the group's)
        if (!groups.authorization().allowed(request.context(), AclOperation.DESCRIBE, ResourceType.GROUP,
                group.groupId())) {
            return CompletableFuture.completedFuture(OffsetFetchResponse.groupError(group,
                    Errors.GROUP_AUTHORIZATION_FAILED, request.apiVersion()));
        }
        List<OffsetFetchResponseData.OffsetFetchResponseTopics> unknown = new ArrayList<>();
        OffsetFetchRequestData.OffsetFetchRequestGroup forward = group;
        if (!byId && group.topics() != null) {
            List<OffsetFetchRequestData.OffsetFetchRequestTopics> allowed = new ArrayList<>();
            for (OffsetFetchRequestData.OffsetFetchRequestTopics t : group.topics()) {
                if (describable(request, t.name())) {
                    allowed.add(t);
                } else {
                    unknown.add(refusedTopic(t, Errors.TOPIC_AUTHORIZATION_FAILED).setName(t.name()));
                }
            }
            forward = group.duplicate().setTopics(allowed);
        }
        if (byId && group.topics() != null) {
            List<OffsetFetchRequestData.OffsetFetchRequestTopics> named = new ArrayList<>();
            for (OffsetFetchRequestData.OffsetFetchRequestTopics t : group.topics()) {
                Optional<TopicImage> topic = current.topic(t.topicId());
                if (topic.isPresent() && !describable(request, topic.get().name())) {
                    unknown.add(refusedTopic(t, Errors.TOPIC_AUTHORIZATION_FAILED));
                } else if (topic.isPresent()) {
                    named.add(t.duplicate().setName(topic.get().name()));
                } else {
                    unknown.add(refusedTopic(t, Errors.UNKNOWN_TOPIC_ID));
                }
            }
            forward = group.duplicate().setTopics(named);
        }
        return groups.host().coordinator().fetchOffsets(request.context(), forward, requireStable)
                .thenApply(r -> {
                    // the coordinator's lists may be immutable (an empty group answers List.of())
                    if (group.topics() == null && r.topics().stream().anyMatch(t -> t.name() != null
                            && !describable(request, t.name()))) {
                        List<OffsetFetchResponseData.OffsetFetchResponseTopics> visible = new ArrayList<>(r.topics());
                        visible.removeIf(t -> t.name() != null && !describable(request, t.name()));
                        r.setTopics(visible);
                    }
                    if (!byId && !unknown.isEmpty()) {
                        List<OffsetFetchResponseData.OffsetFetchResponseTopics> all = new ArrayList<>(r.topics());
                        all.addAll(unknown);
                        r.setTopics(all);
                    }
                    if (byId) {
                        for (OffsetFetchResponseData.OffsetFetchResponseTopics t : r.topics()) {
                            if (t.name() != null) {
                                t.setTopicId(topicId(current, t.name(), t.topicId()));
                            }
                        }
                        if (!unknown.isEmpty()) {
                            List<OffsetFetchResponseData.OffsetFetchResponseTopics> all = new ArrayList<>(r.topics());
                            all.addAll(unknown);
                            r.setTopics(all);
                        }
                    }
                    return r;
                })
                .exceptionally(e -> OffsetFetchResponse.groupError(group, Errors.forException(GroupRequests.unwrap(e)),
                        request.apiVersion()));
    }

    private boolean describable(Request request, String topic) {
        return groups.authorization().allowed(request.context(), AclOperation.DESCRIBE, ResourceType.TOPIC, topic);
    }

    private static OffsetFetchResponseData.OffsetFetchResponseTopics refusedTopic(
            OffsetFetchRequestData.OffsetFetchRequestTopics t, Errors error) {
        OffsetFetchResponseData.OffsetFetchResponseTopics u = new OffsetFetchResponseData.OffsetFetchResponseTopics()
                .setTopicId(t.topicId());
        for (Integer p : t.partitionIndexes()) {
            u.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartitions().setPartitionIndex(p)
                    .setCommittedOffset(-1L).setErrorCode(error.code()));
        }
        return u;
    }

    /** The coordinator keys offsets by name: the ID it answers with, else the one this cluster has for the name. */
    private static Uuid topicId(MetadataImage current, String name, Uuid answered) {
        if (answered != null && !Uuid.ZERO_UUID.equals(answered)) {
            return answered;
        }
        return current.topic(name).map(TopicImage::topicId).orElse(Uuid.ZERO_UUID);
    }

    RequestHandler delete() {
        return request -> {
            if (!groups.ready(request)) {
                return;
            }
            OffsetDeleteRequestData data = ((OffsetDeleteRequest) request.body()).data();
            // Kafka's rule: DELETE on the group, then READ on each topic
            if (!groups.authorized(request, AclOperation.DELETE, data.groupId())) {
                return;
            }
            MetadataImage current = image.get();
            OffsetDeleteResponse.Builder refused = new OffsetDeleteResponse.Builder();
            OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection known =
                    new OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection();
            for (OffsetDeleteRequestData.OffsetDeleteRequestTopic t : data.topics()) {
                if (!groups.authorization().allowed(request.context(), AclOperation.READ, ResourceType.TOPIC,
                        t.name())) {
                    refused.addPartitions(t.name(), t.partitions(),
                            OffsetDeleteRequestData.OffsetDeleteRequestPartition::partitionIndex,
                            Errors.TOPIC_AUTHORIZATION_FAILED);
                } else if (current.topic(t.name()).isEmpty()) {
                    refused.addPartitions(t.name(), t.partitions(),
                            OffsetDeleteRequestData.OffsetDeleteRequestPartition::partitionIndex,
                            Errors.UNKNOWN_TOPIC_OR_PARTITION);
                } else {
                    known.add(t.duplicate());
                }
            }
            OffsetDeleteRequestData forward = data.duplicate().setTopics(known);
            groups.answer(request, groups.host().coordinator().deleteOffsets(request.context(), forward,
                    BufferSupplier.NO_CACHING), result -> refused.merge(result).build());
        };
    }
}
