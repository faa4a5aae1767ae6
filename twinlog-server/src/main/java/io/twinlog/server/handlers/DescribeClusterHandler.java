package io.twinlog.server.handlers;

import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.message.DescribeClusterResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeClusterRequest;
import org.apache.kafka.common.requests.DescribeClusterResponse;
import org.apache.kafka.common.resource.Resource;
import org.apache.kafka.common.resource.ResourceType;

/** DescribeCluster: cluster ID, controller and live brokers on the request's listener. */
public final class DescribeClusterHandler implements RequestHandler {
    private final BrokerContext ctx;

    public DescribeClusterHandler(BrokerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void handle(Request request) {
        DescribeClusterRequest body = request.body();
        MetadataImage image = ctx.image();
        DescribeClusterResponseData data = new DescribeClusterResponseData()
                .setClusterId(image.clusterId()).setControllerId(image.controllerId())
                .setEndpointType(body.data().endpointType());
        if (body.data().endpointType() != 1) {
            data.setErrorCode(Errors.UNSUPPORTED_ENDPOINT_TYPE.code())
                    .setErrorMessage("Twinlog brokers serve only the broker endpoint type");
            request.respond(new DescribeClusterResponse(data));
            return;
        }
        String listener = request.context().listenerName.value();
        for (BrokerRegistration b : image.brokers().values()) {
            b.endpoint(listener).ifPresent(e -> data.brokers().add(new DescribeClusterResponseData.DescribeClusterBroker()
                    .setBrokerId(b.id()).setHost(e.host()).setPort(e.port()).setRack(b.rack().orElse(null))));
        }
        if (body.data().includeClusterAuthorizedOperations()) {
            // Kafka's rule: the operations only for a principal that may describe the cluster, else none
            data.setClusterAuthorizedOperations(ctx.authorization().allowedOnCluster(request.context(),
                    AclOperation.DESCRIBE) ? ctx.authorization().authorizedOperations(request.context(),
                    ResourceType.CLUSTER, Resource.CLUSTER_NAME) : 0);
        }
        request.respond(new DescribeClusterResponse(data));
    }
}
