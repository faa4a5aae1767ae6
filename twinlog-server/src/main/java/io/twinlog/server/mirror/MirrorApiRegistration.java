package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorMessages;
import io.twinlog.protocol.ApiRegistry;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/** Registers a mirror API handler that works on decoded structs, and small helpers the handlers share. */
final class MirrorApiRegistration {
    private static final Logger log = LoggerFactory.getLogger(MirrorApiRegistration.class);
    private MirrorApiRegistration() {
    }

    /** A mirror API handler: decoded request (and who sent it, for authorization) in, response struct out. */
    @FunctionalInterface
    interface Handler {
        Struct handle(AuthorizableRequestContext context, Struct request) throws Exception;
    }

    /**
     * A mirror API handler that answers later, without holding the request thread: its future completes with the
     * response struct (errors included in it).
     */
    @FunctionalInterface
    interface AsyncHandler {
        CompletableFuture<Struct> handle(AuthorizableRequestContext context, Struct request) throws Exception;
    }

    /**
     * As {@link #add}, for a handler that answers later; a future that fails anyway is logged with its stack trace
     * and the connection closed, so the client never waits for an answer that will not come.
     */
    static void addAsync(ApiRegistry.Builder registry, MirrorApi api, AsyncHandler handler) {
        registry.addCustom(api.id, api.name, (short) 0, MirrorApi.LATEST_VERSION, request -> {
            Struct body = MirrorMessages.decode(api.requestSchema(request.customHeader().apiVersion()),
                    request.customBody());
            CompletableFuture<Struct> answer;
            try {
                answer = handler.handle(request.authorizationContext(), body);
            } catch (RejectedExecutionException e) {
                log.info("{} from {} refused: the broker is shutting down; closing the connection", api.name,
                        request.connectionId());
                request.closeConnection();
                return;
            }
            answer.whenComplete((response, error) -> {
                if (error == null) {
                    request.respondCustom(MirrorMessages.encode(response));
                } else {
                    log.error("{} from {} failed; closing the connection", api.name, request.connectionId(), error);
                    request.closeConnection();
                }
            });
        });
    }

    /**
     * Decodes the request with the API's schema for its version (on the request thread: it is only parsing), runs
     * the handler on {@code executor} (it reads ZooKeeper, may ask the source), encodes the answer. A handler that
     * throws is logged with its stack trace and the connection closed; so is a request arriving while the broker
     * shuts down.
     */
    static void add(ApiRegistry.Builder registry, MirrorApi api, Executor executor, Handler handler) {
        addAsync(registry, api, (context, body) -> {
            CompletableFuture<Struct> answer = new CompletableFuture<>();
            executor.execute(() -> {
                try {
                    answer.complete(handler.handle(context, body));
                } catch (Throwable t) {
                    answer.completeExceptionally(t);
                }
            });
            return answer;
        });
    }
}
