package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.clients.mirror.MirrorMessages;
import io.twinlog.protocol.ApiRegistry;
import org.apache.kafka.common.protocol.types.Struct;

/** Registers a mirror API handler that works on decoded structs, and small helpers the handlers share. */
final class MirrorApiRegistration {
    private MirrorApiRegistration() {
    }

    /** A mirror API handler: decoded request in, response struct out. */
    @FunctionalInterface
    interface Handler {
        Struct handle(Struct request) throws Exception;
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
