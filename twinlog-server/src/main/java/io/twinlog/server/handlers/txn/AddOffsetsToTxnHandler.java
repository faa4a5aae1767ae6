package io.twinlog.server.handlers.txn;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddOffsetsToTxnResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AddOffsetsToTxnRequest;
import org.apache.kafka.common.requests.AddOffsetsToTxnResponse;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.common.TransactionVersion;

import java.util.Set;
import java.util.function.ToIntFunction;

/**
 * AddOffsetsToTxn ({@code sendOffsetsToTransaction} without KIP-890), as Kafka serves it: WRITE on the
 * transactional id, READ on the group; then the group's {@code __consumer_offsets} partition joins the transaction,
 * so its COMMIT or ABORT marker makes the offsets committed with TxnOffsetCommit visible or drops them.
 */
final class AddOffsetsToTxnHandler implements RequestHandler {
    private final TransactionApis apis;
    private final ToIntFunction<String> offsetsPartition;

    /** @param offsetsPartition the {@code __consumer_offsets} partition of a group */
    AddOffsetsToTxnHandler(TransactionApis apis, ToIntFunction<String> offsetsPartition) {
        this.apis = apis;
        this.offsetsPartition = offsetsPartition;
    }

    @Override
    public void handle(Request request) {
        AddOffsetsToTxnRequestData data = ((AddOffsetsToTxnRequest) request.body()).data();
        if (!apis.authorization().allowed(request.context(), AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                data.transactionalId())) {
            request.respond(response(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
        } else if (!apis.authorization().allowed(request.context(), AclOperation.READ, ResourceType.GROUP,
                data.groupId())) {
            request.respond(response(Errors.GROUP_AUTHORIZATION_FAILED));
        } else if (!apis.host().isStarted()) {
            request.respond(response(Errors.COORDINATOR_NOT_AVAILABLE));
        } else {
            TopicPartition offsets = new TopicPartition(Topic.GROUP_METADATA_TOPIC_NAME,
                    offsetsPartition.applyAsInt(data.groupId()));
            TransactionApis.answer(request, apis.host().addPartitions(data.transactionalId(), data.producerId(),
                    data.producerEpoch(), Set.of(offsets), TransactionVersion.TV_0), error -> response(
                            TransactionApis.forVersion(error, request.apiVersion(), (short) 2)));
        }
    }

    private static AddOffsetsToTxnResponse response(Errors error) {
        return new AddOffsetsToTxnResponse(new AddOffsetsToTxnResponseData().setErrorCode(error.code()));
    }
}
