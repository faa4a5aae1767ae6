package io.twinlog.server.handlers;

import io.twinlog.protocol.ApiRegistry;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;

import java.util.function.Supplier;

/** ApiVersions: advertises exactly the APIs and versions registered, so clients adapt to what Twinlog serves. */
public final class ApiVersionsHandler implements RequestHandler {
    private final Supplier<ApiRegistry> registry;

    public ApiVersionsHandler(Supplier<ApiRegistry> registry) {
        this.registry = registry;
    }

    @Override
    public void handle(Request request) {
        ApiVersionsRequest body = request.body();
        ApiVersionsResponseData data = advertised(registry.get());
        if (body.hasUnsupportedRequestVersion()) {
            data.setErrorCode(Errors.UNSUPPORTED_VERSION.code());
        } else if (!body.isValid()) {
            data.setErrorCode(Errors.INVALID_REQUEST.code());
        }
        request.respond(new ApiVersionsResponse(data));
    }

    /**
     * What a SASL listener answers before the client has authenticated (Kafka's authenticator answers ApiVersions
     * itself then): the same APIs and versions.
     */
    public static ApiVersionsResponse beforeAuthentication(ApiRegistry registry) {
        return new ApiVersionsResponse(advertised(registry));
    }

    private static ApiVersionsResponseData advertised(ApiRegistry registry) {
        ApiVersionsResponseData.ApiVersionCollection keys = new ApiVersionsResponseData.ApiVersionCollection();
        registry.advertisedVersions().forEach(v -> keys.add(v.duplicate()));
        return new ApiVersionsResponseData().setApiKeys(keys);
    }
}
