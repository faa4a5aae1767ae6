package io.twinlog.server.handlers.txn;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.transaction.ExpectedProducer;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.resource.ResourceType;

import java.util.Optional;

/**
 * InitProducerId with a transactional id, as Kafka serves it: WRITE on the transactional id (else
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED); a producer id given without its epoch, or the reverse, is INVALID_REQUEST;
 * then the coordinator bumps the id's epoch (fencing older producers of the same id) once the transition is in the
 * replicated {@code __transaction_state} log.
 */
final class TransactionalInitProducerIdHandler implements RequestHandler {
    private final TransactionApis apis;

    TransactionalInitProducerIdHandler(TransactionApis apis) {
        this.apis = apis;
    }

    @Override
    public void handle(Request request) {
        InitProducerIdRequestData data = ((InitProducerIdRequest) request.body()).data();
        String transactionalId = data.transactionalId();
        if (!apis.authorization().allowed(request.context(), AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                transactionalId)) {
            request.respond(error(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
            return;
        }
        boolean noProducerId = data.producerId() == RecordBatch.NO_PRODUCER_ID;
        boolean noEpoch = data.producerEpoch() == RecordBatch.NO_PRODUCER_EPOCH;
        if (noProducerId != noEpoch) {
            request.respond(error(Errors.INVALID_REQUEST));
            return;
        }
        if (!apis.host().isStarted()) {
            request.respond(error(Errors.COORDINATOR_NOT_AVAILABLE));
            return;
        }
        Optional<ExpectedProducer> expected = noProducerId ? Optional.empty()
                : Optional.of(new ExpectedProducer(data.producerId(), data.producerEpoch()));
        TransactionApis.answer(request, apis.host().initProducerId(transactionalId, data.transactionTimeoutMs(),
                expected), result -> new InitProducerIdResponse(new InitProducerIdResponseData()
                .setErrorCode(TransactionApis.forVersion(result.error(), request.apiVersion(), (short) 4).code())
                .setProducerId(result.producerId())
                .setProducerEpoch(result.producerEpoch())));
    }

    private static InitProducerIdResponse error(Errors error) {
        return new InitProducerIdResponse(new InitProducerIdResponseData().setErrorCode(error.code())
                .setProducerId(RecordBatch.NO_PRODUCER_ID).setProducerEpoch(RecordBatch.NO_PRODUCER_EPOCH));
    }
}
