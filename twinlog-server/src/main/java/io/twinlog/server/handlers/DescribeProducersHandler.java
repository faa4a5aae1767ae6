package io.twinlog.server.handlers;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.DescribeProducersResponse;
import org.apache.kafka.common.resource.ResourceType;

import java.util.Optional;

/**
 * DescribeProducers ({@code kafka-transactions.sh describe-producers}, {@code Admin.describeProducers}): the producers
 * a replica's log knows, with each one's open transaction if any, from that broker's own log (Kafka's
 * {@code UnifiedLog.activeProducers}), leader or follower, as Kafka answers. What finds a transaction left open, on
 * a mirror of a transactional source for one. Kafka's rules, in its order: an invalid topic name is
 * INVALID_TOPIC_EXCEPTION, no READ on the topic TOPIC_AUTHORIZATION_FAILED, a topic or partition the cluster does
 * not have UNKNOWN_TOPIC_OR_PARTITION, one this broker does not host NOT_LEADER_OR_FOLLOWER, one in a failed log dir
 * KAFKA_STORAGE_ERROR. Reads memory only.
 */
public final class DescribeProducersHandler implements RequestHandler {
    private final BrokerContext ctx;

    public DescribeProducersHandler(BrokerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void handle(Request request) {
        DescribeProducersRequest body = request.body();
        DescribeProducersResponseData response = new DescribeProducersResponseData();
        for (DescribeProducersRequestData.TopicRequest t : body.data().topics()) {
            DescribeProducersResponseData.TopicResponse tr = new DescribeProducersResponseData.TopicResponse()
                    .setName(t.name());
            Optional<ApiError> topicError = topicError(request, t.name());
            for (int p : t.partitionIndexes()) {
                tr.partitions().add(topicError.isEmpty() ? producers(new TopicPartition(t.name(), p))
                        : error(p, topicError.get().error(), topicError.get().message()));
            }
            response.topics().add(tr);
        }
        request.respond(new DescribeProducersResponse(response));
    }

    /** Kafka's checks on the topic, in its order: a valid name, READ on it, then that it exists. */
    private Optional<ApiError> topicError(Request request, String topic) {
        try {
            Topic.validate(topic);
        } catch (InvalidTopicException e) {
            return Optional.of(ApiError.fromThrowable(e));
        }
        if (!ctx.authorization().allowed(request.context(), AclOperation.READ, ResourceType.TOPIC, topic)) {
            return Optional.of(new ApiError(Errors.TOPIC_AUTHORIZATION_FAILED));
        }
        if (ctx.image().topic(topic).isEmpty()) {
            return Optional.of(new ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION));
        }
        return Optional.empty();
    }

    private DescribeProducersResponseData.PartitionResponse producers(TopicPartition tp) {
        if (ctx.image().partition(tp).isEmpty()) {
            return error(tp.partition(), Errors.UNKNOWN_TOPIC_OR_PARTITION, null);
        }
        try {
            return new DescribeProducersResponseData.PartitionResponse().setPartitionIndex(tp.partition())
                    .setActiveProducers(ctx.replicaManager().partitionOrThrow(tp).log().activeProducers());
        } catch (ApiException e) {
            return error(tp.partition(), Errors.forException(e), null); // as Kafka's replica manager answers
        }
    }

    private static DescribeProducersResponseData.PartitionResponse error(int partition, Errors error, String message) {
        return new DescribeProducersResponseData.PartitionResponse().setPartitionIndex(partition)
                .setErrorCode(error.code()).setErrorMessage(message);
    }
}
