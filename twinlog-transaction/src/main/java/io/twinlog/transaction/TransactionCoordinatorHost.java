package io.twinlog.transaction;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import io.twinlog.transaction.internals.TransactionCoordinator;
import io.twinlog.transaction.internals.TransactionLogLoader;
import io.twinlog.transaction.internals.TransactionLogWriter;
import io.twinlog.transaction.internals.TransactionMarkerChannel;
import io.twinlog.transaction.internals.TransactionQueries;
import io.twinlog.transaction.internals.TransactionStateCache;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.CoordinatorNotAvailableException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.coordinator.transaction.InitProducerIdResult;
import org.apache.kafka.coordinator.transaction.TransactionConfig;
import org.apache.kafka.queue.EventQueue;
import org.apache.kafka.queue.KafkaEventQueue;
import org.apache.kafka.server.common.TransactionVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Consumer;

/**
 * The transaction coordinator of a Twinlog broker: serves the transactional ids whose {@code __transaction_state}
 * partition this broker leads, with Kafka's {@code TransactionMetadata} state machine and record format
 * ({@code kafka-transaction-coordinator}) and the shell Kafka keeps in its Scala core written here (decision 88).
 *
 * <p>Leadership follows the metadata image, as the group coordinator's does: a partition this broker comes to lead
 * in a new leader epoch is loaded from its log (its ids answer COORDINATOR_LOAD_IN_PROGRESS meanwhile), and the
 * leader epoch is the coordinator epoch; a partition it stops leading is dropped (NOT_COORDINATOR).
 *
 * <p>Threading: everything runs on one event thread, {@code twinlog-txn-coordinator-<id>} (Kafka's
 * {@link KafkaEventQueue}): request entry points return futures at once, a state write's outcome and a load's
 * result come back as events. Request threads never wait on the log.
 */
public final class TransactionCoordinatorHost implements AutoCloseable {
    public static final String TRANSACTION_STATE_TOPIC = Topic.TRANSACTION_STATE_TOPIC_NAME;
    private static final Logger log = LoggerFactory.getLogger(TransactionCoordinatorHost.class);
    private static final long LOAD_RETRY_MS = 1_000;

    private final int brokerId;
    private final TransactionConfig config;
    private final ReplicaManager replicaManager;
    private final KafkaEventQueue queue;
    private final TransactionStateCache cache = new TransactionStateCache();
    private final AtomicLong deferredIds = new AtomicLong();
    private final TransactionLogLoader loader;
    private final TransactionMarkerChannel markers;
    private final TransactionCoordinator coordinator;
    private final TransactionQueries queries;
    /** The coordinator epoch of each partition led here, for the marker threads (the cache is the loop's). */
    private final Map<Integer, Integer> ownedEpochs = new ConcurrentHashMap<>();
    private volatile MetadataImage image = MetadataImage.EMPTY;
    private volatile int partitionCount = -1;
    /** Whether a partition was ever led here: from then on, ids are served by {@link #partitionCount}. */
    private boolean everElected;
    private boolean partitionCountWarned;
    private volatile TransactionVersion finalizedVersion = TransactionVersion.TV_0;

    /**
     * @param brokerNodes how to reach another broker on the inter-broker listener (markers go to partition leaders)
     * @param channels    the inter-broker listener's channel builder, by client id
     */
    public TransactionCoordinatorHost(int brokerId, TransactionConfig config, ReplicaManager replicaManager,
                                      ProducerIdSource producerIds, Function<Integer, Optional<Node>> brokerNodes,
                                      Function<String, ChannelBuilder> channels, Time time) {
        this.brokerId = brokerId;
        this.config = config;
        this.replicaManager = replicaManager;
        this.queue = new KafkaEventQueue(time, new LogContext("[TransactionCoordinator broker=" + brokerId + "] "),
                "twinlog-txn-coordinator-" + brokerId + "-");
        this.loader = new TransactionLogLoader(replicaManager, config.transactionLogLoadBufferSize(), time);
        this.markers = new TransactionMarkerChannel(brokerId, () -> image, brokerNodes, channels,
                config.requestTimeoutMs(), m -> Integer.valueOf(m.coordinatorEpoch()).equals(
                        ownedEpochs.get(partitionFor(m.transactionalId()))), time);
        this.coordinator = new TransactionCoordinator(cache,
                new TransactionLogWriter(replicaManager, config.requestTimeoutMs(), time), producerIds,
                config.transactionMaxTimeoutMs(), () -> partitionCount, () -> finalizedVersion, markers::send,
                new TransactionCoordinator.CoordinatorEvents() {
                    @Override
                    public void run(Runnable event) {
                        post(event);
                    }

                    @Override
                    public void runAfter(long delayMs, Runnable event) {
                        postAfter(delayMs, event);
                    }
                }, time);
        this.queries = new TransactionQueries(cache, () -> partitionCount, time);
        scheduleTimeoutCheck();
        scheduleExpiration();
    }

