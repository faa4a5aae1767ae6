package io.twinlog.transaction.internals;

import io.twinlog.transaction.ExpectedProducer;
import io.twinlog.transaction.ProducerIdSource;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.coordinator.transaction.InitProducerIdResult;
import org.apache.kafka.coordinator.transaction.TransactionMetadata;
import org.apache.kafka.coordinator.transaction.TransactionState;
import org.apache.kafka.coordinator.transaction.TxnTransitMetadata;
import org.apache.kafka.server.common.TransactionVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The transaction coordinator's request logic, run on its event thread only (the single owner of the
 * {@link TransactionStateCache} and of every {@link TransactionMetadata} mutation): looks the transactional id up,
 * applies {@link TransactionDecisions}, writes the transition with {@link TransactionLogWriter}, and completes the
 * transition and the caller's future when the write's outcome comes back as an event. Nothing here waits.
 */
public final class TransactionCoordinator {
    private static final Logger log = LoggerFactory.getLogger(TransactionCoordinator.class);

    private final TransactionStateCache cache;
    private final TransactionLogWriter writer;
    private final ProducerIdSource producerIds;
    private final int maxTimeoutMs;
    private final IntSupplier partitionCount;
    private final Supplier<TransactionVersion> finalizedVersion;
    /** Runs an event on the coordinator's thread (a write's outcome comes back through it). */
    private final Consumer<Runnable> events;
    private final Time time;

    public TransactionCoordinator(TransactionStateCache cache, TransactionLogWriter writer, ProducerIdSource producerIds,
                                  int maxTimeoutMs, IntSupplier partitionCount,
                                  Supplier<TransactionVersion> finalizedVersion, Consumer<Runnable> events,
                                  Time time) {
        this.cache = cache;
        this.writer = writer;
        this.producerIds = producerIds;
        this.maxTimeoutMs = maxTimeoutMs;
        this.partitionCount = partitionCount;
        this.finalizedVersion = finalizedVersion;
        this.events = events;
        this.time = time;
    }

    /** The {@code __transaction_state} partition of a transactional id: Kafka's formula, so both agree. */
    public static int partitionFor(String transactionalId, int partitions) {
        return Utils.abs(transactionalId.hashCode()) % partitions;
    }

    private int partitionFor(String transactionalId) {
        return partitionFor(transactionalId, partitionCount.getAsInt());
    }

    private static TopicPartition stateTopicPartition(int partition) {
        return new TopicPartition(Topic.TRANSACTION_STATE_TOPIC_NAME, partition);
    }

    /** InitProducerId with a transactional id (Kafka's {@code handleInitProducerId}). */
    public void initProducerId(String transactionalId, int timeoutMs, Optional<ExpectedProducer> expected,
                               CompletableFuture<InitProducerIdResult> result) {
        Optional<Errors> invalid = TransactionDecisions.checkInit(transactionalId, timeoutMs, maxTimeoutMs);
        if (invalid.isPresent()) {
            result.complete(initError(invalid.get()));
            return;
        }
        int partition = partitionFor(transactionalId);
        TransactionStateCache.Lookup lookup = cache.lookup(partition);
        if (lookup.error() != Errors.NONE) {
            result.complete(initError(lookup.error()));
            return;
        }
        TransactionMetadata txn = lookup.slot().get(transactionalId).orElse(null);
        if (txn == null) {
            OptionalLong producerId = producerIds.generateProducerId();
            if (producerId.isEmpty()) {
                result.complete(initError(Errors.COORDINATOR_LOAD_IN_PROGRESS));
                return;
            }
            txn = lookup.slot().putIfAbsent(new TransactionMetadata(transactionalId, producerId.getAsLong(),
                    RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH,
                    RecordBatch.NO_PRODUCER_EPOCH, timeoutMs, TransactionState.EMPTY, new HashSet<>(), -1L,
                    time.milliseconds(), TransactionVersion.TV_0));
        }
        int coordinatorEpoch = lookup.slot().coordinatorEpoch();
        InitDecision decision = TransactionDecisions.initProducerId(txn, timeoutMs, expected, producerIds,
                time.milliseconds());
        if (decision instanceof InitDecision.Fail fail) {
            result.complete(initError(fail.error()));
        } else if (decision instanceof InitDecision.Write write) {
            writeTransition(partition, coordinatorEpoch, txn, write.transit(), error -> {
                if (error == Errors.NONE) {
                    log.info("Initialized transactional id {} with producer id {} and epoch {} on {}",
                            transactionalId, write.transit().producerId(), write.transit().producerEpoch(),
                            stateTopicPartition(partition));
                    result.complete(new InitProducerIdResult(write.transit().producerId(),
                            write.transit().producerEpoch(), Errors.NONE));
                } else {
                    log.info("InitProducerId of transactional id {} answered {}", transactionalId, error);
                    result.complete(initError(error));
                }
            });
        } else if (decision instanceof InitDecision.FenceThenAbort) {
            // ending the open transaction needs the marker channel (issue 26, next step); no API can open one yet
            txn.pendingState(Optional.empty());
            log.warn("Transactional id {} has an open transaction, which this coordinator cannot end yet",
                    transactionalId);
            result.complete(initError(Errors.CONCURRENT_TRANSACTIONS));
        }
    }

