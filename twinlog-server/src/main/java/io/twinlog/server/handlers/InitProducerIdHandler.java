package io.twinlog.server.handlers;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.resource.ResourceType;

import java.util.OptionalLong;

/**
 * InitProducerId for idempotent producers: a fresh, cluster-unique producer id with epoch 0 each time, as Kafka
 * does without a transactional id. A request with a transactional id goes to the transaction coordinator's handler.
 */
public final class InitProducerIdHandler implements RequestHandler {
    private final BrokerContext ctx;
    private final RequestHandler transactional;

    /** @param transactional serves a request that has a transactional id */
    public InitProducerIdHandler(BrokerContext ctx, RequestHandler transactional) {
        this.ctx = ctx;
        this.transactional = transactional;
    }

    @Override
    public void handle(Request request) throws Exception {
        InitProducerIdRequest body = request.body();
        if (body.data().transactionalId() != null) {
            transactional.handle(request);
            return;
        }
        InitProducerIdResponseData data = new InitProducerIdResponseData().setProducerId(-1).setProducerEpoch((short) -1);
        if (!ctx.authorization().allowedOnClusterQuietly(request.context(), AclOperation.IDEMPOTENT_WRITE)
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
