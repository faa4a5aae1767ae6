package io.twinlog.server.handlers;

import io.twinlog.controller.metadata.FeatureLevels;
import io.twinlog.protocol.ApiRegistry;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.handlers.share.ShareFeature;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.ApiVersionsResponseData.FinalizedFeatureKey;
import org.apache.kafka.common.message.ApiVersionsResponseData.FinalizedFeatureKeyCollection;
import org.apache.kafka.common.message.ApiVersionsResponseData.SupportedFeatureKey;
import org.apache.kafka.common.message.ApiVersionsResponseData.SupportedFeatureKeyCollection;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;

import java.util.function.Supplier;

/**
 * ApiVersions: advertises exactly the APIs and versions registered, so clients adapt to what Twinlog serves, and
 * (v3+) the features this build supports with the cluster's finalized levels, which decide for instance which
 * transaction protocol a 4.4 producer speaks (transaction.version). The share-group APIs are listed only while
 * share.version is 1 or more ({@link ShareFeature}).
 */
public final class ApiVersionsHandler implements RequestHandler {
    private final Supplier<ApiRegistry> registry;
    private final Supplier<FeatureLevels> features;

    public ApiVersionsHandler(Supplier<ApiRegistry> registry, Supplier<FeatureLevels> features) {
        this.registry = registry;
        this.features = features;
    }

    @Override
    public void handle(Request request) {
        ApiVersionsRequest body = request.body();
        ApiVersionsResponseData data = advertised(registry.get(), features.get());
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
    public static ApiVersionsResponse beforeAuthentication(ApiRegistry registry, FeatureLevels features) {
        return new ApiVersionsResponse(advertised(registry, features));
    }

    private static ApiVersionsResponseData advertised(ApiRegistry registry, FeatureLevels features) {
        ApiVersionsResponseData.ApiVersionCollection keys = new ApiVersionsResponseData.ApiVersionCollection();
        registry.advertisedVersions().stream().filter(v -> ShareFeature.advertised(v.apiKey(), features))
                .forEach(v -> keys.add(v.duplicate()));
        SupportedFeatureKeyCollection supported = new SupportedFeatureKeyCollection();
        FeatureLevels.SUPPORTED.forEach((name, range) -> supported.add(new SupportedFeatureKey().setName(name)
                .setMinVersion(range.min()).setMaxVersion(range.max())));
        FinalizedFeatureKeyCollection finalized = new FinalizedFeatureKeyCollection();
        features.finalized().forEach((name, level) -> finalized.add(new FinalizedFeatureKey().setName(name)
                .setMinVersionLevel(level).setMaxVersionLevel(level)));
        // written only from v3 on by the serializer (tagged fields), as Kafka's broker answers older clients
        return new ApiVersionsResponseData().setApiKeys(keys).setSupportedFeatures(supported)
                .setFinalizedFeatures(finalized).setFinalizedFeaturesEpoch(features.epoch());
    }
}
