package io.twinlog.server.handlers;

import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsResponse;
import org.apache.kafka.common.resource.ResourceType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** DeleteTopics by name or (v6+) by topic ID; logs are removed from every broker hosting them. */
public final class DeleteTopicsHandler implements RequestHandler {
    private static final Logger log = LoggerFactory.getLogger(DeleteTopicsHandler.class);
    private final BrokerContext ctx;

    public DeleteTopicsHandler(BrokerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void handle(Request request) {
        DeleteTopicsRequest body = request.body();
        DeleteTopicsRequestData data = body.data();
        List<DeleteTopicsRequestData.DeleteTopicState> targets = new ArrayList<>(data.topics());
        for (String name : data.topicNames()) {
            targets.add(new DeleteTopicsRequestData.DeleteTopicState().setName(name).setTopicId(Uuid.ZERO_UUID));
        }
        DeleteTopicsResponseData response = new DeleteTopicsResponseData();
        // Kafka's rule: DELETE on the cluster, or on each topic; a topic the principal may not describe is not
        // revealed (by ID it is answered without its name)
        boolean clusterDelete = ctx.authorization().allowedOnClusterQuietly(request.context(), AclOperation.DELETE);
        for (DeleteTopicsRequestData.DeleteTopicState t : targets) {
            DeleteTopicsResponseData.DeletableTopicResult r = new DeleteTopicsResponseData.DeletableTopicResult()
                    .setName(t.name()).setTopicId(t.topicId() == null ? Uuid.ZERO_UUID : t.topicId());
            boolean byId = t.name() == null && t.topicId() != null && !Uuid.ZERO_UUID.equals(t.topicId());
            Optional<TopicImage> topic = byId ? ctx.image().topic(t.topicId()) : ctx.image().topic(t.name());
            String name = topic.map(TopicImage::name).orElse(t.name());
            boolean describable = clusterDelete || (name != null && ctx.authorization().allowed(request.context(),
                    AclOperation.DESCRIBE, ResourceType.TOPIC, name));
            if (!describable && (!byId || topic.isPresent())) {
                response.responses().add(r.setName(byId ? null : t.name())
                        .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
                continue;
            }
            if (topic.isEmpty()) {
                r.setErrorCode((byId ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION).code())
                        .setErrorMessage(byId ? "Topic ID " + t.topicId() + " not found" : "Topic '" + t.name() + "' does not exist.");
                response.responses().add(r);
                continue;
            }
            r.setName(topic.get().name()).setTopicId(topic.get().topicId());
            if (!clusterDelete && !ctx.authorization().allowed(request.context(), AclOperation.DELETE,
                    ResourceType.TOPIC, name)) {
                response.responses().add(r.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
                continue;
            }
            try {
                ctx.topicAdmin().delete(topic.get().name());
            } catch (ApiException e) {
                r.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
            } catch (Exception e) {
                // broad: a failure of any kind is this topic's error answer, the others go on
                log.error("Could not delete topic {}", topic.get().name(), e);
                r.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
            }
            response.responses().add(r);
        }
        request.respond(new DeleteTopicsResponse(response));
    }
}
