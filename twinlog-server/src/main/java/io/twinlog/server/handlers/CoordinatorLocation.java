package io.twinlog.server.handlers;

import io.twinlog.common.Endpoint;
import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import org.apache.kafka.common.protocol.Errors;

import java.util.Optional;

/**
 * A FindCoordinator answer for one key: the broker that coordinates it, reached on the listener the request came
 * in on, or the error.
 */
public record CoordinatorLocation(Errors error, String message, int nodeId, String host, int port) {
    public static CoordinatorLocation error(Errors error, String message) {
        return new CoordinatorLocation(error, message, -1, "", -1);
    }

    /**
     * The live leader of {@code topic}'s {@code partition} (a coordinator's internal topic), or
     * COORDINATOR_NOT_AVAILABLE while it has none or it has no endpoint on {@code listener}.
     */
    public static CoordinatorLocation leaderOf(MetadataImage image, String topic, int partition, String listener) {
        Optional<PartitionImage> p = Optional.ofNullable(image.partitions(topic).get(partition));
        int leader = p.map(pi -> pi.liveLeader(image.brokers().keySet())).orElse(-1);
        BrokerRegistration broker = leader < 0 ? null : image.brokers().get(leader);
        Optional<Endpoint> endpoint = broker == null ? Optional.empty() : broker.endpoint(listener);
        if (endpoint.isEmpty()) {
            return error(Errors.COORDINATOR_NOT_AVAILABLE, "Partition " + partition + " of " + topic
                    + " has no live leader");
        }
        return new CoordinatorLocation(Errors.NONE, null, leader, endpoint.get().host(), endpoint.get().port());
    }
}
