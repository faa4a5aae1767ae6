package io.twinlog.transaction.internals;

import io.twinlog.transaction.EndTxnResult;
import io.twinlog.transaction.ExpectedProducer;
import io.twinlog.transaction.ProducerIdSource;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.coordinator.transaction.InitProducerIdResult;
import org.apache.kafka.coordinator.transaction.TransactionMetadata;
import org.apache.kafka.coordinator.transaction.TransactionState;
import org.apache.kafka.coordinator.transaction.TxnTransitMetadata;
import org.apache.kafka.server.common.TransactionVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * The transaction coordinator's request logic, run on its event thread only (the single owner of the
 * {@link TransactionStateCache} and of every {@link TransactionMetadata} mutation): looks the transactional id up,
 * applies {@link TransactionDecisions}, writes the transition with {@link TransactionLogWriter}, and completes the
 * transition and the caller's future when the write's outcome comes back as an event. Nothing here waits.
 */
public final class TransactionCoordinator {
    private static final Logger log = LoggerFactory.getLogger(TransactionCoordinator.class);
    static final long COMPLETION_RETRY_MS = 100;

    private final TransactionStateCache cache;
    private final TransactionLogWriter writer;
    private final ProducerIdSource producerIds;
    private final int maxTimeoutMs;
    private final IntSupplier partitionCount;
    private final Supplier<TransactionVersion> finalizedVersion;
    private final MarkerSender markers;
    /** Runs events on the coordinator's thread (a write's or the markers' outcome comes back through it). */
    private final CoordinatorEvents events;
    private final Time time;

    /** How a transaction's markers are sent ({@link TransactionMarkerChannel}). */
    @FunctionalInterface
    public interface MarkerSender {
        CompletableFuture<TransactionMarkerChannel.Outcome> send(TransactionMarkerChannel.Markers markers,
                                                                 Set<TopicPartition> partitions);
    }

    /** The coordinator's event thread: run an event now (after those queued) or after a delay. */
    public interface CoordinatorEvents {
        void run(Runnable event);

        void runAfter(long delayMs, Runnable event);
    }

