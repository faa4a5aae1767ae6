package io.twinlog.server.handlers;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.AlterConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.AlterConfigsResponse;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * IncrementalAlterConfigs (SET, DELETE, APPEND, SUBTRACT) and the legacy AlterConfigs (replace all overrides) for
 * topic configs. The complete resulting set is validated with Kafka's rules before anything is written; validateOnly
 * stops there. An incremental change is applied to the overrides ZooKeeper holds and written compare-and-set on the
 * node's version, applied again to the new overrides if another alter (from any broker) wrote first. Changes apply
 * to the logs on every broker through the metadata image.
 */
public final class AlterConfigsHandler {
    private static final Logger log = LoggerFactory.getLogger(AlterConfigsHandler.class);
    private final BrokerContext ctx;

    public AlterConfigsHandler(BrokerContext ctx) {
        this.ctx = ctx;
    }

    public RequestHandler incremental() {
        return this::handleIncremental;
    }

    public RequestHandler legacy() {
        return this::handleLegacy;
    }

    private void handleIncremental(Request request) {
        IncrementalAlterConfigsRequest body = request.body();
        IncrementalAlterConfigsRequestData data = body.data();
        IncrementalAlterConfigsResponseData response = new IncrementalAlterConfigsResponseData();
        for (IncrementalAlterConfigsRequestData.AlterConfigsResource res : data.resources()) {
            IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse r =
                    new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
                            .setResourceType(res.resourceType()).setResourceName(res.resourceName());
            Optional<Errors> denied = ctx.authorization().configsDenied(request.context(), AclOperation.ALTER_CONFIGS,
                    ConfigResource.Type.forId(res.resourceType()), res.resourceName());
            if (denied.isPresent()) {
                response.responses().add(r.setErrorCode(denied.get().code()).setErrorMessage(denied.get().message()));
                continue;
            }
            try {
                if (deletesOnlyOnABroker(res)) {
                    // no dynamic broker config can be set here, so there is none to delete: done, as Kafka answers
                    // a delete of a config that is not set (kafka-reassign-partitions --verify clears the
                    // replication throttles of every broker this way)
                    response.responses().add(r);
                    continue;
                }
                String topic = topicResource(res.resourceType(), res.resourceName());
                UnaryOperator<Map<String, String>> change = current -> {
                    Map<String, String> overrides = new LinkedHashMap<>(current);
                    for (IncrementalAlterConfigsRequestData.AlterableConfig c : res.configs()) {
                        applyOp(overrides, c);
                    }
                    return overrides;
                };
                if (data.validateOnly()) {
                    ctx.topicConfigs().validate(change.apply(ctx.topicAdmin().currentOverrides(topic)));
                } else {
                    // applied to what ZooKeeper holds, again if another alter wrote first: no update is lost
                    ctx.topicAdmin().alterConfigs(topic, change);
                }
            } catch (ApiException e) {
                r.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
            } catch (Exception e) {
                log.error("Could not alter configs of {}", res.resourceName(), e);
                r.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
            }
            response.responses().add(r);
        }
        request.respond(new IncrementalAlterConfigsResponse(response));
    }

    private void handleLegacy(Request request) {
        AlterConfigsRequest body = request.body();
        AlterConfigsRequestData data = body.data();
        AlterConfigsResponseData response = new AlterConfigsResponseData();
        for (AlterConfigsRequestData.AlterConfigsResource res : data.resources()) {
            AlterConfigsResponseData.AlterConfigsResourceResponse r = new AlterConfigsResponseData.AlterConfigsResourceResponse()
                    .setResourceType(res.resourceType()).setResourceName(res.resourceName());
            Optional<Errors> denied = ctx.authorization().configsDenied(request.context(), AclOperation.ALTER_CONFIGS,
                    ConfigResource.Type.forId(res.resourceType()), res.resourceName());
            if (denied.isPresent()) {
                response.responses().add(r.setErrorCode(denied.get().code()).setErrorMessage(denied.get().message()));
                continue;
            }
            try {
                String topic = topicResource(res.resourceType(), res.resourceName());
                Map<String, String> overrides = new LinkedHashMap<>();
                res.configs().forEach(c -> overrides.put(c.name(), c.value()));
                ctx.topicConfigs().validate(overrides);
                if (!data.validateOnly()) {
                    ctx.topicAdmin().setConfigs(topic, overrides);
                }
            } catch (ApiException e) {
                r.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
            } catch (Exception e) {
                log.error("Could not alter configs of {}", res.resourceName(), e);
                r.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
            }
            response.responses().add(r);
        }
        request.respond(new AlterConfigsResponse(response));
    }

    private static boolean deletesOnlyOnABroker(IncrementalAlterConfigsRequestData.AlterConfigsResource res) {
        return ConfigResource.Type.forId(res.resourceType()) == ConfigResource.Type.BROKER
                && (res.resourceName().isEmpty() || res.resourceName().chars().allMatch(Character::isDigit))
                && res.configs().stream().allMatch(c -> c.configOperation() == AlterConfigOp.OpType.DELETE.id());
    }

    private String topicResource(byte resourceType, String name) {
        ConfigResource.Type type = ConfigResource.Type.forId(resourceType);
        if (type != ConfigResource.Type.TOPIC) {
            throw new InvalidRequestException("Twinlog alters topic configs only; " + type
                    + " configs are static (set them in server.properties)");
        }
        if (ctx.image().topic(name).isEmpty()) {
            throw new UnknownTopicOrPartitionException("Topic '" + name + "' does not exist.");
        }
        return name;
    }

    private static void applyOp(Map<String, String> overrides, IncrementalAlterConfigsRequestData.AlterableConfig c) {
        switch (c.configOperation()) {
            case 0 -> { // SET
                if (c.value() == null) {
                    throw new InvalidConfigurationException("Null value not supported for : " + c.name());
                }
                overrides.put(c.name(), c.value());
            }
            case 1 -> overrides.remove(c.name()); // DELETE
            case 2, 3 -> { // APPEND, SUBTRACT: list-typed configs only
                ConfigDef.ConfigKey key = LogConfig.configKeys().get(c.name());
                if (key == null) {
                    throw new InvalidConfigurationException("Unknown topic config name: " + c.name());
                }
                if (key.type != ConfigDef.Type.LIST) {
                    throw new InvalidConfigurationException("Config value append is not allowed for config key: "
                            + c.name());
                }
                List<String> current = new ArrayList<>();
                String existing = overrides.containsKey(c.name()) ? overrides.get(c.name())
                        : key.hasDefault() && key.defaultValue != null ? ConfigDef.convertToString(key.defaultValue, key.type) : "";
                for (String s : existing.split(",")) {
                    if (!s.isBlank()) {
                        current.add(s.trim());
                    }
                }
                List<String> values = c.value() == null ? List.of() : Arrays.asList(c.value().split(","));
                for (String v : values) {
                    String t = v.trim();
                    if (c.configOperation() == 2 && !current.contains(t)) {
                        current.add(t);
                    } else if (c.configOperation() == 3) {
                        current.remove(t);
                    }
                }
                overrides.put(c.name(), String.join(",", current));
            }
            default -> throw new InvalidRequestException("Unknown config operation " + c.configOperation());
        }
    }
}
