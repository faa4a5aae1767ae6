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

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * AddPartitionsToTxn from a transactional producer (v0-3; the broker-to-broker verification versions 4-5 of
 * KIP-890 are not served yet), as Kafka serves it: WRITE on the transactional id (else every partition
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then WRITE on each topic (TOPIC_AUTHORIZATION_FAILED, and always for an
 * internal topic) and the partition
 * must exist (UNKNOWN_TOPIC_OR_PARTITION); if any partition is refused, the others get OPERATION_NOT_ATTEMPTED and
 * nothing is added. Otherwise the coordinator adds them to the open transaction (writing it first).
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
