package io.twinlog.server.handlers;

import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.security.BrokerAuthorization;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ClusterAuthorizationException;

/**
 * Kafka's rule for the cluster-wide APIs (reassignments, elections, log dirs, credentials, quotas, the controller's
 * inter-broker calls): one operation on the cluster resource, checked before the request does anything, and
 * CLUSTER_AUTHORIZATION_FAILED in the request's own error response when the principal may not.
 */
public final class ClusterAuthorized {
    private ClusterAuthorized() {
    }

    /**
     * Kafka's rule for WriteTxnMarkers: ALTER on the cluster (an operator's {@code kafka-transactions.sh abort}),
     * else CLUSTER_ACTION (a broker's coordinator); the first is asked quietly, so only a denial of both is logged.
     */
    public static RequestHandler requireAlterOrClusterAction(BrokerAuthorization authorization,
                                                             RequestHandler handler) {
        return request -> {
            if (authorization.allowedOnClusterQuietly(request.context(), AclOperation.ALTER)
                    || authorization.allowedOnCluster(request.context(), AclOperation.CLUSTER_ACTION)) {
                handler.handle(request);
            } else {
                request.respond(request.errorResponse(new ClusterAuthorizationException(
                        request.apiKey().name + " needs ALTER or CLUSTER_ACTION on the cluster")));
            }
        };
    }

    public static RequestHandler require(BrokerAuthorization authorization, AclOperation operation,
                                         RequestHandler handler) {
        return request -> {
            if (authorization.allowedOnCluster(request.context(), operation)) {
                handler.handle(request);
            } else {
                request.respond(request.errorResponse(new ClusterAuthorizationException(
                        request.apiKey().name + " needs " + operation + " on the cluster")));
            }
        };
    }
}
