package io.twinlog.server.handlers.group;

import io.twinlog.server.security.BrokerAuthorization;
import io.twinlog.group.GroupCoordinatorHost;
import io.twinlog.protocol.Request;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * What every group API handler shares: the hosted coordinator, the not-yet-started answer, and answering a request
 * when the coordinator's future completes (on the coordinator's thread; a failed future becomes Kafka's error
 * response for the request, with the error the coordinator chose).
 */
final class GroupRequests {
    private static final Logger log = LoggerFactory.getLogger(GroupRequests.class);
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
        future.whenComplete((result, error) -> {
            if (error != null) {
                Throwable cause = unwrap(error);
                if (cause instanceof ApiException) {
                    log.debug("{} failed in the group coordinator: {}", request, cause.toString());
                } else {
                    log.error("{} failed in the group coordinator", request, cause);
                }
                request.respond(request.errorResponse(cause));
                return;
            }
            try {
                request.respond(toResponse.apply(result));
            } catch (RuntimeException e) {
                log.error("Could not build the response to {}", request, e);
                request.respond(request.errorResponse(e));
            }
        });
    }

    static Throwable unwrap(Throwable t) {
        Throwable c = t;
        while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }
}
