package io.twinlog.server.handlers;

import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.groupconfig.GroupConfigStore;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.ListConfigResourcesResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ListConfigResourcesRequest;
import org.apache.kafka.common.requests.ListConfigResourcesResponse;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * ListConfigResources (KIP-1142; v0 was ListClientMetricsResources), as Kafka 4.4 answers it: the resources of each
 * type asked for (none named: every type the request's version knows): groups that have configs set, brokers with an
 * endpoint on the request's listener, every topic. Client-metrics subscriptions: none, as Twinlog has no client
 * metrics (KIP-714). Broker loggers are not listed, as Twinlog does not describe or alter them. A type the version
 * does not know answers UNSUPPORTED_VERSION. Authorized (DESCRIBE_CONFIGS on the cluster) by the registry's wrapper.
 */
public final class ListConfigResourcesHandler implements RequestHandler {
    private final BrokerContext ctx;
    private final GroupConfigStore groupConfigs;

    public ListConfigResourcesHandler(BrokerContext ctx, GroupConfigStore groupConfigs) {
        this.ctx = ctx;
        this.groupConfigs = groupConfigs;
    }

    @Override
    public void handle(Request request) {
        ListConfigResourcesRequest body = request.body();
        Set<Byte> supported = body.supportedResourceTypes();
        List<Byte> asked = body.data().resourceTypes().isEmpty() ? List.copyOf(supported)
                : body.data().resourceTypes();
        ListConfigResourcesResponseData response = new ListConfigResourcesResponseData();
        if (!supported.containsAll(asked)) {
            request.respond(new ListConfigResourcesResponse(response.setErrorCode(Errors.UNSUPPORTED_VERSION.code())));
            return;
        }
        MetadataImage image = ctx.image();
        if (asked.contains(ConfigResource.Type.GROUP.id())) {
            groupConfigs.groups().forEach(g -> add(response, ConfigResource.Type.GROUP, g));
        }
        if (asked.contains(ConfigResource.Type.BROKER.id())) {
            String listener = request.context().listenerName.value();
            for (BrokerRegistration broker : image.brokers().values()) {
                if (broker.endpoint(listener).isPresent()) {
                    add(response, ConfigResource.Type.BROKER, Integer.toString(broker.id()));
                }
            }
        }
        if (asked.contains(ConfigResource.Type.TOPIC.id())) {
            new TreeSet<>(image.topics().keySet()).forEach(t -> add(response, ConfigResource.Type.TOPIC, t));
        }
        request.respond(new ListConfigResourcesResponse(response));
    }

    private static void add(ListConfigResourcesResponseData response, ConfigResource.Type type, String name) {
        response.configResources().add(new ListConfigResourcesResponseData.ConfigResource()
                .setResourceType(type.id()).setResourceName(name));
    }
}
