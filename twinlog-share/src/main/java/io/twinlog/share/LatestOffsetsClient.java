package io.twinlog.share;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.protocol.client.InterBrokerClient;
import io.twinlog.protocol.client.MonotonicTime;
import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsPartitionResponse;
import org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsTopicResponse;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.InterBrokerSendThread;
import org.apache.kafka.server.util.PartitionMetadataClient;
import org.apache.kafka.server.util.RequestAndCompletionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * The latest offsets of partitions (their high watermarks, what ListOffsets LATEST answers a read-uncommitted
 * consumer) for the lag column of DescribeShareGroupOffsets v1 (KIP-1226), as Kafka's
 * {@code NetworkPartitionMetadataClient} finds them: read directly from the replicas this broker leads, asked of the
 * leader with one ListOffsets per broker for the others, on a send thread of its own over a non-blocking client on
 * the inter-broker listener, so the group coordinator's thread never waits for a network answer.
 * A partition without a known leader, or whose leader does not answer, gets an error, and its lag is shown as
 * unknown (Kafka's behaviour).
 */
public final class LatestOffsetsClient implements PartitionMetadataClient {
    private static final Logger log = LoggerFactory.getLogger(LatestOffsetsClient.class);

    private final ReplicaManager replicaManager;
    private final Supplier<MetadataImage> image;
    private final IntFunction<Optional<Node>> interBrokerNode;
    private final Time time;
    private final Metrics metrics = new Metrics();
    private final ConcurrentLinkedQueue<RequestAndCompletionHandler> unsent = new ConcurrentLinkedQueue<>();
    private final SendThread sender;

    /**
     * @param channel          connections on the inter-broker listener (its security and credentials)
     * @param interBrokerNode  a broker's endpoint on the inter-broker listener, if it is registered
     * @param requestTimeoutMs how long a leader may take to answer before its partitions' lag is unknown
     */
    public LatestOffsetsClient(int brokerId, ReplicaManager replicaManager, Supplier<MetadataImage> image,
                               IntFunction<Optional<Node>> interBrokerNode, ChannelBuilder channel,
                               int requestTimeoutMs, Time time) {
        this.replicaManager = replicaManager;
        this.image = image;
        this.interBrokerNode = interBrokerNode;
        this.time = time;
        String clientId = "twinlog-latest-offsets-" + brokerId;
        NetworkClient client = InterBrokerClient.networkClient(clientId, channel, metrics, 5, requestTimeoutMs,
                -1, 50, 1_000, MonotonicTime.orMock(time));
        this.sender = new SendThread(clientId, client, requestTimeoutMs, time);
        sender.start();
    }

    @Override
    public Map<TopicPartition, CompletableFuture<OffsetResponse>> listLatestOffsets(Set<TopicPartition> partitions) {
        Map<TopicPartition, CompletableFuture<OffsetResponse>> offsets = new HashMap<>();
        Map<Integer, List<TopicPartition>> byLeader = new HashMap<>();
        MetadataImage current = image.get();
        for (TopicPartition tp : partitions) {
            CompletableFuture<OffsetResponse> future = new CompletableFuture<>();
            offsets.put(tp, future);
            Optional<Partition> local = replicaManager.partition(tp).filter(Partition::isLeader);
            if (local.isPresent()) {
                future.complete(new OffsetResponse(local.get().log().highWatermark(), Errors.NONE));
                continue;
            }
            Optional<Integer> leader = current.topic(tp.topic())
                    .map(t -> t.partitions().get(tp.partition()))
                    .map(PartitionImage::leader);
            if (leader.isEmpty()) {
                future.complete(new OffsetResponse(-1, Errors.UNKNOWN_TOPIC_OR_PARTITION));
            } else if (leader.get() < 0) {
                future.complete(new OffsetResponse(-1, Errors.LEADER_NOT_AVAILABLE));
            } else {
                byLeader.computeIfAbsent(leader.get(), id -> new ArrayList<>()).add(tp);
            }
        }
        byLeader.forEach((leader, tps) -> ask(leader, tps, offsets));
        return offsets;
    }

    /** One ListOffsets LATEST to {@code leader} for its partitions, answered on the send thread. */
    private void ask(int leader, List<TopicPartition> tps, Map<TopicPartition, CompletableFuture<OffsetResponse>> offsets) {
        Optional<Node> node = interBrokerNode.apply(leader);
        if (node.isEmpty()) {
            tps.forEach(tp -> offsets.get(tp).complete(new OffsetResponse(-1, Errors.LEADER_NOT_AVAILABLE)));
            return;
        }
        Map<String, ListOffsetsTopic> topics = new HashMap<>();
        for (TopicPartition tp : tps) {
            topics.computeIfAbsent(tp.topic(), name -> new ListOffsetsTopic().setName(name)).partitions()
                    .add(new ListOffsetsPartition().setPartitionIndex(tp.partition())
                            .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP).setCurrentLeaderEpoch(-1));
        }
        ListOffsetsRequest.Builder request = ListOffsetsRequest.Builder
                .forConsumer(false, IsolationLevel.READ_UNCOMMITTED).setTargetTimes(new ArrayList<>(topics.values()));
        unsent.add(new RequestAndCompletionHandler(time.milliseconds(), node.get(), request,
                response -> answer(leader, response, tps, offsets)));
        sender.wakeup();
    }

    private static void answer(int leader, ClientResponse response, List<TopicPartition> tps,
                               Map<TopicPartition, CompletableFuture<OffsetResponse>> offsets) {
        Errors failure = null;
        if (response.wasDisconnected()) {
            failure = response.wasTimedOut() ? Errors.REQUEST_TIMED_OUT : Errors.NETWORK_EXCEPTION;
        } else if (response.authenticationException() != null) {
            failure = Errors.forException(response.authenticationException());
        } else if (response.versionMismatch() != null) {
            failure = Errors.UNSUPPORTED_VERSION;
        }
        if (failure != null) {
            log.info("Broker {} gave no latest offsets for the lag of {} share partitions ({}): their lag is unknown",
                    leader, tps.size(), failure);
            Errors error = failure;
            tps.forEach(tp -> offsets.get(tp).complete(new OffsetResponse(-1, error)));
            return;
        }
        for (ListOffsetsTopicResponse topic : ((ListOffsetsResponse) response.responseBody()).topics()) {
            for (ListOffsetsPartitionResponse p : topic.partitions()) {
                CompletableFuture<OffsetResponse> future = offsets.get(new TopicPartition(topic.name(),
                        p.partitionIndex()));
                if (future != null) {
                    future.complete(new OffsetResponse(p.offset(), Errors.forCode(p.errorCode())));
                }
            }
        }
        // a partition the answer left out: unknown rather than waiting forever
        tps.forEach(tp -> offsets.get(tp).complete(new OffsetResponse(-1, Errors.UNKNOWN_SERVER_ERROR)));
    }

    @Override
    public void close() {
        try {
            sender.shutdown(); // closes the network client
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        RequestAndCompletionHandler left;
        while ((left = unsent.poll()) != null) {
            log.debug("Latest-offsets request to broker {} not sent: closing", left.destination.id());
        }
        metrics.close();
    }

    /** Kafka's inter-broker send thread, fed from the queue the coordinator's thread fills. */
    private final class SendThread extends InterBrokerSendThread {
        SendThread(String name, NetworkClient client, int requestTimeoutMs, Time time) {
            super(name, client, requestTimeoutMs, time);
        }

        @Override
        public Collection<RequestAndCompletionHandler> generateRequests() {
            List<RequestAndCompletionHandler> batch = new ArrayList<>();
            RequestAndCompletionHandler next;
            while ((next = unsent.poll()) != null) {
                batch.add(next);
            }
            return batch;
        }
    }
}
