package io.twinlog.server.handlers;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.metadata.TopicAdmin;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.resource.ResourceType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * CreateTopics, including validateOnly and manual assignments; each topic succeeds or fails on its own with
 * Kafka's error code and message. The response carries the topic ID, partition count, replication factor and
 * effective configs (v5+).
 */
public final class CreateTopicsHandler implements RequestHandler {
    private static final Logger log = LoggerFactory.getLogger(CreateTopicsHandler.class);
    private final BrokerContext ctx;

    public CreateTopicsHandler(BrokerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void handle(Request request) {
        CreateTopicsRequest body = request.body();
        CreateTopicsRequestData data = body.data();
        CreateTopicsResponseData response = new CreateTopicsResponseData();
        Set<String> seen = new HashSet<>();
        Set<String> duplicates = new HashSet<>();
        for (CreateTopicsRequestData.CreatableTopic t : data.topics()) {
            if (!seen.add(t.name())) {
                duplicates.add(t.name());
            }
        }
        // Kafka's rule: CREATE on the cluster, or on each topic; the effective configs only with DESCRIBE_CONFIGS
        boolean clusterCreate = ctx.authorization().allowedOnClusterQuietly(request.context(), AclOperation.CREATE);
        for (CreateTopicsRequestData.CreatableTopic t : data.topics()) {
            CreateTopicsResponseData.CreatableTopicResult result = new CreateTopicsResponseData.CreatableTopicResult()
                    .setName(t.name()).setNumPartitions(-1).setReplicationFactor((short) -1);
            if (duplicates.contains(t.name())) {
                result.setErrorCode(Errors.INVALID_REQUEST.code())
                        .setErrorMessage("Create topics request from client `" + request.clientId()
                                + "` contains multiple entries for the following topics: " + t.name());
                response.topics().add(result);
                continue;
            }
            if (!clusterCreate && !ctx.authorization().allowed(request.context(), AclOperation.CREATE,
                    ResourceType.TOPIC, t.name())) {
                response.topics().add(result.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                        .setErrorMessage("Authorization failed."));
                continue;
            }
            try {
                Map<String, String> configs = new LinkedHashMap<>();
                t.configs().forEach(c -> configs.put(c.name(), c.value()));
                Map<Integer, List<Integer>> manual = new TreeMap<>();
                t.assignments().forEach(a -> manual.put(a.partitionIndex(), new ArrayList<>(a.brokerIds())));
                TopicAdmin.TopicPlan plan = ctx.topicAdmin().plan(t.name(), t.numPartitions(), t.replicationFactor(),
                        manual, configs, ctx.config().numPartitions(), ctx.config().defaultReplicationFactor());
                if (!data.validateOnly()) {
                    MetadataImage image = ctx.topicAdmin().create(plan);
                    image.topic(t.name()).ifPresent(ti -> result.setTopicId(ti.topicId()));
                }
                result.setNumPartitions(plan.assignment().size())
                        .setReplicationFactor((short) plan.replicationFactor());
                if (request.apiVersion() >= 5 && !ctx.authorization().allowed(request.context(),
                        AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, t.name(), false)) {
                    result.setTopicConfigErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code());
                } else if (request.apiVersion() >= 5) {
                    for (DescribeConfigsResponseData.DescribeConfigsResourceResult c
                            : ctx.topicConfigs().describe(configs, null, false, false)) {
                        result.configs().add(new CreateTopicsResponseData.CreatableTopicConfigs()
                                .setName(c.name()).setValue(c.value()).setReadOnly(c.readOnly())
                                .setConfigSource(c.configSource()).setIsSensitive(c.isSensitive()));
                    }
                }
            } catch (ApiException e) {
                result.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
            } catch (Exception e) {
                // broad: a failure of any kind is this topic's error answer, the others go on
                log.error("Could not create topic {}", t.name(), e);
                result.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
            }
            response.topics().add(result);
        }
        request.respond(new CreateTopicsResponse(response));
    }
}