    /**
     * Writes {@code transit} for {@code txn}; when the write's outcome comes back (as an event), completes the
     * transition if this broker still coordinates the partition in the same epoch, or clears the pending state if
     * the write failed, then calls {@code done} with the error the client gets.
     */
    private void writeTransition(int partition, int coordinatorEpoch, TransactionMetadata txn,
                                 TxnTransitMetadata transit, Consumer<Errors> done) {
        writer.write(stateTopicPartition(partition), txn.transactionalId(), transit, finalizedVersion.get())
                .whenComplete((error, failure) -> events.accept(() -> {
                    Errors outcome = failure != null ? Errors.UNKNOWN_SERVER_ERROR : error;
                    Optional<TransactionStateCache.Slot> owned = cache.stillOwned(partition, coordinatorEpoch);
                    if (owned.isEmpty() || owned.get().get(txn.transactionalId()).orElse(null) != txn) {
                        // resigned or re-elected meanwhile: the new owner reloads the log, whatever was written
                        done.accept(Errors.NOT_COORDINATOR);
                        return;
                    }
                    if (outcome == Errors.NONE) {
                        txn.completeTransitionTo(transit);
                    } else {
                        if (transit.txnState() == TransactionState.PREPARE_EPOCH_FENCE) {
                            // the next fence must not bump again: that epoch was never returned to anyone
                            txn.hasFailedEpochFence(true);
                        }
                        txn.pendingState(Optional.empty());
                    }
                    done.accept(outcome);
                }));
    }

    private static InitProducerIdResult initError(Errors error) {
        return new InitProducerIdResult(RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH, error);
    }

    /** DescribeTransactions of one id (Kafka's {@code handleDescribeTransactions}); topics unfiltered. */
    public DescribeTransactionsResponseData.TransactionState describe(String transactionalId) {
        DescribeTransactionsResponseData.TransactionState state = new DescribeTransactionsResponseData
                .TransactionState().setTransactionalId(transactionalId);
        TransactionStateCache.Lookup lookup = cache.lookup(partitionFor(transactionalId));
        if (lookup.error() != Errors.NONE) {
            return state.setErrorCode(lookup.error().code());
        }
        Optional<TransactionMetadata> found = lookup.slot().get(transactionalId)
                .filter(t -> t.state() != TransactionState.DEAD);
        if (found.isEmpty()) {
            return state.setErrorCode(Errors.TRANSACTIONAL_ID_NOT_FOUND.code());
        }
        TransactionMetadata txn = found.get();
        Map<String, List<Integer>> byTopic = new TreeMap<>();
        txn.topicPartitions().forEach(tp -> byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>())
                .add(tp.partition()));
        DescribeTransactionsResponseData.TopicDataCollection topics =
                new DescribeTransactionsResponseData.TopicDataCollection();
        byTopic.forEach((topic, partitions) -> topics.add(new DescribeTransactionsResponseData.TopicData()
                .setTopic(topic).setPartitions(partitions.stream().sorted().toList())));
        return state.setErrorCode(Errors.NONE.code()).setTransactionState(txn.state().stateName())
                .setTransactionTimeoutMs(txn.txnTimeoutMs()).setTransactionStartTimeMs(txn.txnStartTimestamp())
                .setProducerId(txn.producerId()).setProducerEpoch(txn.producerEpoch()).setTopics(topics);
    }

    /**
     * ListTransactions over the partitions this broker coordinates (Kafka's {@code listTransactionStates}): state,
     * producer id, duration and transactional-id pattern filters; COORDINATOR_LOAD_IN_PROGRESS while a partition
     * loads (the list would be incomplete); state names Kafka does not know are returned as unknown filters.
     */
    public ListTransactionsResponseData list(Set<String> states, Set<Long> producerIds, long minDurationMs,
                                             String idPattern) {
        ListTransactionsResponseData response = new ListTransactionsResponseData();
        if (cache.anyLoading()) {
            return response.setErrorCode(Errors.COORDINATOR_LOAD_IN_PROGRESS.code());
        }
        Pattern pattern = null;
        if (idPattern != null && !idPattern.isEmpty()) {
            try {
                pattern = Pattern.compile(idPattern);
            } catch (PatternSyntaxException e) {
                return response.setErrorCode(Errors.INVALID_REGULAR_EXPRESSION.code());
            }
        }
        Set<TransactionState> wanted = new HashSet<>();
        for (String name : states) {
            Optional<TransactionState> known = TransactionState.fromName(name);
            if (known.isPresent()) {
                wanted.add(known.get());
            } else {
                response.unknownStateFilters().add(name);
            }
        }
        if (!states.isEmpty() && wanted.isEmpty()) {
            return response; // only unknown states asked for: nothing can match
        }
        long now = time.milliseconds();
        for (TransactionStateCache.Slot slot : cache.slots()) {
            for (TransactionMetadata txn : slot.transactions()) {
                if (txn.state() == TransactionState.DEAD
                        || (!producerIds.isEmpty() && !producerIds.contains(txn.producerId()))
                        || (!wanted.isEmpty() && !wanted.contains(txn.state()))
                        || (minDurationMs >= 0 && now - txn.txnStartTimestamp() <= minDurationMs)
                        || (pattern != null && !pattern.matcher(txn.transactionalId()).matches())) {
                    continue;
                }
                response.transactionStates().add(new ListTransactionsResponseData.TransactionState()
                        .setTransactionalId(txn.transactionalId()).setProducerId(txn.producerId())
                        .setTransactionState(txn.state().stateName()));
            }
        }
        return response;
    }
}
