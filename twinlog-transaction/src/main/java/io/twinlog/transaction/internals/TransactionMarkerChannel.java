package io.twinlog.transaction.internals;

import io.twinlog.common.tasks.PerKeyExecutor;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.protocol.client.InterBrokerClient;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersResponseData;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.common.requests.WriteTxnMarkersRequest;
import org.apache.kafka.common.requests.WriteTxnMarkersResponse;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Sends a transaction's COMMIT or ABORT markers to the leaders of its partitions (WriteTxnMarkers, inter-broker,
 * with the coordinator epoch that fences a deposed coordinator) until each is written or the transaction is given up.
 * One thread per destination broker ({@code twinlog-txn-markers-<id>-<broker>}), each with its own connection, so a
 * slow or unreachable broker delays only the markers for its partitions; a partition not written is sent again after
 * its leader is looked up again, every {@value #RETRY_BACKOFF_MS} ms, for as long as the coordinator still owns the
 * transaction. Never blocks its caller: the future completes when every partition is done.
 */
public final class TransactionMarkerChannel implements AutoCloseable {
    static final long RETRY_BACKOFF_MS = 100;
    private static final Logger log = LoggerFactory.getLogger(TransactionMarkerChannel.class);

    /** The markers of one transaction: what every partition of it gets. */
    public record Markers(String transactionalId, long producerId, short producerEpoch, TransactionResult result,
                          int coordinatorEpoch, short transactionVersion) {
    }

    /** How a transaction's markers ended. */
    public enum Outcome { WRITTEN, ABANDONED }

    private final int brokerId;
    private final Supplier<MetadataImage> image;
    private final Function<Integer, Optional<Node>> brokerNodes;
    private final Function<String, ChannelBuilder> channels;
    private final int requestTimeoutMs;
    private final Predicate<Markers> stillOwned;
    private final Time time;
    private final PerKeyExecutor senders;
    private final ScheduledExecutorService retries;
    private final Map<Integer, InterBrokerClient> clients = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param stillOwned whether this broker still coordinates the transaction in the markers' coordinator epoch
     *                   (thread-safe): markers of a transaction it no longer owns are not sent again
     * @param channels   the inter-broker listener's channel builder, by client id
     */
    public TransactionMarkerChannel(int brokerId, Supplier<MetadataImage> image,
                                    Function<Integer, Optional<Node>> brokerNodes,
                                    Function<String, ChannelBuilder> channels, int requestTimeoutMs,
                                    Predicate<Markers> stillOwned, Time time) {
        this.brokerId = brokerId;
        this.image = image;
        this.brokerNodes = brokerNodes;
        this.channels = channels;
        this.requestTimeoutMs = requestTimeoutMs;
        this.stillOwned = stillOwned;
        this.time = time;
        this.senders = new PerKeyExecutor("twinlog-txn-markers-" + brokerId, 30_000);
        this.retries = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "twinlog-txn-marker-retries-" + brokerId);
            t.setDaemon(true);
            return t;
        });
    }

    /** Writes {@code markers} to every partition; the future says whether they were written or given up. */
    public CompletableFuture<Outcome> send(Markers markers, Set<TopicPartition> partitions) {
        Pending pending = new Pending(markers, partitions);
        if (partitions.isEmpty()) {
            pending.future.complete(Outcome.WRITTEN);
            return pending.future;
        }
        try {
            round(pending);
        } catch (RuntimeException e) {
            // broad: a failure of any kind completes the caller's future with it
            log.error("Could not send the markers of transactional id {}", markers.transactionalId(), e);
            pending.future.completeExceptionally(e);
        }
        return pending.future;
    }

    /** One transaction's markers not yet written. */
    private static final class Pending {
        final Markers markers;
        final Set<TopicPartition> remaining = ConcurrentHashMap.newKeySet();
        final CompletableFuture<Outcome> future = new CompletableFuture<>();
        final AtomicInteger inFlight = new AtomicInteger();
        int rounds;

        Pending(Markers markers, Set<TopicPartition> partitions) {
            this.markers = markers;
            this.remaining.addAll(partitions);
        }
    }

    /** Sends the remaining partitions' markers to their current leaders, one request per leader. */
    private void round(Pending pending) {
        if (closed) {
            pending.future.complete(Outcome.ABANDONED);
            return;
        }
        if (!stillOwned.test(pending.markers)) {
            log.info("No longer sending the {} markers of transactional id {}: this broker no longer coordinates "
                    + "it in coordinator epoch {}", pending.markers.result(), pending.markers.transactionalId(),
                    pending.markers.coordinatorEpoch());
            pending.future.complete(Outcome.ABANDONED);
            return;
        }
        pending.rounds++;
        MetadataImage current = image.get();
        Map<Integer, List<TopicPartition>> byLeader = new TreeMap<>();
        List<TopicPartition> noLeader = new ArrayList<>();
        for (TopicPartition tp : pending.remaining) {
            Optional<PartitionImage> p = current.partition(tp);
            if (p.isEmpty()) {
                if (current.topic(tp.topic()).isEmpty()) {
                    pending.remaining.remove(tp); // the topic was deleted: nothing to end there
                } else {
                    noLeader.add(tp);
                }
                continue;
            }
            int leader = p.get().liveLeader(current.brokers().keySet());
            if (leader < 0) {
                noLeader.add(tp);
            } else {
                byLeader.computeIfAbsent(leader, l -> new ArrayList<>()).add(tp);
            }
        }
        if (byLeader.isEmpty()) {
            afterRound(pending);
            return;
        }
        pending.inFlight.set(byLeader.size());
        byLeader.forEach((leader, partitions) -> {
            try {
                senders.execute("broker-" + leader, new PerKeyExecutor.Rejectable() {
                    @Override
                    public void run() {
                        try {
                            sendTo(leader, pending, partitions);
                        } finally {
                            sent(pending);
                        }
                    }

                    @Override
                    public void reject(Throwable why) {
                        sent(pending);
                    }
                });
            } catch (RejectedExecutionException e) {
                sent(pending);
            }
        });
    }

    /** One destination's request of this round is over; the last one ends the round. */
    private void sent(Pending pending) {
        if (pending.inFlight.decrementAndGet() == 0) {
            afterRound(pending);
        }
    }

    /** Completes the transaction's future when nothing remains, else schedules the next round. */
    private void afterRound(Pending pending) {
        if (pending.remaining.isEmpty()) {
            pending.future.complete(Outcome.WRITTEN);
        } else {
            if (pending.rounds % 50 == 0) {
                log.warn("The {} markers of transactional id {} are still not written to {} after {} attempts; "
                        + "trying again", pending.markers.result(), pending.markers.transactionalId(),
                        pending.remaining, pending.rounds);
            }
            try {
                retries.schedule(() -> round(pending), RETRY_BACKOFF_MS, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                pending.future.complete(Outcome.ABANDONED); // closing
            }
        }
    }

    /** On the destination broker's thread: one WriteTxnMarkers, each partition's answer applied. */
    private void sendTo(int leader, Pending pending, List<TopicPartition> partitions) {
        Optional<Node> node = brokerNodes.apply(leader);
        if (node.isEmpty()) {
            return; // not registered any more: the next round looks the leader up again
        }
        Markers m = pending.markers;
        Map<String, List<Integer>> byTopic = new TreeMap<>();
        partitions.forEach(tp -> byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition()));
        List<WriteTxnMarkersRequestData.WritableTxnMarkerTopic> topics = new ArrayList<>();
        byTopic.forEach((topic, indexes) -> topics.add(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic()
                .setName(topic).setPartitionIndexes(indexes)));
        WriteTxnMarkersRequestData data = new WriteTxnMarkersRequestData();
        data.markers().add(new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(m.producerId())
                .setProducerEpoch(m.producerEpoch()).setTransactionResult(m.result() == TransactionResult.COMMIT)
                .setCoordinatorEpoch(m.coordinatorEpoch()).setTransactionVersion((byte) m.transactionVersion())
                .setTopics(topics));
        WriteTxnMarkersResponse response;
        long startNs = System.nanoTime();
        try {
            response = client(leader).send(node.get(), new WriteTxnMarkersRequest.Builder(data));
        } catch (RuntimeException e) {
            log.error("Could not send the markers of transactional id {} to broker {}; sending them again",
                    m.transactionalId(), leader, e);
            return; // all these partitions stay remaining
        } catch (IOException e) {
            // sent again at the next round; said at INFO since it delays the transaction's completion
            log.info("Could not send the markers of transactional id {} to broker {} (after {} ms): {}; sending "
                    + "them again", m.transactionalId(), leader, TimeUnit.NANOSECONDS.toMillis(System.nanoTime()
                    - startNs), e.toString());
            return; // all these partitions stay remaining
        }
        MetadataImage current = image.get();
        for (WriteTxnMarkersResponseData.WritableTxnMarkerResult marker : response.data().markers()) {
            for (WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult topic : marker.topics()) {
                for (WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult p : topic.partitions()) {
                    TopicPartition tp = new TopicPartition(topic.name(), p.partitionIndex());
                    Errors error = Errors.forCode(p.errorCode());
                    if (MarkerOutcome.of(error, current.topic(tp.topic()).isPresent()) == MarkerOutcome.DONE) {
                        if (error == Errors.POLICY_VIOLATION) {
                            log.warn("{} is a mirror partition that has not failed over: the {} marker of "
                                    + "transactional id {} is not written there (its source ends its "
                                    + "transactions)", tp, m.result(), m.transactionalId());
                        } else if (error == Errors.INVALID_PRODUCER_EPOCH) {
                            log.info("{} already has a newer epoch of producer {} than the {} marker of "
                                    + "transactional id {} (epoch {}): nothing left to end there", tp,
                                    m.producerId(), m.result(), m.transactionalId(), m.producerEpoch());
                        }
                        pending.remaining.remove(tp);
                    } else {
                        log.debug("Marker for {} of transactional id {} answered {}; sending again", tp,
                                m.transactionalId(), error);
                    }
                }
            }
        }
    }

    private InterBrokerClient client(int leader) {
        if (closed) {
            throw new IllegalStateException("The marker channel is closed");
        }
        return clients.computeIfAbsent(leader, l -> {
            String clientId = "twinlog-txn-markers-" + brokerId + "-to-" + l;
            return new InterBrokerClient(clientId, channels.apply(clientId), requestTimeoutMs, 1 << 20, 50, 1_000,
                    time);
        });
    }

    @Override
    public void close() {
        closed = true;
        retries.shutdownNow();
        senders.close();
        clients.values().forEach(c -> {
            c.wakeup();
            c.close();
        });
        clients.clear();
    }
}
