package io.twinlog.server.handlers;

import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.dynamic.DynamicBrokerConfigs;
import io.twinlog.server.groupconfig.GroupConfigStore;
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
import org.apache.kafka.server.config.DynamicConfig;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.UnaryOperator;

/**
 * IncrementalAlterConfigs (SET, DELETE, APPEND, SUBTRACT) and the legacy AlterConfigs (replace all overrides) for
 * topic configs, dynamic broker configs ({@link DynamicBrokerConfigs}) and group configs ({@link GroupConfigStore}). The complete resulting set is validated with Kafka's rules before anything is written; validateOnly
 * stops there. An incremental change is applied to the overrides ZooKeeper holds and written compare-and-set on the
 * node's version, applied again to the new overrides if another alter (from any broker) wrote first. Changes apply
 * to the logs on every broker through the metadata image.
 */
public final class AlterConfigsHandler {
    private static final Logger log = LoggerFactory.getLogger(AlterConfigsHandler.class);
    private final BrokerContext ctx;
    private final DynamicBrokerConfigs brokerConfigs;
    private final GroupConfigStore groupConfigs;

    public AlterConfigsHandler(BrokerContext ctx, DynamicBrokerConfigs brokerConfigs, GroupConfigStore groupConfigs) {
        this.ctx = ctx;
        this.brokerConfigs = brokerConfigs;
        this.groupConfigs = groupConfigs;
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
                            .setResourceType(res.resourceType()).setResourceName(res.resourceName())
                            .setErrorMessage(null); // Kafka's answer to a success: no message
            Optional<Errors> denied = ctx.authorization().configsDenied(request.context(), AclOperation.ALTER_CONFIGS,
                    ConfigResource.Type.forId(res.resourceType()), res.resourceName());
            if (denied.isPresent()) {
                response.responses().add(r.setErrorCode(denied.get().code()).setErrorMessage(denied.get().message()));
                continue;
            }
            try {
                if (ConfigResource.Type.forId(res.resourceType()) == ConfigResource.Type.BROKER) {
                    List<IncrementalAlterConfigsRequestData.AlterableConfig> ops = List.copyOf(res.configs());
                    checkOps(ops);
                    brokerConfigs.alter(brokerEntity(res.resourceName()), current -> {
                        Map<String, String> next = new LinkedHashMap<>(current);
                        ops.forEach(op -> applyBrokerOp(next, op));
                        return next;
                    }, data.validateOnly());
                    response.responses().add(r);
                    continue;
                }
                if (ConfigResource.Type.forId(res.resourceType()) == ConfigResource.Type.GROUP) {
                    List<IncrementalAlterConfigsRequestData.AlterableConfig> ops = List.copyOf(res.configs());
                    checkOps(ops);
                    groupConfigs.alter(res.resourceName(), current -> {
                        Map<String, String> next = new LinkedHashMap<>(current);
                        ops.forEach(op -> applyGroupOp(next, op));
                        return next;
                    }, data.validateOnly());
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
                // broad: a failure of any kind is this resource's error answer, the others go on
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
                    .setResourceType(res.resourceType()).setResourceName(res.resourceName())
                    .setErrorMessage(null); // Kafka's answer to a success: no message
            Optional<Errors> denied = ctx.authorization().configsDenied(request.context(), AclOperation.ALTER_CONFIGS,
                    ConfigResource.Type.forId(res.resourceType()), res.resourceName());
            if (denied.isPresent()) {
                response.responses().add(r.setErrorCode(denied.get().code()).setErrorMessage(denied.get().message()));
                continue;
            }
            try {
                if (ConfigResource.Type.forId(res.resourceType()) == ConfigResource.Type.BROKER) {
                    // the legacy API replaces the whole set
                    Map<String, String> replacement = new LinkedHashMap<>();
                    res.configs().forEach(c -> replacement.put(c.name(), c.value()));
                    if (replacement.containsValue(null)) {
                        throw new InvalidRequestException("Null value not supported for : " + nullValued(replacement));
                    }
                    brokerConfigs.alter(brokerEntity(res.resourceName()), current -> replacement,
                            data.validateOnly());
                    response.responses().add(r);
                    continue;
                }
                if (ConfigResource.Type.forId(res.resourceType()) == ConfigResource.Type.GROUP) {
                    // the legacy API replaces the whole set (a null value is refused by the group config rules)
                    Map<String, String> replacement = new LinkedHashMap<>();
                    res.configs().forEach(c -> replacement.put(c.name(), c.value()));
                    groupConfigs.alter(res.resourceName(), current -> replacement, data.validateOnly());
                    response.responses().add(r);
                    continue;
                }
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
                // broad: a failure of any kind is this resource's error answer, the others go on
                log.error("Could not alter configs of {}", res.resourceName(), e);
                r.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
            }
            response.responses().add(r);
        }
        request.respond(new AlterConfigsResponse(response));
    }

    /**
     * The broker entity a BROKER resource names, with Kafka's answers: {@code ""} is the cluster default, this
     * broker's id its own configs; another broker's configs are changed through that broker (the admin client sends
     * them there).
     */
    private String brokerEntity(String name) {
        if (name.isEmpty()) {
            return ZkPaths.DEFAULT_ENTITY;
        }
        int id;
        try {
            id = Integer.parseInt(name);
        } catch (NumberFormatException e) {
            throw new InvalidRequestException("Node id must be an integer, but it is: " + name);
        }
        if (id != ctx.brokerId()) {
            throw new InvalidRequestException("Unexpected broker id, expected " + ctx.brokerId() + ", but received "
                    + name);
        }
        return name;
    }

    /** Kafka's checks of the operations themselves, before any value: duplicate keys, SET without a value. */
    private static void checkOps(List<IncrementalAlterConfigsRequestData.AlterableConfig> ops) {
        Set<String> seen = new HashSet<>();
        List<String> nulls = new ArrayList<>();
        for (IncrementalAlterConfigsRequestData.AlterableConfig op : ops) {
            if (!seen.add(op.name())) {
                throw new InvalidRequestException("Error due to duplicate config keys");
            }
            if (op.value() == null && op.configOperation() != AlterConfigOp.OpType.DELETE.id()) {
                nulls.add(op.name());
            }
        }
        if (!nulls.isEmpty()) {
            throw new InvalidRequestException("Null value not supported for : " + String.join(", ", nulls));
        }
    }

    private static String nullValued(Map<String, String> configs) {
        List<String> out = new ArrayList<>();
        configs.forEach((k, v) -> {
            if (v == null) {
                out.add(k);
            }
        });
        return String.join(", ", out);
    }

    /** A broker config operation; only list-typed keys take APPEND and SUBTRACT (Kafka's INVALID_CONFIG). */
    private static void applyBrokerOp(Map<String, String> configs,
                                      IncrementalAlterConfigsRequestData.AlterableConfig c) {
        applyDynamicOp(configs, c, (values, op) -> {
            ConfigDef.ConfigKey key = DynamicConfig.Broker.configKeys().get(op.name());
            if (key == null || key.type != ConfigDef.Type.LIST) {
                throw new InvalidConfigurationException("Config value " + (op.configOperation()
                        == AlterConfigOp.OpType.APPEND.id() ? "append" : "subtract")
                        + " is not allowed for config key: " + op.name());
            }
            List<String> list = new ArrayList<>();
            for (String s : values.getOrDefault(op.name(), "").split(",")) {
                if (!s.isBlank()) {
                    list.add(s.trim());
                }
            }
            for (String v : op.value().split(",")) {
                if (op.configOperation() == AlterConfigOp.OpType.APPEND.id() && !list.contains(v.trim())) {
                    list.add(v.trim());
                } else if (op.configOperation() == AlterConfigOp.OpType.SUBTRACT.id()) {
                    list.remove(v.trim());
                }
            }
            values.put(op.name(), String.join(",", list));
        });
    }

    /**
     * A group config operation. APPEND and SUBTRACT are refused for every group key, with Kafka 4.4's answer: its
     * controller knows no types for group keys, so none is a list (not even {@code streams.rack.aware.assignment.tags}).
     */
    private static void applyGroupOp(Map<String, String> configs,
                                     IncrementalAlterConfigsRequestData.AlterableConfig c) {
        applyDynamicOp(configs, c, (values, op) -> {
            throw new InvalidConfigurationException("Can't " + AlterConfigOp.OpType.forId(op.configOperation())
                    + " to key " + op.name() + " because its type is not LIST.");
        });
    }

    /** SET and DELETE of a broker or group config; APPEND and SUBTRACT by {@code listOp}. */
    private static void applyDynamicOp(Map<String, String> configs,
                                       IncrementalAlterConfigsRequestData.AlterableConfig c,
                                       BiConsumer<Map<String, String>, IncrementalAlterConfigsRequestData.AlterableConfig>
                                               listOp) {
        if (c.configOperation() == AlterConfigOp.OpType.SET.id()) {
            configs.put(c.name(), c.value());
        } else if (c.configOperation() == AlterConfigOp.OpType.DELETE.id()) {
            configs.remove(c.name());
        } else if (c.configOperation() == AlterConfigOp.OpType.APPEND.id()
                || c.configOperation() == AlterConfigOp.OpType.SUBTRACT.id()) {
            listOp.accept(configs, c);
        } else {
            throw new InvalidRequestException("Unknown config operation " + c.configOperation());
        }
    }

    private String topicResource(byte resourceType, String name) {
        ConfigResource.Type type = ConfigResource.Type.forId(resourceType);
        if (type != ConfigResource.Type.TOPIC) {
            throw new InvalidRequestException("Twinlog alters topic, broker and group configs only; " + type
                    + " configs cannot be altered");
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
