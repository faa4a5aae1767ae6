package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorMessages;
import io.twinlog.protocol.ApiRegistry;
import org.apache.kafka.common.protocol.types.Struct;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;

/** Registers a mirror API handler that works on decoded structs, and small helpers the handlers share. */
final class MirrorApiRegistration {
    private static final Logger log = LoggerFactory.getLogger(MirrorApiRegistration.class);
    private MirrorApiRegistration() {
    }

    /** A mirror API handler: decoded request in, response struct out. */
    @FunctionalInterface
    interface Handler {
        Struct handle(Struct request) throws Exception;
    }

    /**
     * A mirror API handler that answers later, without holding the request thread: its future completes with the
     * response struct (errors included in it).
     */
    @FunctionalInterface
    interface AsyncHandler {
        CompletableFuture<Struct> handle(Struct request) throws Exception;
    }

    /**
     * As {@link #add}, for a handler that answers later; a future that fails anyway is logged with its stack trace
     * and the connection closed, so the client never waits for an answer that will not come.
     */
    static void addAsync(ApiRegistry.Builder registry, MirrorApi api, AsyncHandler handler) {
        registry.addCustom(api.id, api.name, (short) 0, MirrorApi.LATEST_VERSION, request -> {
            Struct body = MirrorMessages.decode(api.requestSchema(request.customHeader().apiVersion()),
                    request.customBody());
            handler.handle(body).whenComplete((response, error) -> {
                if (error == null) {
                    request.respondCustom(MirrorMessages.encode(response));
                } else {
                    log.error("{} from {} failed; closing the connection", api.name, request.connectionId(), error);
                    request.closeConnection();
                }
            });
        });
    }

    /** Decodes the request with the API's schema for its version, runs the handler, encodes the answer. */
    static void add(ApiRegistry.Builder registry, MirrorApi api, Handler handler) {
        registry.addCustom(api.id, api.name, (short) 0, MirrorApi.LATEST_VERSION, request -> {
            Struct body = MirrorMessages.decode(api.requestSchema(request.customHeader().apiVersion()),
                    request.customBody());
            request.respondCustom(MirrorMessages.encode(handler.handle(body)));
        });
    }

    /** The innermost cause's message: what an operator needs from a wrapped client exception. */
    static String rootMessage(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null) {
            c = c.getCause();
        }
        return c.getMessage() == null ? c.toString() : c.getMessage();
    }
}
