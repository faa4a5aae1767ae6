package io.twinlog.server.handlers;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreatePartitionsResponse;
import org.apache.kafka.common.resource.ResourceType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** CreatePartitions: raises a topic's partition count, with an automatic or manual assignment; validateOnly. */
public final class CreatePartitionsHandler implements RequestHandler {
    private static final Logger log = LoggerFactory.getLogger(CreatePartitionsHandler.class);
    private final BrokerContext ctx;

    public CreatePartitionsHandler(BrokerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void handle(Request request) {
        CreatePartitionsRequest body = request.body();
        CreatePartitionsResponseData response = new CreatePartitionsResponseData();
        for (CreatePartitionsRequestData.CreatePartitionsTopic t : body.data().topics()) {
            CreatePartitionsResponseData.CreatePartitionsTopicResult r =
                    new CreatePartitionsResponseData.CreatePartitionsTopicResult().setName(t.name());
            // Kafka's rule: ALTER on the topic
            if (!ctx.authorization().allowed(request.context(), AclOperation.ALTER, ResourceType.TOPIC, t.name())) {
                response.results().add(r.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                        .setErrorMessage("Not authorized to alter topic " + t.name()));
                continue;
            }
            try {
                List<List<Integer>> manual = null;
                if (t.assignments() != null) {
                    manual = new ArrayList<>();
                    for (CreatePartitionsRequestData.CreatePartitionsAssignment a : t.assignments()) {
                        manual.add(new ArrayList<>(a.brokerIds()));
                    }
                }
                Map<Integer, List<Integer>> plan = ctx.topicAdmin().planPartitions(t.name(), t.count(), manual);
                if (!body.data().validateOnly()) {
                    ctx.topicAdmin().addPartitions(t.name(), plan);
                }
            } catch (ApiException e) {
                r.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
            } catch (Exception e) {
                // broad: a failure of any kind is this topic's error answer, the others go on
                log.error("Could not add partitions to {}", t.name(), e);
                r.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
            }
            response.results().add(r);
        }
        request.respond(new CreatePartitionsResponse(response));
    }
}
