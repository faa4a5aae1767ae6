package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorMessageReader;
import io.twinlog.protocol.AdminDeadline;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.protocol.Request;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Registers a mirror API handler that works on decoded messages (the generated classes of
 * {@code io.twinlog.clients.mirror.message}), and small helpers the handlers share.
 */
final class MirrorApiRegistration {
    private static final Logger log = LoggerFactory.getLogger(MirrorApiRegistration.class);
    private MirrorApiRegistration() {
    }

    /** A mirror API handler: decoded request (and who sent it, for authorization) in, response message out. */
    @FunctionalInterface
    interface Handler<Q extends ApiMessage> {
        ApiMessage handle(AuthorizableRequestContext context, Q request) throws Exception;
    }

    /**
     * A mirror API handler that answers later, without holding the request thread: its future completes with the
     * response message (errors included in it). It runs its work on a thread of its own choosing, and checks the
     * request's {@code deadline} there with {@link #expiredAnswer} before it starts.
     */
    @FunctionalInterface
    interface AsyncHandler<Q extends ApiMessage> {
        CompletableFuture<ApiMessage> handle(AuthorizableRequestContext context, Q request, AdminDeadline deadline)
                throws Exception;
    }

    /**
     * As {@link #add}, for a handler that answers later; a future that fails anyway is logged with its stack trace
     * and the connection closed, so the client never waits for an answer that will not come.
     */
    static <Q extends ApiMessage> void addAsync(ApiRegistry.Builder registry, MirrorApi api,
                                                MirrorMessageReader<Q> reader, AsyncHandler<Q> handler) {
        register(registry, api, reader, (request, body) -> handler.handle(request.authorizationContext(), body,
                AdminDeadline.of(request)));
    }

    /**
     * Decodes the request with {@code reader} at its version (on the request thread: it is only parsing), runs
     * the handler on {@code executor} (it reads ZooKeeper, may ask the source), encodes the answer. A request still
     * queued when its {@link AdminDeadline} passes (the mirror APIs carry no timeout: kafka-clients' default) is
     * answered REQUEST_TIMED_OUT and not executed. A handler that throws is logged with its stack trace and the
     * connection closed; so is a request arriving while the broker shuts down.
     */
    static <Q extends ApiMessage> void add(ApiRegistry.Builder registry, MirrorApi api, MirrorMessageReader<Q> reader,
                                           Executor executor, Handler<Q> handler) {
        register(registry, api, reader, (request, body) -> {
            AdminDeadline deadline = AdminDeadline.of(request);
            CompletableFuture<ApiMessage> answer = new CompletableFuture<>();
            executor.execute(() -> {
                try {
                    Optional<ApiMessage> expired = expiredAnswer(api, deadline);
                    answer.complete(expired.isPresent() ? expired.get()
                            : handler.handle(request.authorizationContext(), body));
                } catch (Throwable t) {
                    // broad: whatever the handler threw fails its answer, which register() logs with the stack
                    // trace before it closes the connection: the client must not wait for an answer never sent
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
    static Optional<ApiMessage> expiredAnswer(MirrorApi api, AdminDeadline deadline) {
        long now = System.nanoTime();
        if (!deadline.hasPassed(now)) {
            return Optional.empty();
        }
        String why = deadline.exception(now).getMessage();
        log.info("{} not executed: {}", api.name, why);
        return Optional.of(api.errorResponse(Errors.REQUEST_TIMED_OUT.code(), why));
    }

    /** A decoded request in, its answer (later) out. */
    private interface Dispatch<Q extends ApiMessage> {
        CompletableFuture<ApiMessage> handle(Request request, Q body) throws Exception;
    }

    /**
     * The registry closes the connection of a request whose version is outside [oldest, latest] (a client cannot
     * be answered in a version it did not ask for) and of one whose body does not decode; the answer is written at
     * the request's version.
     */
    private static <Q extends ApiMessage> void register(ApiRegistry.Builder registry, MirrorApi api,
                                                        MirrorMessageReader<Q> reader, Dispatch<Q> dispatch) {
        registry.addCustom(api.id, api.name, api.oldestVersion(), api.latestVersion(), request -> {
            short version = request.customHeader().apiVersion();
            Q body = reader.read(new ByteBufferAccessor(request.customBody()), version);
            CompletableFuture<ApiMessage> answer;
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
                    request.respondCustom(MessageUtil.toByteBufferAccessor(response, version).buffer());
                } else {
                    log.error("{} from {} failed; closing the connection", api.name, request.connectionId(), error);
                    request.closeConnection();
                }
            });
        });
    }
}
