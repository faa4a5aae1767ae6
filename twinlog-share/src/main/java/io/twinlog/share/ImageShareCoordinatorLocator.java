package io.twinlog.share;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import org.apache.kafka.common.Node;
import org.apache.kafka.server.share.SharePartitionKey;
import org.apache.kafka.server.share.persister.ShareCoordinatorMetadataCacheHelper;

import java.util.List;
import java.util.Optional;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * Where Kafka's persister sends a share partition's state calls: the leader of the key's {@code __share_group_state}
 * partition on the inter-broker listener, read from Twinlog's metadata image. {@link Node#noNode()} while that is
 * not known (the coordinator not started, the topic not created, no leader): the persister then asks a broker with
 * FindCoordinator, which also creates the topic, and retries.
 */
public final class ImageShareCoordinatorLocator implements ShareCoordinatorMetadataCacheHelper {
    private final Supplier<MetadataImage> image;
    private final ShareCoordinatorHost host;
    private final IntFunction<Optional<Node>> interBrokerNode;

    /** @param interBrokerNode a broker's endpoint on the inter-broker listener, if it is registered */
    public ImageShareCoordinatorLocator(Supplier<MetadataImage> image, ShareCoordinatorHost host,
                                        IntFunction<Optional<Node>> interBrokerNode) {
        this.image = image;
        this.host = host;
        this.interBrokerNode = interBrokerNode;
    }

    @Override
    public boolean containsTopic(String topic) {
        return image.get().topic(topic).isPresent();
    }

    @Override
    public Node getShareCoordinator(SharePartitionKey key, String internalTopic) {
        if (!host.isStarted()) {
            return Node.noNode();
        }
        int partition = host.partitionFor(key);
        return image.get().topic(internalTopic)
                .map(t -> t.partitions().get(partition))
                .map(PartitionImage::leader)
                .filter(leader -> leader >= 0)
                .flatMap(interBrokerNode::apply)
                .orElse(Node.noNode());
    }

    @Override
    public List<Node> getClusterNodes() {
        return image.get().brokers().keySet().stream().map(interBrokerNode::apply).flatMap(Optional::stream)
                .toList();
    }
}
