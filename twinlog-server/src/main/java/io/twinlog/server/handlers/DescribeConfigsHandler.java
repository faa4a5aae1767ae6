package io.twinlog.server.handlers;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.dynamic.DynamicBrokerConfigs;
import io.twinlog.server.groupconfig.GroupConfigDescription;
import io.twinlog.server.groupconfig.GroupConfigStore;
import io.twinlog.server.metadata.BrokerConfigs;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * DescribeConfigs for topics (every topic config with its effective value and source) and brokers (every key of
 * Kafka's broker definition with its effective value and source, dynamic configs included, see
 * {@link BrokerConfigs}) and groups (every group config with its effective value and source, see
 * {@link GroupConfigDescription}). The empty broker name asks for the cluster-wide dynamic defaults. Other resource
 * types get INVALID_REQUEST.
 */
public final class DescribeConfigsHandler implements RequestHandler {
    private final BrokerContext ctx;
    private final DynamicBrokerConfigs dynamicConfigs;
    private final GroupConfigStore groupConfigs;
    /** Built again only when the dynamic configs changed (~350 entries each time). */
    private volatile BrokerConfigs brokerConfigs;
    private volatile DynamicBrokerConfigs.Layers builtFrom;

    public DescribeConfigsHandler(BrokerContext ctx, DynamicBrokerConfigs dynamicConfigs,
                                  GroupConfigStore groupConfigs) {
        this.ctx = ctx;
        this.dynamicConfigs = dynamicConfigs;
        this.groupConfigs = groupConfigs;
    }

    private BrokerConfigs brokerConfigs() {
        DynamicBrokerConfigs.Layers layers = dynamicConfigs.layers();
        BrokerConfigs built = brokerConfigs;
        if (built == null || builtFrom != layers) {
            built = new BrokerConfigs(dynamicConfigs.staticConfig(), layers);
            brokerConfigs = built;
            builtFrom = layers;
        }
        return built;
    }

    @Override
    public void handle(Request request) {
        DescribeConfigsRequest body = request.body();
        DescribeConfigsRequestData data = body.data();
        DescribeConfigsResponseData response = new DescribeConfigsResponseData();
        for (DescribeConfigsRequestData.DescribeConfigsResource res : data.resources()) {
            DescribeConfigsResponseData.DescribeConfigsResult r = new DescribeConfigsResponseData.DescribeConfigsResult()
                    .setResourceType(res.resourceType()).setResourceName(res.resourceName());
            ConfigResource.Type type = ConfigResource.Type.forId(res.resourceType());
            Optional<Errors> denied = ctx.authorization().configsDenied(request.context(),
                    AclOperation.DESCRIBE_CONFIGS, type, res.resourceName());
            if (denied.isPresent()) {
                r.setErrorCode(denied.get().code()).setErrorMessage(denied.get().message());
            } else if (type == ConfigResource.Type.TOPIC) {
                if (ctx.image().topic(res.resourceName()).isEmpty()) {
                    r.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                            .setErrorMessage("Topic '" + res.resourceName() + "' does not exist.");
                } else {
                    Map<String, String> overrides = ctx.image().topicConfig(res.resourceName());
                    r.setConfigs(ctx.topicConfigs().describe(overrides, res.configurationKeys(),
                            data.includeSynonyms(), data.includeDocumentation()));
                }
            } else if (type == ConfigResource.Type.BROKER) {
                if (res.resourceName().isEmpty()) {
                    r.setConfigs(brokerConfigs().describeClusterDefaults(res.configurationKeys(),
                            data.includeSynonyms(), data.includeDocumentation()));
                } else if (!res.resourceName().equals(Integer.toString(ctx.brokerId()))) {
                    // Kafka's answer: another broker's configs are described by that broker
                    r.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Unexpected broker id, expected "
                            + ctx.brokerId() + " or empty string, but received " + res.resourceName());
                } else {
                    r.setConfigs(brokerConfigs().describe(res.configurationKeys(), data.includeSynonyms(),
                            data.includeDocumentation()));
                }
            } else if (type == ConfigResource.Type.GROUP) {
                if (res.resourceName().isEmpty()) {
                    r.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Group name must not be empty");
                } else {
                    // a group's keys fall back to the broker's group.* keys: their synonyms are the broker's
                    BrokerConfigs broker = brokerConfigs();
                    r.setConfigs(GroupConfigDescription.describe(res, groupConfigs.policy(),
                            groupConfigs.configs(res.resourceName()), data.includeSynonyms(),
                            data.includeDocumentation(), key -> broker.describe(List.of(key), true, false).stream()
                                    .findFirst().map(e -> e.synonyms()).orElse(List.of())).configs());
                }
            } else {
                r.setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage("Twinlog does not describe configs of resource type " + type);
            }
            response.results().add(r);
        }
        request.respond(new DescribeConfigsResponse(response));
    }
}