    public TransactionCoordinator(TransactionStateCache cache, TransactionLogWriter writer, ProducerIdSource producerIds,
                                  int maxTimeoutMs, IntSupplier partitionCount,
                                  Supplier<TransactionVersion> finalizedVersion, MarkerSender markers,
                                  CoordinatorEvents events, Time time) {
        this.cache = cache;
        this.writer = writer;
        this.markers = markers;
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
        } else if (decision instanceof InitDecision.FenceThenAbort fence) {
            // abort the open transaction with the fenced epoch, then have the producer retry (a second bump)
            log.info("InitProducerId of transactional id {} found a transaction open: aborting it with epoch {}",
                    transactionalId, fence.fence().producerEpoch());
            // with the transaction's own version's rules, as Kafka's coordinator aborts it
            endTransaction(transactionalId, fence.fence().producerId(), fence.fence().producerEpoch(),
                    TransactionResult.ABORT, false, txn.clientTransactionVersion(), ended -> result.complete(
                            initError(ended.error() == Errors.NONE ? Errors.CONCURRENT_TRANSACTIONS : ended.error())));
        }
    }

    /**
     * AddPartitionsToTxn from a client (transaction version 0/1), and AddOffsetsToTxn as the group's offsets
     * partition; {@code done} gets the code for every partition.
     */
    public void addPartitions(String transactionalId, long producerId, short producerEpoch,
                              Set<TopicPartition> partitions, TransactionVersion version, Consumer<Errors> done) {
        Optional<TransactionStateCache.Slot> slot = loadedSlot(transactionalId, done);
        if (slot.isEmpty()) {
            return;
        }
        Optional<TransactionMetadata> txn = slot.get().get(transactionalId);
        TxnDecision decision = TransactionDecisions.addPartitions(txn, producerId, producerEpoch, partitions,
                version, time.milliseconds());
        if (decision instanceof TxnDecision.Reply reply) {
            done.accept(reply.error());
        } else if (decision instanceof TxnDecision.Write write) {
            writeTransition(partitionFor(transactionalId), slot.get().coordinatorEpoch(), txn.get(), write.transit(),
                    done);
        }
    }

    /**
     * A partition leader's question whether {@code partitions} are in the producer's open transaction (KIP-890);
     * {@code done} gets each partition's code. Nothing is written.
     */
    public void verifyPartitions(String transactionalId, long producerId, short producerEpoch,
                                 Collection<TopicPartition> partitions, Consumer<Map<TopicPartition, Errors>> done) {
        Optional<TransactionStateCache.Slot> slot = loadedSlot(transactionalId, error -> {
            Map<TopicPartition, Errors> errors = new LinkedHashMap<>();
            partitions.forEach(tp -> errors.put(tp, error));
            done.accept(errors);
        });
        if (slot.isPresent()) {
            done.accept(TransactionDecisions.verifyPartitions(slot.get().get(transactionalId), producerId,
                    producerEpoch, partitions));
        }
    }

    /**
     * The loaded slot of the id's partition; otherwise {@code done} is told why not (INVALID_REQUEST for an empty
     * id, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS).
     */
    private Optional<TransactionStateCache.Slot> loadedSlot(String transactionalId, Consumer<Errors> done) {
        if (transactionalId.isEmpty()) {
            done.accept(Errors.INVALID_REQUEST);
            return Optional.empty();
        }
        TransactionStateCache.Lookup lookup = cache.lookup(partitionFor(transactionalId));
        if (lookup.error() != Errors.NONE) {
            done.accept(lookup.error());
            return Optional.empty();
        }
        return Optional.of(lookup.slot());
    }

    /**
     * EndTxn (with {@code version}'s rules; {@link TransactionDecisions#endTransaction}): the PREPARE_COMMIT or
     * PREPARE_ABORT state is written, {@code done} is told
     * (the producer may go on), and the markers are then written to every partition of the transaction, after which
     * the transaction is COMPLETE. From the coordinator itself ({@code fromClient} false) for a fenced or
     * timed-out transaction, always an abort.
     */
    public void endTransaction(String transactionalId, long producerId, short producerEpoch, TransactionResult result,
                               boolean fromClient, TransactionVersion version, Consumer<EndTxnResult> done) {
        Optional<TransactionStateCache.Slot> slot = loadedSlot(transactionalId,
                error -> done.accept(EndTxnResult.refused(error)));
        if (slot.isEmpty()) {
            return;
        }
        int partition = partitionFor(transactionalId);
        Optional<TransactionMetadata> found = slot.get().get(transactionalId);
        boolean fencing = found.isPresent()
                && found.get().pendingState().equals(Optional.of(TransactionState.PREPARE_EPOCH_FENCE));
        TxnDecision decision = TransactionDecisions.endTransaction(found, producerId, producerEpoch, result,
                fromClient, version, producerIds, time.milliseconds());
        if (decision instanceof TxnDecision.Reply reply) {
            if (fencing) {
                found.get().pendingState(Optional.empty()); // the fence is not written: nothing stays pending
            }
            // a retry answered NONE gets the producer id and epoch it goes on with (transaction version 2)
            done.accept(reply.error() == Errors.NONE ? new EndTxnResult(Errors.NONE, found.get().producerId(),
                    found.get().producerEpoch()) : EndTxnResult.refused(reply.error()));
            return;
        }
        TransactionMetadata txn = found.get();
        int coordinatorEpoch = slot.get().coordinatorEpoch();
        TxnTransitMetadata prepare = ((TxnDecision.Write) decision).transit();
        writeTransition(partition, coordinatorEpoch, txn, prepare, error -> {
            if (error != Errors.NONE) {
                if (fencing) {
                    // the fenced epoch was never handed out: the next fence must not bump past it again
                    txn.hasFailedEpochFence(true);
                }
                log.info("EndTxn ({}) of transactional id {} answered {}", result, transactionalId, error);
                done.accept(EndTxnResult.refused(error));
                return;
            }
            // answered before the markers, as Kafka: with the producer id and epoch the transaction completes with
            TxnTransitMetadata complete = sendMarkers(partition, coordinatorEpoch, txn);
            done.accept(new EndTxnResult(Errors.NONE, complete.producerId(), complete.producerEpoch()));
        });
    }

    /**
     * Completes a transaction in PREPARE_COMMIT or PREPARE_ABORT: its markers to every partition, then the
     * COMPLETE state written. Also what a coordinator does with such a transaction it loaded, whose previous
     * coordinator failed before finishing it.
     */
    private TxnTransitMetadata sendMarkers(int partition, int coordinatorEpoch, TransactionMetadata txn) {
        TransactionResult result = txn.state() == TransactionState.PREPARE_COMMIT ? TransactionResult.COMMIT
                : TransactionResult.ABORT;
        Set<TopicPartition> partitions = Set.copyOf(txn.topicPartitions());
        TxnTransitMetadata complete = txn.prepareComplete(time.milliseconds());
        TransactionMarkerChannel.Markers m = new TransactionMarkerChannel.Markers(txn.transactionalId(),
                txn.producerId(), txn.producerEpoch(), result, coordinatorEpoch,
                txn.clientTransactionVersion().featureLevel());
        CompletableFuture<TransactionMarkerChannel.Outcome> sent;
        try {
            sent = markers.send(m, partitions);
        } catch (RuntimeException e) {
            // broad: whatever the channel throws is a failed send, logged with its stack trace below and retried
            sent = CompletableFuture.failedFuture(e);
        }
        sent.whenComplete((outcome, failure) -> events.run(() -> {
            if (!owns(partition, coordinatorEpoch, txn)) {
                return; // the partition's new coordinator finishes it from the log
            }
            if (failure != null || outcome != TransactionMarkerChannel.Outcome.WRITTEN) {
                // still ours: the periodic check sends the markers again (abortTimedOutTransactions)
                log.error("The {} markers of transactional id {} were not written ({}); sending them again at the "
                        + "next check", result, txn.transactionalId(), failure != null ? failure.toString()
                        : outcome, failure);
                txn.pendingState(Optional.empty());
                return;
            }
            writeCompletion(partition, coordinatorEpoch, txn, complete, 0);
        }));
        return complete;
    }

    /** Writes a transaction's COMPLETE state, again after a backoff while the write fails and the id is owned. */
    private void writeCompletion(int partition, int coordinatorEpoch, TransactionMetadata txn,
                                 TxnTransitMetadata complete, int attempt) {
        writer.write(stateTopicPartition(partition), coordinatorEpoch, txn.transactionalId(), complete,
                        finalizedVersion.get())
                .whenComplete((error, failure) -> events.run(() -> {
                    if (!owns(partition, coordinatorEpoch, txn)) {
                        return;
                    }
                    Errors outcome = failure != null ? Errors.UNKNOWN_SERVER_ERROR : error;
                    if (outcome == Errors.NONE) {
                        txn.completeTransitionTo(complete);
                        log.debug("Transactional id {} completed: {}", txn.transactionalId(), complete.txnState());
                    } else {
                        if (attempt % 50 == 0) {
                            log.warn("Could not write the {} state of transactional id {} ({}); trying again",
                                    complete.txnState(), txn.transactionalId(), outcome);
                        }
                        events.runAfter(COMPLETION_RETRY_MS, () -> {
                            if (owns(partition, coordinatorEpoch, txn)) {
                                writeCompletion(partition, coordinatorEpoch, txn, complete, attempt + 1);
                            }
                        });
                    }
                }));
    }

    /**
     * Forgets transactional ids idle longer than {@code expirationMs} (Kafka's {@code removeExpiredTransactionalIds}):
     * only ids with no transaction open or ending; a tombstone is written (compaction then removes the id from the
     * log) and the id leaves the cache, so its next InitProducerId starts afresh with a new producer id.
     */
    public void expireTransactionalIds(long expirationMs) {
        long now = time.milliseconds();
        for (Map.Entry<Integer, TransactionStateCache.Slot> e : cache.loadedSlots().entrySet()) {
            int partition = e.getKey();
            int coordinatorEpoch = e.getValue().coordinatorEpoch();
            for (TransactionMetadata txn : List.copyOf(e.getValue().transactions())) {
                if (!txn.state().isExpirationAllowed() || txn.pendingTransitionInProgress()
                        || txn.txnLastUpdateTimestamp() + expirationMs > now) {
                    continue;
                }
                txn.prepareDead();
                writer.writeTombstone(stateTopicPartition(partition), coordinatorEpoch, txn.transactionalId())
                        .whenComplete((error, failure) -> events.run(() -> {
                            if (!owns(partition, coordinatorEpoch, txn)) {
                                return;
                            }
                            if (failure == null && error == Errors.NONE) {
                                e.getValue().remove(txn.transactionalId());
                                log.info("Transactional id {} expired: unused for more than {} ms",
                                        txn.transactionalId(), expirationMs);
                            } else {
                                txn.pendingState(Optional.empty()); // the next check tries again
                            }
                        }));
            }
        }
    }

    /** Whether this broker still coordinates {@code txn}, the same metadata object, in {@code coordinatorEpoch}. */
    private boolean owns(int partition, int coordinatorEpoch, TransactionMetadata txn) {
        return cache.stillOwned(partition, coordinatorEpoch)
                .flatMap(slot -> slot.get(txn.transactionalId())).orElse(null) == txn;
    }

    /**
     * A partition just loaded: the transactions its previous coordinator left in PREPARE_COMMIT or PREPARE_ABORT
     * are completed (the client was told, so they must end as decided).
     */
    public void onLoaded(int partition) {
        TransactionStateCache.Lookup lookup = cache.lookup(partition);
        if (lookup.error() != Errors.NONE) {
            return;
        }
        for (TransactionMetadata txn : List.copyOf(lookup.slot().transactions())) {
            if ((txn.state() == TransactionState.PREPARE_COMMIT || txn.state() == TransactionState.PREPARE_ABORT)
                    && !txn.pendingTransitionInProgress()) {
                log.info("Completing transactional id {} left in {} by the previous coordinator",
                        txn.transactionalId(), txn.state());
                sendMarkers(partition, lookup.slot().coordinatorEpoch(), txn);
            }
        }
    }

    /**
     * Aborts every open transaction older than its timeout (Kafka's {@code abortTimedOutTransactions}): its epoch
     * is fenced, so the producer that opened it can neither add to it nor end it, and ABORT markers end it on every
     * partition. Also sends again the markers of a transaction whose markers could not be sent (PREPARE_COMMIT or
     * PREPARE_ABORT with nothing pending).
     */
    public void abortTimedOutTransactions() {
        long now = time.milliseconds();
        for (Map.Entry<Integer, TransactionStateCache.Slot> e : cache.loadedSlots().entrySet()) {
            TransactionStateCache.Slot slot = e.getValue();
            for (TransactionMetadata txn : List.copyOf(slot.transactions())) {
                if ((txn.state() == TransactionState.PREPARE_COMMIT || txn.state() == TransactionState.PREPARE_ABORT)
                        && !txn.pendingTransitionInProgress()) {
                    sendMarkers(e.getKey(), slot.coordinatorEpoch(), txn);
                    continue;
                }
                if (txn.state() != TransactionState.ONGOING || txn.pendingTransitionInProgress()
                        || txn.txnStartTimestamp() + txn.txnTimeoutMs() >= now) {
                    continue;
                }
                TxnTransitMetadata fence;
                try {
                    fence = txn.prepareFenceProducerEpoch();
                } catch (IllegalStateException exhausted) {
                    log.warn("Cannot fence the timed-out transaction of transactional id {}: {}",
                            txn.transactionalId(), exhausted.getMessage());
                    continue;
                }
                log.info("Aborting the transaction of transactional id {} (producer {}): open {} ms, beyond its "
                        + "timeout of {} ms", txn.transactionalId(), txn.producerId(), now - txn.txnStartTimestamp(),
                        txn.txnTimeoutMs());
                endTransaction(txn.transactionalId(), fence.producerId(), fence.producerEpoch(),
                        TransactionResult.ABORT, false, txn.clientTransactionVersion(), ended -> {
                            if (ended.error() != Errors.NONE) {
                                log.info("Could not abort the timed-out transaction of {} ({}); the next check "
                                        + "tries again", txn.transactionalId(), ended.error());
                            }
                        });
            }
        }
    }

    /**
     * Writes {@code transit} for {@code txn}; when the write's outcome comes back (as an event), completes the
     * transition if this broker still coordinates the partition in the same epoch, or clears the pending state if
     * the write failed, then calls {@code done} with the error the client gets.
     */
    private void writeTransition(int partition, int coordinatorEpoch, TransactionMetadata txn,
                                 TxnTransitMetadata transit, Consumer<Errors> done) {
        writer.write(stateTopicPartition(partition), coordinatorEpoch, txn.transactionalId(), transit,
                        finalizedVersion.get())
                .whenComplete((error, failure) -> events.run(() -> {
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
                        txn.pendingState(Optional.empty());
                    }
                    done.accept(outcome);
                }));
    }

    private static InitProducerIdResult initError(Errors error) {
        return new InitProducerIdResult(RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH, error);
    }
}