    /** True once the first metadata image fixed the number of {@code __transaction_state} partitions. */
    public boolean isStarted() {
        return partitionCount > 0;
    }

    /** The {@code __transaction_state} partition that holds a transactional id; only once started. */
    public int partitionFor(String transactionalId) {
        int partitions = partitionCount;
        if (partitions <= 0) {
            throw new CoordinatorNotAvailableException("The transaction coordinator is starting");
        }
        return TransactionCoordinator.partitionFor(transactionalId, partitions);
    }

    public TransactionConfig config() {
        return config;
    }

    /**
     * Configs of a new {@code __transaction_state} topic, Kafka's: compacted, its own segment size and min ISR, no
     * unclean election (a coordinator that lost records could hand out an epoch twice).
     */
    public Map<String, String> topicConfigs() {
        return Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT,
                TopicConfig.COMPRESSION_TYPE_CONFIG, "uncompressed",
                TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, Integer.toString(config.transactionLogMinInsyncReplicas()),
                TopicConfig.SEGMENT_BYTES_CONFIG, Integer.toString(config.transactionLogSegmentBytes()),
                TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG, "false");
    }

    /** Metadata listener: the image is applied on the coordinator's thread. */
    public void onImage(MetadataImage previous, MetadataImage next) {
        post(() -> apply(next));
    }

    public CompletableFuture<InitProducerIdResult> initProducerId(String transactionalId, int timeoutMs,
                                                                  Optional<ExpectedProducer> expected) {
        return call(result -> coordinator.initProducerId(transactionalId, timeoutMs, expected, result));
    }

    /** AddPartitionsToTxn / AddOffsetsToTxn (transaction version 0/1): the code every partition gets. */
    public CompletableFuture<Errors> addPartitions(String transactionalId, long producerId, short producerEpoch,
                                                   Set<TopicPartition> partitions, TransactionVersion version) {
        return call(result -> coordinator.addPartitions(transactionalId, producerId, producerEpoch, partitions,
                version, result::complete));
    }

    /** A partition leader's verification (KIP-890's AddPartitionsToTxn with verifyOnly): each partition's code. */
    public CompletableFuture<Map<TopicPartition, Errors>> verifyPartitions(String transactionalId, long producerId,
                                                                          short producerEpoch,
                                                                          Collection<TopicPartition> partitions) {
        return call(result -> coordinator.verifyPartitions(transactionalId, producerId, producerEpoch, partitions,
                result::complete));
    }

    /**
     * EndTxn; answered once the PREPARE state is written, before the markers, with (transaction version 2) the
     * producer id and epoch the producer goes on with.
     */
    public CompletableFuture<EndTxnResult> endTransaction(String transactionalId, long producerId, short producerEpoch,
                                                          TransactionResult result, TransactionVersion version) {
        return call(done -> coordinator.endTransaction(transactionalId, producerId, producerEpoch, result, true,
                version, done::complete));
    }

    public CompletableFuture<DescribeTransactionsResponseData.TransactionState> describe(String transactionalId) {
        return call(result -> result.complete(queries.describe(transactionalId)));
    }

    public CompletableFuture<ListTransactionsResponseData> list(Set<String> states, Set<Long> producerIds,
                                                                long minDurationMs, String idPattern) {
        return call(result -> result.complete(queries.list(states, producerIds, minDurationMs, idPattern)));
    }

    /** Runs {@code body} on the coordinator's thread with a future it completes; a failure completes it too. */
    private <T> CompletableFuture<T> call(Consumer<CompletableFuture<T>> body) {
        CompletableFuture<T> result = new CompletableFuture<>();
        queue.append(new EventQueue.Event() {
            @Override
            public void run() {
                body.accept(result);
            }

            @Override
            public void handleException(Throwable e) {
                if (!(e instanceof ApiException)) {
                    log.error("Transaction coordinator request failed on broker {}", brokerId, e);
                }
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /** Every {@code transaction.abort.timed.out.transaction.cleanup.interval.ms}, on the coordinator's thread. */
    private void scheduleTimeoutCheck() {
        postAfter(config.abortTimedOutTransactionsIntervalMs(), () -> {
            try {
                coordinator.abortTimedOutTransactions();
            } finally {
                scheduleTimeoutCheck();
            }
        });
    }

    /** Every {@code transaction.remove.expired.transaction.cleanup.interval.ms}, on the coordinator's thread. */
    private void scheduleExpiration() {
        postAfter(config.removeExpiredTransactionalIdsIntervalMs(), () -> {
            try {
                coordinator.expireTransactionalIds(config.transactionalIdExpirationMs());
            } finally {
                scheduleExpiration();
            }
        });
    }

    private void postAfter(long delayMs, Runnable event) {
        long deadlineNs = queue.time().nanoseconds() + TimeUnit.MILLISECONDS.toNanos(delayMs);
        queue.scheduleDeferred("txn-" + deferredIds.incrementAndGet(), ignored -> OptionalLong.of(deadlineNs),
                new EventQueue.Event() {
                    @Override
                    public void run() {
                        event.run();
                    }

                    @Override
                    public void handleException(Throwable e) {
                        if (!(e instanceof RejectedExecutionException)) {
                            log.error("Transaction coordinator event failed on broker {}", brokerId, e);
                        }
                    }
                });
    }

    private void post(Runnable event) {
        queue.append(new EventQueue.Event() {
            @Override
            public void run() {
                event.run();
            }

            @Override
            public void handleException(Throwable e) {
                log.error("Transaction coordinator event failed on broker {}", brokerId, e);
            }
        });
    }

    private void apply(MetadataImage image) {
        this.image = image;
        finalizedVersion = image.features().transactionVersion();
        Optional<Integer> topicPartitions = image.topic(TRANSACTION_STATE_TOPIC).map(t -> t.partitions().size());
        if (partitionCount <= 0) {
            // the topic's count if it exists, else the one this broker would create it with
            partitionCount = topicPartitions.orElse(config.transactionLogNumPartitions());
            log.info("Transaction coordinator started on broker {} ({} partitions of {}, transaction.version {})",
                    brokerId, partitionCount, TRANSACTION_STATE_TOPIC, finalizedVersion.featureLevel());
        }
        if (topicPartitions.isPresent() && topicPartitions.get() != partitionCount) {
            if (!everElected) {
                // another broker created the topic with its own count: ids map by the topic's, on every broker
                log.info("{} has {} partitions (this broker's transaction.state.log.num.partitions is {}); using {}",
                        TRANSACTION_STATE_TOPIC, topicPartitions.get(), partitionCount, topicPartitions.get());
                partitionCount = topicPartitions.get();
            } else if (!partitionCountWarned) {
                partitionCountWarned = true;
                // ids already map by the old count: moving them would put one id on two coordinators (Kafka
                // refuses to load then too)
                log.error("{} now has {} partitions, but this broker serves transactional ids by {}: its partitions "
                        + "must not change; restore the count (transactional ids are served by the old one)",
                        TRANSACTION_STATE_TOPIC, topicPartitions.get(), partitionCount);
            }
        }
        applyLeadership(image.topic(TRANSACTION_STATE_TOPIC));
    }

    private void applyLeadership(Optional<TopicImage> topic) {
        Set<Integer> partitions = topic.map(t -> t.partitions().keySet()).orElse(Set.of());
        for (Integer p : partitions) {
            TopicPartition tp = new TopicPartition(TRANSACTION_STATE_TOPIC, p);
            Optional<Partition> local = replicaManager.partition(tp);
            Optional<Integer> electedIn = cache.electedEpoch(p);
            if (local.isPresent() && local.get().isLeader()) {
                int epoch = local.get().leaderEpoch();
                if (electedIn.isEmpty() || electedIn.get() != epoch) {
                    elect(tp, epoch);
                }
            } else if (electedIn.isPresent()) {
                resign(p);
            }
        }
        for (Integer p : cache.partitions()) {
            if (!partitions.contains(p)) {
                resign(p);
            }
        }
    }

    private void elect(TopicPartition tp, int epoch) {
        log.info("Broker {} now coordinates the transactional ids of {} (coordinator epoch {}); loading them",
                brokerId, tp, epoch);
        everElected = true;
        cache.elect(tp.partition(), epoch);
        ownedEpochs.put(tp.partition(), epoch);
        load(tp, epoch);
    }

    /** Loads the partition; a failed load is tried again after a second while it is still led in that epoch. */
    private void load(TopicPartition tp, int epoch) {
        loader.load(tp).whenComplete((loaded, failure) -> post(() -> {
            if (failure != null) {
                // its ids answer COORDINATOR_LOAD_IN_PROGRESS meanwhile, which clients retry
                log.error("Could not load the transactional ids of {} (coordinator epoch {}); trying again in {} ms",
                        tp, epoch, LOAD_RETRY_MS, failure);
                postAfter(LOAD_RETRY_MS, () -> {
                    if (cache.isLoading(tp.partition(), epoch)) {
                        load(tp, epoch);
                    }
                });
            } else if (cache.loaded(tp.partition(), epoch, loaded)) {
                coordinator.onLoaded(tp.partition());
            } else {
                log.info("Dropped the load of {} in coordinator epoch {}: its leadership changed meanwhile", tp,
                        epoch);
            }
        }));
    }

    private void resign(int partition) {
        log.info("Broker {} no longer coordinates the transactional ids of {}-{}", brokerId,
                TRANSACTION_STATE_TOPIC, partition);
        cache.resign(partition);
        ownedEpochs.remove(partition);
    }

    @Override
    public void close() throws InterruptedException {
        markers.close();
        queue.close();
        try {
            loader.close();
        } catch (Exception e) {
            // broad: Kafka's loader close throws Exception; closing goes on
            log.warn("Could not close the transaction log loader", e);
        }
    }
}
