package io.twinlog.server.handlers;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.controller.zk.BrokerUnregistration;
import io.twinlog.protocol.Request;
import io.twinlog.protocol.RequestHandler;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.UnregisterBrokerResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.UnregisterBrokerRequest;
import org.apache.kafka.common.requests.UnregisterBrokerResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * UnregisterBroker ({@code kafka-cluster.sh unregister --id N}, {@code Admin.unregisterBroker}): forgets a broker
 * gone for good ({@link BrokerUnregistration}). Runs off the request threads (it writes to ZooKeeper). A broker id
 * nothing names is answered BROKER_ID_NOT_REGISTERED as Kafka answers it; a running broker is refused with
 * INVALID_REQUEST. Partitions still assigned to the broker are left as they are (Kafka does not move them either)
 * and named in a warning: reassign them, or a deletion of their topic names the broker again.
 */
public final class UnregisterBrokerHandler implements RequestHandler {
    private static final Logger log = LoggerFactory.getLogger(UnregisterBrokerHandler.class);
    private final BrokerUnregistration unregistration;
    private final Supplier<MetadataImage> image;

    public UnregisterBrokerHandler(BrokerUnregistration unregistration, Supplier<MetadataImage> image) {
        this.unregistration = unregistration;
        this.image = image;
    }

    @Override
    public void handle(Request request) {
        int brokerId = ((UnregisterBrokerRequest) request.body()).data().brokerId();
        UnregisterBrokerResponseData data = new UnregisterBrokerResponseData();
        List<TopicPartition> assigned = assignedTo(image.get(), brokerId);
        try {
            unregistration.unregister(brokerId, !assigned.isEmpty());
            if (!assigned.isEmpty()) {
                log.warn("Broker {} was unregistered while {} partitions still list it as a replica (first: {}); "
                        + "reassign them, or a deletion of their topic names the broker again", brokerId,
                        assigned.size(), assigned.subList(0, Math.min(5, assigned.size())));
            }
        } catch (ApiException e) {
            data.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
        } catch (Exception e) {
            // broad: a failure of any kind is the error answer
            log.error("Could not unregister broker {}", brokerId, e);
            data.setErrorCode(Errors.forException(e).code()).setErrorMessage(e.getMessage());
        }
        request.respond(new UnregisterBrokerResponse(data));
    }

    private static List<TopicPartition> assignedTo(MetadataImage image, int brokerId) {
        List<TopicPartition> out = new ArrayList<>();
        for (TopicImage topic : image.topics().values()) {
            for (Map.Entry<Integer, PartitionImage> p : topic.partitions().entrySet()) {
                if (p.getValue().replicas().contains(brokerId)) {
                    out.add(new TopicPartition(topic.name(), p.getKey()));
                }
            }
        }
        return out;
    }
}
