package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorMessages;
import io.twinlog.protocol.AdminDeadline;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.protocol.Request;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.types.BoundField;
import org.apache.kafka.common.protocol.types.CompactArrayOf;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;
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
     * response struct (errors included in it). It runs its work on a thread of its own choosing, and checks the
     * request's {@code deadline} there with {@link #expiredAnswer} before it starts.
     */
    @FunctionalInterface
    interface AsyncHandler {
        CompletableFuture<Struct> handle(AuthorizableRequestContext context, Struct request, AdminDeadline deadline)
                throws Exception;
    }

    /**
     * As {@link #add}, for a handler that answers later; a future that fails anyway is logged with its stack trace
     * and the connection closed, so the client never waits for an answer that will not come.
     */
    static void addAsync(ApiRegistry.Builder registry, MirrorApi api, AsyncHandler handler) {
        register(registry, api, (request, body) -> handler.handle(request.authorizationContext(), body,
                AdminDeadline.of(request)));
    }

    /**
     * Decodes the request with the API's schema for its version (on the request thread: it is only parsing), runs
     * the handler on {@code executor} (it reads ZooKeeper, may ask the source), encodes the answer. A request still
     * queued when its {@link AdminDeadline} passes (the mirror APIs carry no timeout: kafka-clients' default) is
     * answered REQUEST_TIMED_OUT and not executed. A handler that throws is logged with its stack trace and the
     * connection closed; so is a request arriving while the broker shuts down.
     */
    static void add(ApiRegistry.Builder registry, MirrorApi api, Executor executor, Handler handler) {
        register(registry, api, (request, body) -> {
            AdminDeadline deadline = AdminDeadline.of(request);
            CompletableFuture<Struct> answer = new CompletableFuture<>();
            executor.execute(() -> {
                try {
                    Optional<Struct> expired = expiredAnswer(api, deadline);
                    answer.complete(expired.isPresent() ? expired.get()
                            : handler.handle(request.authorizationContext(), body));
                } catch (Throwable t) {
                    answer.completeExceptionally(t);
                }
            });
            return answer;
        });
    }

    /**
     * The answer of a request taken by a thread after its {@link AdminDeadline} passed (REQUEST_TIMED_OUT, logged at
     * INFO): its client gave up on it, so it is not executed; empty while it is still worth executing.
     */
    static Optional<Struct> expiredAnswer(MirrorApi api, AdminDeadline deadline) {
        long now = System.nanoTime();
        if (!deadline.hasPassed(now)) {
            return Optional.empty();
        }
        String why = deadline.exception(now).getMessage();
        log.info("{} not executed: {}", api.name, why);
        return Optional.of(errorResponse(api, Errors.REQUEST_TIMED_OUT.code(), why));
    }

    /**
     * A top-level error answer of {@code api}, its arrays present and empty (the schema requires them; a field
     * never set cannot even be read: {@code Struct.get} throws for it).
     */
    static Struct errorResponse(MirrorApi api, short code, String message) {
        Struct s = MirrorMessages.response(api, code, message);
        for (BoundField f : s.schema().fields()) {
            if (f.def.type instanceof CompactArrayOf) {
                s.set(f, new Object[0]);
            }
        }
        return s;
    }

    /** A decoded request in, its answer (later) out. */
    private interface Dispatch {
        CompletableFuture<Struct> handle(Request request, Struct body) throws Exception;
    }

    private static void register(ApiRegistry.Builder registry, MirrorApi api, Dispatch dispatch) {
        registry.addCustom(api.id, api.name, (short) 0, MirrorApi.LATEST_VERSION, request -> {
            Struct body = MirrorMessages.decode(api.requestSchema(request.customHeader().apiVersion()),
                    request.customBody());
            CompletableFuture<Struct> answer;
            try {
                answer = dispatch.handle(request, body);
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
}
