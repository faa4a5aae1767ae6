package io.twinlog.server.handlers;

import io.twinlog.protocol.Request;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.requests.AbstractResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;

/** Answering a request when a coordinator's future completes, on the thread that completes it. */
public final class FutureResponses {
    private static final Logger log = LoggerFactory.getLogger(FutureResponses.class);

    private FutureResponses() {
    }

    /**
     * Answers {@code request} with {@code toResponse} of the future's result; a failed future becomes the request's
     * error response with the error the coordinator chose, logged with its stack trace unless it is one of Kafka's
     * API errors.
     *
     * @param source who completes the future, for the log ("the group coordinator")
     */
    public static <T> void answer(Request request, CompletableFuture<T> future,
                                  Function<T, AbstractResponse> toResponse, String source) {
        future.whenComplete((result, error) -> {
            if (error != null) {
                Throwable cause = unwrap(error);
                if (cause instanceof ApiException) {
                    log.debug("{} failed in {}: {}", request, source, cause.toString());
                } else {
                    log.error("{} failed in {}", request, source, cause);
                }
                request.respond(request.errorResponse(cause));
                return;
            }
            try {
                request.respond(toResponse.apply(result));
            } catch (RuntimeException e) {
                // broad: a response that cannot be built, for any reason, becomes an error answer
                log.error("Could not build the response to {}", request, e);
                request.respond(request.errorResponse(e));
            }
        });
    }

    /** The failure itself, out of its CompletionException / ExecutionException wrappers. */
    public static Throwable unwrap(Throwable t) {
        Throwable c = t;
        while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }
}
