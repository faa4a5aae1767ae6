package io.twinlog.server.handlers.group;

import io.twinlog.server.security.BrokerAuthorization;
import io.twinlog.group.GroupCoordinatorHost;
import io.twinlog.protocol.Request;
import io.twinlog.server.handlers.FutureResponses;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;

import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * What every group API handler shares: the hosted coordinator, the not-yet-started answer, and answering a request
 * when the coordinator's future completes (on the coordinator's thread; a failed future becomes Kafka's error
 * response for the request, with the error the coordinator chose).
 */
final class GroupRequests {
    private final GroupCoordinatorHost host;
    private final BrokerAuthorization authorization;

    GroupRequests(GroupCoordinatorHost host, BrokerAuthorization authorization) {
        this.host = host;
        this.authorization = authorization;
    }

    BrokerAuthorization authorization() {
        return authorization;
    }

    /**
     * Whether the principal may {@code operation} the group (Kafka's rule for each group API); if not, answers the
     * request with GROUP_AUTHORIZATION_FAILED in its own response type.
     */
    boolean authorized(Request request, AclOperation operation, String groupId) {
        if (authorization.allowed(request.context(), operation, ResourceType.GROUP, groupId)) {
            return true;
        }
        request.respond(request.errorResponse(new GroupAuthorizationException("Not authorized to access group: "
                + groupId)));
        return false;
    }

    GroupCoordinatorHost host() {
        return host;
    }

    /** False (and the request answered COORDINATOR_NOT_AVAILABLE) while the coordinator has not started. */
    boolean ready(Request request) {
        if (host.isStarted()) {
            return true;
        }
        request.respond(request.errorResponse(new CoordinatorNotAvailableException(
                "The group coordinator is starting on this broker")));
        return false;
    }

    /**
     * A handler that checks the coordinator is ready, passes the request to it with {@code call} and answers with
     * {@code toResponse} when the coordinator's future completes.
     */
    <B extends AbstractRequest, T> RequestHandler handler(BiFunction<Request, B, CompletableFuture<T>> call,
                                                          BiFunction<Request, T, AbstractResponse> toResponse) {
        return request -> {
            if (ready(request)) {
                B body = request.body();
                answer(request, call.apply(request, body), result -> toResponse.apply(request, result));
            }
        };
    }

    <T> void answer(Request request, CompletableFuture<T> future, Function<T, AbstractResponse> toResponse) {
        FutureResponses.answer(request, future, toResponse, "the group coordinator");
    }

    static Throwable unwrap(Throwable t) {
        return FutureResponses.unwrap(t);
    }
}
