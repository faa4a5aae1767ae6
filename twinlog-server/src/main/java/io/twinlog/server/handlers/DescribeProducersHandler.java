package io.twinlog.server.handlers;

import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeProducersRequest;
import org.apache.kafka.common.requests.DescribeProducersResponse;
import org.apache.kafka.common.resource.ResourceType;

/**
 * DescribeProducers ({@code kafka-transactions.sh describe-producers}, {@code Admin.describeProducers}): the producers
 * a replica's log knows, with each one's open transaction if any, from that broker's own log (Kafka's
 * {@code UnifiedLog.activeProducers}), leader or follower, as Kafka answers. What finds a transaction left open, on
 * a mirror of a transactional source for one. Kafka's rules: READ on the topic, else TOPIC_AUTHORIZATION_FAILED;
 * a partition the cluster does not have is UNKNOWN_TOPIC_OR_PARTITION, one this broker does not host
 * NOT_LEADER_OR_FOLLOWER, one in a failed log dir KAFKA_STORAGE_ERROR. Reads memory only.
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
            boolean allowed = ctx.authorization().allowed(request.context(), AclOperation.READ, ResourceType.TOPIC,
                    t.name());
            for (int p : t.partitionIndexes()) {
                tr.partitions().add(allowed ? producers(new TopicPartition(t.name(), p))
                        : error(p, Errors.TOPIC_AUTHORIZATION_FAILED, null));
            }
            response.topics().add(tr);
        }
        request.respond(new DescribeProducersResponse(response));
    }

    private DescribeProducersResponseData.PartitionResponse producers(TopicPartition tp) {
        if (ctx.image().partition(tp).isEmpty()) {
            return error(tp.partition(), Errors.UNKNOWN_TOPIC_OR_PARTITION, null);
        }
        try {
            return new DescribeProducersResponseData.PartitionResponse().setPartitionIndex(tp.partition())
                    .setActiveProducers(ctx.replicaManager().partitionOrThrow(tp).log().activeProducers());
        } catch (ApiException e) {
            return error(tp.partition(), Errors.forException(e), e.getMessage());
        }
    }

    private static DescribeProducersResponseData.PartitionResponse error(int partition, Errors error, String message) {
        return new DescribeProducersResponseData.PartitionResponse().setPartitionIndex(partition)
                .setErrorCode(error.code()).setErrorMessage(message);
    }
}
