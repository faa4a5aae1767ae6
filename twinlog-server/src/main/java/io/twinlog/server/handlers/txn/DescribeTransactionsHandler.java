package io.twinlog.server.handlers.txn;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeTransactionsRequestData;
import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeTransactionsRequest;
import org.apache.kafka.common.requests.DescribeTransactionsResponse;
import org.apache.kafka.common.resource.ResourceType;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * DescribeTransactions ({@code kafka-transactions.sh describe}), as Kafka serves it: per transactional id, DESCRIBE
 * on it (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then its state from the coordinator (NOT_COORDINATOR on a
 * broker that does not coordinate it, TRANSACTIONAL_ID_NOT_FOUND for an unknown id), with the partitions of topics
 * the principal may not DESCRIBE left out.
 */
final class DescribeTransactionsHandler implements RequestHandler {
    private final TransactionApis apis;

    DescribeTransactionsHandler(TransactionApis apis) {
        this.apis = apis;
    }

    @Override
    public void handle(Request request) {
        DescribeTransactionsRequestData data = ((DescribeTransactionsRequest) request.body()).data();
        List<CompletableFuture<DescribeTransactionsResponseData.TransactionState>> states = new ArrayList<>();
        for (String id : data.transactionalIds()) {
            DescribeTransactionsResponseData.TransactionState refused = new DescribeTransactionsResponseData
                    .TransactionState().setTransactionalId(id);
            if (!apis.authorization().allowed(request.context(), AclOperation.DESCRIBE,
                    ResourceType.TRANSACTIONAL_ID, id)) {
                states.add(CompletableFuture.completedFuture(refused.setErrorCode(
                        Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code())));
            } else if (!apis.host().isStarted()) {
                states.add(CompletableFuture.completedFuture(refused.setErrorCode(
                        Errors.COORDINATOR_NOT_AVAILABLE.code())));
            } else {
                states.add(apis.host().describe(id).thenApply(state -> withoutHiddenTopics(request, state)));
            }
        }
        TransactionApis.answer(request, CompletableFuture.allOf(states.toArray(new CompletableFuture<?>[0])),
                done -> {
                    DescribeTransactionsResponseData response = new DescribeTransactionsResponseData();
                    states.forEach(s -> response.transactionStates().add(s.join()));
                    return new DescribeTransactionsResponse(response);
                });
    }

    private DescribeTransactionsResponseData.TransactionState withoutHiddenTopics(
            Request request, DescribeTransactionsResponseData.TransactionState state) {
        state.topics().removeIf(t -> !apis.authorization().allowed(request.context(), AclOperation.DESCRIBE,
                ResourceType.TOPIC, t.topic(), false));
        return state;
    }
}
