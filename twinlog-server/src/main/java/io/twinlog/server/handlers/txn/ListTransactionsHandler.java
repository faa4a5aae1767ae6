package io.twinlog.server.handlers.txn;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ListTransactionsRequest;
import org.apache.kafka.common.requests.ListTransactionsResponse;
import org.apache.kafka.common.resource.ResourceType;

import java.util.HashSet;

/**
 * ListTransactions ({@code kafka-transactions.sh list}), as Kafka serves it: the transactional ids this broker
 * coordinates, filtered by state, producer id, duration (v1) and id pattern (v2), and then to those the principal
 * may DESCRIBE. COORDINATOR_LOAD_IN_PROGRESS while a partition of {@code __transaction_state} is loading here.
 */
final class ListTransactionsHandler implements RequestHandler {
    private final TransactionApis apis;

    ListTransactionsHandler(TransactionApis apis) {
        this.apis = apis;
    }

    @Override
    public void handle(Request request) {
        ListTransactionsRequestData data = ((ListTransactionsRequest) request.body()).data();
        if (!apis.host().isStarted()) {
            request.respond(new ListTransactionsResponse(new ListTransactionsResponseData()
                    .setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code())));
            return;
        }
        long duration = request.apiVersion() >= 1 ? data.durationFilter() : -1L;
        String pattern = request.apiVersion() >= 2 ? data.transactionalIdPattern() : null;
        TransactionApis.answer(request, apis.host().list(new HashSet<>(data.stateFilters()),
                new HashSet<>(data.producerIdFilters()), duration, pattern), response -> {
                    response.transactionStates().removeIf(s -> !apis.authorization().allowed(request.context(),
                            AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, s.transactionalId(), false));
                    return new ListTransactionsResponse(response);
                });
    }
}
