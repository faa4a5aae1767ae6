package io.twinlog.server.handlers.txn;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.EndTxnRequest;
import org.apache.kafka.common.requests.EndTxnResponse;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.common.TransactionVersion;

/**
 * EndTxn ({@code commitTransaction()} / {@code abortTransaction()}), as Kafka serves it: WRITE on the transactional
 * id, then the coordinator writes PREPARE_COMMIT or PREPARE_ABORT and answers; the markers follow. v5 is transaction
 * version 2 (KIP-890): every end bumps the producer's epoch, and the answer carries the producer id and epoch to go
 * on with.
 */
final class EndTxnHandler implements RequestHandler {
    private final TransactionApis apis;

    EndTxnHandler(TransactionApis apis) {
        this.apis = apis;
    }

    @Override
    public void handle(Request request) {
        EndTxnRequest body = request.body();
        EndTxnRequestData data = body.data();
        if (!apis.authorization().allowed(request.context(), AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                data.transactionalId())) {
            request.respond(response(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
        } else if (!apis.host().isStarted()) {
            request.respond(response(Errors.COORDINATOR_NOT_AVAILABLE));
        } else {
            TransactionApis.answer(request, apis.host().endTransaction(data.transactionalId(), data.producerId(),
                    data.producerEpoch(), data.committed() ? TransactionResult.COMMIT : TransactionResult.ABORT,
                    TransactionVersion.transactionVersionForEndTxn(body)), ended -> {
                        EndTxnResponse response = response(TransactionApis.forVersion(ended.error(),
                                request.apiVersion(), (short) 2));
                        if (request.apiVersion() >= 5) {
                            response.data().setProducerId(ended.producerId()).setProducerEpoch(ended.producerEpoch());
                        }
                        return response;
                    });
        }
    }

    private static EndTxnResponse response(Errors error) {
        return new EndTxnResponse(new EndTxnResponseData().setErrorCode(error.code())
                .setProducerId(RecordBatch.NO_PRODUCER_ID).setProducerEpoch(RecordBatch.NO_PRODUCER_EPOCH));
    }
}
