package io.twinlog.server.handlers.txn;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.common.TransactionVersion;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * AddPartitionsToTxn, in both of its forms. From a transactional producer (v0-3), as Kafka serves it: WRITE on the
 * transactional id (else every partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then WRITE on each topic
 * (TOPIC_AUTHORIZATION_FAILED, and always for an internal topic) and the partition must exist
 * (UNKNOWN_TOPIC_OR_PARTITION); if any partition is refused, the others get OPERATION_NOT_ATTEMPTED and nothing is
 * added. Otherwise the coordinator adds them to the open transaction (writing it first).
 *
 * <p>From a partition leader (v4-5, KIP-890): CLUSTER_ACTION on the cluster (else the request's
 * CLUSTER_AUTHORIZATION_FAILED); per transaction, partitions that do not exist are UNKNOWN_TOPIC_OR_PARTITION (the
 * others OPERATION_NOT_ATTEMPTED); then {@code verifyOnly} asks the coordinator whether the partitions are in the
 * producer's open transaction, and otherwise adds them for a transaction version 2 producer.
 */
final class AddPartitionsToTxnHandler implements RequestHandler {
    private final TransactionApis apis;
    private final Supplier<MetadataImage> image;

    AddPartitionsToTxnHandler(TransactionApis apis, Supplier<MetadataImage> image) {
        this.apis = apis;
        this.image = image;
    }

    @Override
    public void handle(Request request) {
        if (request.apiVersion() >= 4) {
            handleFromBroker(request);
        } else {
            handleFromClient(request);
        }
    }

    private void handleFromBroker(Request request) {
        AddPartitionsToTxnRequest body = request.body();
        if (!apis.authorization().allowedOnCluster(request.context(), AclOperation.CLUSTER_ACTION)) {
            request.respond(body.getErrorResponse(0, Errors.CLUSTER_AUTHORIZATION_FAILED.exception(
                    "AddPartitionsToTxn from a broker needs CLUSTER_ACTION on the cluster")));
            return;
        }
        if (!apis.host().isStarted()) {
            request.respond(body.getErrorResponse(0, Errors.COORDINATOR_NOT_AVAILABLE.exception()));
            return;
        }
        MetadataImage current = image.get();
        Map<String, List<TopicPartition>> byTransaction = body.partitionsByTransaction();
        List<CompletableFuture<AddPartitionsToTxnResponseData.AddPartitionsToTxnResult>> results = new ArrayList<>();
        for (AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction txn : body.data().transactions()) {
            String transactionalId = txn.transactionalId();
            List<TopicPartition> partitions = byTransaction.getOrDefault(transactionalId, List.of());
            Map<TopicPartition, Errors> unknown = new HashMap<>();
            partitions.stream().filter(tp -> current.partition(tp).isEmpty())
                    .forEach(tp -> unknown.put(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION));
            if (!unknown.isEmpty()) {
                Map<TopicPartition, Errors> errors = new HashMap<>();
                partitions.forEach(tp -> errors.put(tp, unknown.getOrDefault(tp, Errors.OPERATION_NOT_ATTEMPTED)));
                results.add(CompletableFuture.completedFuture(AddPartitionsToTxnResponse.resultForTransaction(
                        transactionalId, errors)));
                continue;
            }
            CompletableFuture<Map<TopicPartition, Errors>> answered;
            if (txn.verifyOnly()) {
                answered = apis.host().verifyPartitions(transactionalId, txn.producerId(), txn.producerEpoch(),
                        partitions);
            } else {
                answered = apis.host().addPartitions(transactionalId, txn.producerId(), txn.producerEpoch(),
                        new LinkedHashSet<>(partitions), TransactionVersion.transactionVersionForAddPartitionsToTxn(
                                body)).thenApply(error -> {
                                    Map<TopicPartition, Errors> errors = new HashMap<>();
                                    partitions.forEach(tp -> errors.put(tp, error));
                                    return errors;
                                });
            }
            short version = request.apiVersion();
            results.add(answered.thenApply(errors -> {
                Map<TopicPartition, Errors> forVersion = new HashMap<>();
                // TRANSACTION_ABORTABLE is new in v5
                errors.forEach((tp, e) -> forVersion.put(tp, version < 5 && e == Errors.TRANSACTION_ABORTABLE
                        ? Errors.INVALID_TXN_STATE : e));
                return AddPartitionsToTxnResponse.resultForTransaction(transactionalId, forVersion);
            }));
        }
        TransactionApis.answer(request, CompletableFuture.allOf(results.toArray(CompletableFuture[]::new)),
                done -> {
                    AddPartitionsToTxnResponseData.AddPartitionsToTxnResultCollection collection =
                            new AddPartitionsToTxnResponseData.AddPartitionsToTxnResultCollection();
                    results.forEach(r -> collection.add(r.join()));
                    return new AddPartitionsToTxnResponse(new AddPartitionsToTxnResponseData()
                            .setResultsByTransaction(collection));
                });
    }

    private void handleFromClient(Request request) {
        AddPartitionsToTxnRequest body = request.body();
        AddPartitionsToTxnRequestData data = body.data();
        String transactionalId = data.v3AndBelowTransactionalId();
        List<TopicPartition> partitions = AddPartitionsToTxnRequest.getPartitions(data.v3AndBelowTopics());
        if (!apis.authorization().allowed(request.context(), AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                transactionalId)) {
            request.respond(response(partitions, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, Map.of()));
            return;
        }
        MetadataImage current = image.get();
        Map<TopicPartition, Errors> refused = new HashMap<>();
        for (TopicPartition tp : partitions) {
            // internal topics are never part of a client's transaction (Kafka leaves them out of the authorized set)
            if (Topic.isInternal(tp.topic()) || !apis.authorization().allowed(request.context(), AclOperation.WRITE,
                    ResourceType.TOPIC, tp.topic())) {
                refused.put(tp, Errors.TOPIC_AUTHORIZATION_FAILED);
            } else if (current.partition(tp).isEmpty()) {
                refused.put(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION);
            }
        }
        if (!refused.isEmpty()) {
            request.respond(response(partitions, Errors.OPERATION_NOT_ATTEMPTED, refused));
            return;
        }
        if (!apis.host().isStarted()) {
            request.respond(response(partitions, Errors.COORDINATOR_NOT_AVAILABLE, Map.of()));
            return;
        }
        Set<TopicPartition> added = new LinkedHashSet<>(partitions);
        TransactionApis.answer(request, apis.host().addPartitions(transactionalId, data.v3AndBelowProducerId(),
                data.v3AndBelowProducerEpoch(), added, TransactionVersion.transactionVersionForAddPartitionsToTxn(
                        body)), error -> response(partitions, TransactionApis.forVersion(error, request.apiVersion(),
                (short) 2), Map.of()));
    }

    /** Every partition answered {@code error}, except those in {@code exceptions}, in the v0-3 form. */
    private static AddPartitionsToTxnResponse response(List<TopicPartition> partitions, Errors error,
                                                       Map<TopicPartition, Errors> exceptions) {
        Map<TopicPartition, Errors> errors = new HashMap<>();
        partitions.forEach(tp -> errors.put(tp, exceptions.getOrDefault(tp, error)));
        AddPartitionsToTxnResponseData.AddPartitionsToTxnResult result = AddPartitionsToTxnResponse
                .resultForTransaction(AddPartitionsToTxnResponse.V3_AND_BELOW_TXN_ID, errors);
        return new AddPartitionsToTxnResponse(new AddPartitionsToTxnResponseData()
                .setResultsByTopicV3AndBelow(result.topicResults()));
    }
}
