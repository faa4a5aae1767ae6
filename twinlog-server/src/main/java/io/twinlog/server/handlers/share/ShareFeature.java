package io.twinlog.server.handlers.share;

import io.twinlog.controller.metadata.FeatureLevels;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.protocol.ApiKeys;

import java.util.Set;
import java.util.function.Supplier;

/**
 * The share-group switch (decision 102): the finalized {@code share.version}, 1 by default (decision 106). Below 1
 * the share-group APIs are neither advertised in ApiVersions nor served (a request is answered as an API this broker
 * does not have, the dispatcher's UNSUPPORTED_VERSION), so a cluster an operator set to 0 looks to clients as one
 * without share groups; at 1 or more they are advertised with Kafka 4.4's ranges (ShareFetch and ShareAcknowledge
 * v1 only). The level is read at every request, so writing
 * {@code /feature} turns them on and off without a restart.
 */
public final class ShareFeature {
    /** Every API Kafka 4.4 defines for share groups (KIP-932). */
    public static final Set<ApiKeys> APIS = Set.of(ApiKeys.SHARE_GROUP_HEARTBEAT, ApiKeys.SHARE_GROUP_DESCRIBE,
            ApiKeys.SHARE_FETCH, ApiKeys.SHARE_ACKNOWLEDGE, ApiKeys.DESCRIBE_SHARE_GROUP_OFFSETS,
            ApiKeys.ALTER_SHARE_GROUP_OFFSETS, ApiKeys.DELETE_SHARE_GROUP_OFFSETS,
            ApiKeys.INITIALIZE_SHARE_GROUP_STATE, ApiKeys.READ_SHARE_GROUP_STATE, ApiKeys.WRITE_SHARE_GROUP_STATE,
            ApiKeys.DELETE_SHARE_GROUP_STATE, ApiKeys.READ_SHARE_GROUP_STATE_SUMMARY);

    private ShareFeature() {
    }

    /** Whether ApiVersions lists {@code api} at these levels. */
    public static boolean advertised(short apiKey, FeatureLevels features) {
        return features.shareGroupsEnabled() || !ApiKeys.hasId(apiKey) || !APIS.contains(ApiKeys.forId(apiKey));
    }

    /** {@code handler} while share groups are on; otherwise the answer to an API this broker does not serve. */
    public static RequestHandler gate(Supplier<MetadataImage> image, RequestHandler handler) {
        return request -> {
            if (image.get().features().shareGroupsEnabled()) {
                handler.handle(request);
            } else {
                request.respond(request.errorResponse(new UnsupportedVersionException("Twinlog does not serve "
                        + request.apiKey() + " while share.version is 0")));
            }
        };
    }
}
