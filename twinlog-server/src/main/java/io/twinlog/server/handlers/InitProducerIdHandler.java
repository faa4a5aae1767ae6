package io.twinlog.server.handlers;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.handlers.group.TransactionsRefused;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.resource.ResourceType;

import java.util.OptionalLong;

/**
 * InitProducerId for idempotent producers: a fresh, cluster-unique producer id with epoch 0 each time, as Kafka
 * does without a transactional id. Transactional ids are refused (UNSUPPORTED_VERSION, see
 * {@link TransactionsRefused}) until Twinlog has a transaction coordinator.
 */
public final class InitProducerIdHandler implements RequestHandler {
    private final BrokerContext ctx;

    public InitProducerIdHandler(BrokerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void handle(Request request) {
        InitProducerIdRequest body = request.body();
        InitProducerIdResponseData data = new InitProducerIdResponseData().setProducerId(-1).setProducerEpoch((short) -1);
        if (body.data().transactionalId() != null) {
            // clients ask FindCoordinator first and stop at its answer; one that comes here anyway gets the same
            // non-retriable code (this response has no message field)
            TransactionsRefused.log("InitProducerId", body.data().transactionalId());
            data.setErrorCode(Errors.UNSUPPORTED_VERSION.code());
        } else if (!ctx.authorization().allowedOnClusterQuietly(request.context(), AclOperation.IDEMPOTENT_WRITE)
                && !ctx.authorization().allowedOnAny(request.context(), AclOperation.WRITE, ResourceType.TOPIC)) {
            // Kafka's rule for an idempotent producer: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic
            data.setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code());
        } else {
            OptionalLong id = ctx.producerIds().generateProducerId();
            if (id.isPresent()) {
                data.setProducerId(id.getAsLong()).setProducerEpoch((short) 0);
            } else {
                // a block of ids is being claimed from ZooKeeper: retriable, as Kafka answers in the same case
                data.setErrorCode(Errors.COORDINATOR_LOAD_IN_PROGRESS.code());
            }
        }
        request.respond(new InitProducerIdResponse(data));
    }
}
