package io.twinlog.transaction.verification;

import io.twinlog.common.tasks.PerKeyExecutor;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.protocol.client.InterBrokerClient;
import io.twinlog.protocol.client.UnsupportedApiVersionException;
import io.twinlog.transaction.internals.TransactionCoordinator;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AddPartitionsToTxnRequest;
import org.apache.kafka.common.requests.AddPartitionsToTxnResponse;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Asks transaction coordinators, for a partition leader, whether partitions are in a producer's open transaction
 * (KIP-890's AddPartitionsToTxn v4-5 between brokers, {@code verifyOnly}), or adds them for a producer that no longer
 * does so itself (transaction version 2). What Kafka's {@code AddPartitionsToTxnManager} does, on Twinlog's
 * inter-broker client: the requests for one coordinator wait in one queue, and the coordinator's thread
 * ({@code twinlog-txn-verify-<id>-broker-<n>}) sends everything queued in one request, so many producers' first
 * writes cost one round trip; a transactional id already in the request being built waits for the next one, since a
 * request names each id once.
 *
 * <p>The answers are Kafka's: PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH, TRANSACTION_ABORTABLE becomes
 * INVALID_TXN_STATE for producers that predate it, an unreachable coordinator NETWORK_EXCEPTION, a refused
 * authorization INVALID_TXN_STATE, and a coordinator that does not serve the broker form lets the write through
 * unverified. Never blocks its caller; the future completes on the coordinator's thread.
 */
public final class TransactionVerifier implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TransactionVerifier.class);

    private final int brokerId;
    private final Supplier<MetadataImage> image;
    private final Function<Integer, Optional<Node>> brokerNodes;
    private final Function<String, ChannelBuilder> channels;
    private final int requestTimeoutMs;
    private final Time time;
    private final PerKeyExecutor senders;
    private final Map<Integer, InterBrokerClient> clients = new ConcurrentHashMap<>();
    /** What waits per coordinator broker; guarded by itself. */
    private final Map<Integer, Deque<Pending>> queues = new HashMap<>();
    /** Coordinator brokers whose thread has been given a drain that has not started yet; guarded by {@link #queues}. */
    private final Set<Integer> drainScheduled = new HashSet<>();
    private volatile boolean closed;

    /** One producer's partitions, and whom to tell. */
    private record Pending(String transactionalId, long producerId, short producerEpoch,
                           Collection<TopicPartition> partitions, VerificationOperation operation,
                           CompletableFuture<Map<TopicPartition, Errors>> future) {
    }

    /**
     * @param channels the inter-broker listener's channel builder, by client id
     */
    public TransactionVerifier(int brokerId, Supplier<MetadataImage> image,
                               Function<Integer, Optional<Node>> brokerNodes,
                               Function<String, ChannelBuilder> channels, int requestTimeoutMs, Time time) {
        this.brokerId = brokerId;
        this.image = image;
        this.brokerNodes = brokerNodes;
        this.channels = channels;
        this.requestTimeoutMs = requestTimeoutMs;
        this.time = time;
        this.senders = new PerKeyExecutor("twinlog-txn-verify-" + brokerId, 30_000);
    }

    /**
     * Asks the coordinator of {@code transactionalId} about {@code partitions}; the future gets every partition's
     * code (NONE: in the transaction, or added to it).
     */
    public CompletableFuture<Map<TopicPartition, Errors>> verify(String transactionalId, long producerId,
                                                                 short producerEpoch,
                                                                 Collection<TopicPartition> partitions,
                                                                 VerificationOperation operation) {
        CompletableFuture<Map<TopicPartition, Errors>> future = new CompletableFuture<>();
        Pending pending = new Pending(transactionalId, producerId, producerEpoch, List.copyOf(partitions), operation,
                future);
        Optional<Integer> coordinator = coordinator(transactionalId);
        if (coordinator.isEmpty()) {
            future.complete(all(pending, Errors.COORDINATOR_NOT_AVAILABLE));
            return future;
        }
        int broker = coordinator.get();
        boolean schedule;
        synchronized (queues) {
            if (closed) {
                future.complete(all(pending, Errors.COORDINATOR_NOT_AVAILABLE));
                return future;
            }
            queues.computeIfAbsent(broker, b -> new ArrayDeque<>()).add(pending);
            schedule = drainScheduled.add(broker);
        }
        if (schedule) {
            scheduleDrain(broker);
        }
        return future;
    }

    /** The live leader of the transactional id's {@code __transaction_state} partition, as the image has it. */
    private Optional<Integer> coordinator(String transactionalId) {
        MetadataImage current = image.get();
        Optional<TopicImage> topic = current.topic(Topic.TRANSACTION_STATE_TOPIC_NAME);
        if (topic.isEmpty() || topic.get().partitions().isEmpty()) {
            return Optional.empty();
        }
        int partition = TransactionCoordinator.partitionFor(transactionalId, topic.get().partitions().size());
        PartitionImage p = topic.get().partitions().get(partition);
        int leader = p == null ? -1 : p.liveLeader(current.brokers().keySet());
        return leader < 0 ? Optional.empty() : Optional.of(leader);
    }

    private void scheduleDrain(int broker) {
        try {
            senders.execute("broker-" + broker, new PerKeyExecutor.Rejectable() {
                @Override
                public void run() {
                    drain(broker);
                }

                @Override
                public void reject(Throwable why) {
                    failQueued(broker, Errors.COORDINATOR_NOT_AVAILABLE);
                }
            });
        } catch (RejectedExecutionException e) {
            failQueued(broker, Errors.COORDINATOR_NOT_AVAILABLE); // closing
        }
    }

    /** On the coordinator's thread: sends what is queued, a request at a time, until nothing is left. */
    private void drain(int broker) {
        while (true) {
            Map<String, Pending> batch = new LinkedHashMap<>();
            synchronized (queues) {
                Deque<Pending> queue = queues.get(broker);
                if (queue == null || queue.isEmpty() || closed) {
                    drainScheduled.remove(broker);
                    queues.remove(broker);
                    if (closed && queue != null) {
                        queue.forEach(p -> p.future.complete(all(p, Errors.COORDINATOR_NOT_AVAILABLE)));
                    }
                    return;
                }
                for (Iterator<Pending> it = queue.iterator(); it.hasNext(); ) {
                    Pending p = it.next();
                    if (!batch.containsKey(p.transactionalId)) {
                        batch.put(p.transactionalId, p);
                        it.remove();
                    }
                }
            }
            try {
                send(broker, batch);
            } catch (RuntimeException e) {
                // broad: a failure of any kind is every waiting partition's error answer
                log.error("Could not verify the transactions of {} with broker {}", batch.keySet(), broker, e);
                batch.values().forEach(p -> p.future.complete(all(p, Errors.UNKNOWN_SERVER_ERROR)));
            }
        }
    }

    private void failQueued(int broker, Errors error) {
        Deque<Pending> queue;
        synchronized (queues) {
            drainScheduled.remove(broker);
            queue = queues.remove(broker);
        }
        if (queue != null) {
            queue.forEach(p -> p.future.complete(all(p, error)));
        }
    }

    /** One AddPartitionsToTxn (broker form) to the coordinator; every pending answered from its response. */
    private void send(int broker, Map<String, Pending> batch) {
        Optional<Node> node = brokerNodes.apply(broker);
        if (node.isEmpty()) {
            batch.values().forEach(p -> p.future.complete(all(p, Errors.COORDINATOR_NOT_AVAILABLE)));
            return;
        }
        AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection transactions =
                new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection();
        for (Pending p : batch.values()) {
            AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection topics =
                    new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection();
            for (TopicPartition tp : p.partitions) {
                AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic topic = topics.find(tp.topic());
                if (topic == null) {
                    topic = new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(tp.topic());
                    topics.add(topic);
                }
                topic.partitions().add(tp.partition());
            }
            transactions.add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction()
                    .setTransactionalId(p.transactionalId).setProducerId(p.producerId)
                    .setProducerEpoch(p.producerEpoch).setVerifyOnly(!p.operation.supportsEpochBump())
                    .setTopics(topics));
        }
        AddPartitionsToTxnResponse response;
        try {
            response = client(broker).send(node.get(), AddPartitionsToTxnRequest.Builder.forBroker(transactions));
        } catch (IOException e) {
            if (e instanceof UnsupportedApiVersionException) {
                // Kafka's rule: a coordinator that cannot verify lets the writes through as before KIP-890
                log.warn("Broker {} does not serve AddPartitionsToTxn's verification; writing without it", broker);
                batch.values().forEach(p -> p.future.complete(all(p, Errors.NONE)));
                return;
            }
            log.info("Could not verify the transactions of {} with broker {}: {}", batch.keySet(), broker,
                    e.toString());
            batch.values().forEach(p -> p.future.complete(all(p, Errors.NETWORK_EXCEPTION)));
            return;
        }
        AddPartitionsToTxnResponseData data = response.data();
        if (data.errorCode() != Errors.NONE.code()) {
            Errors top = Errors.forCode(data.errorCode());
            log.error("AddPartitionsToTxn to broker {} answered {} for {}", broker, top, batch.keySet());
            // Kafka's: a refused authorization is not the producer's to retry
            Errors each = top == Errors.CLUSTER_AUTHORIZATION_FAILED ? Errors.INVALID_TXN_STATE : top;
            batch.values().forEach(p -> p.future.complete(all(p, each)));
            return;
        }
        for (AddPartitionsToTxnResponseData.AddPartitionsToTxnResult result : data.resultsByTransaction()) {
            Pending p = batch.remove(result.transactionalId());
            if (p == null) {
                continue;
            }
            Map<TopicPartition, Errors> errors = new LinkedHashMap<>(all(p, Errors.NONE));
            for (AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult topic : result.topicResults()) {
                for (AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResult partition
                        : topic.resultsByPartition()) {
                    TopicPartition tp = new TopicPartition(topic.name(), partition.partitionIndex());
                    if (errors.containsKey(tp)) {
                        errors.put(tp, producerFacing(Errors.forCode(partition.partitionErrorCode()), p.operation));
                    }
                }
            }
            p.future.complete(errors);
        }
        // a transaction the coordinator left out of its answer is not known to be verified
        batch.values().forEach(p -> p.future.complete(all(p, Errors.UNKNOWN_SERVER_ERROR)));
    }

    /** A coordinator's partition code as the producer must get it (Kafka's mapping). */
    static Errors producerFacing(Errors error, VerificationOperation operation) {
        if (error == Errors.PRODUCER_FENCED) {
            return Errors.INVALID_PRODUCER_EPOCH;
        }
        if (error == Errors.TRANSACTION_ABORTABLE && operation == VerificationOperation.DEFAULT_ERROR) {
            return Errors.INVALID_TXN_STATE;
        }
        return error;
    }

    private static Map<TopicPartition, Errors> all(Pending p, Errors error) {
        Map<TopicPartition, Errors> errors = new LinkedHashMap<>();
        p.partitions.forEach(tp -> errors.put(tp, error));
        return errors;
    }

    private InterBrokerClient client(int broker) {
        if (closed) {
            throw new IllegalStateException("The transaction verifier is closed");
        }
        return clients.computeIfAbsent(broker, b -> {
            String clientId = "twinlog-txn-verify-" + brokerId + "-to-" + b;
            return new InterBrokerClient(clientId, channels.apply(clientId), requestTimeoutMs, 1 << 16, 50, 1_000,
                    time);
        });
    }

    @Override
    public void close() {
        Map<Integer, Deque<Pending>> left;
        synchronized (queues) {
            closed = true;
            left = new HashMap<>(queues);
            queues.clear();
        }
        left.values().forEach(q -> q.forEach(p -> p.future.complete(all(p, Errors.COORDINATOR_NOT_AVAILABLE))));
        senders.close();
        clients.values().forEach(c -> {
            c.wakeup();
            c.close();
        });
        clients.clear();
    }
}
