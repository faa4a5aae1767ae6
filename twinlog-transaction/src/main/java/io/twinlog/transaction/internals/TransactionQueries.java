package io.twinlog.transaction.internals;

import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.transaction.TransactionMetadata;
import org.apache.kafka.coordinator.transaction.TransactionState;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntSupplier;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The transaction coordinator's read-only answers, DescribeTransactions and ListTransactions, built from the
 * {@link TransactionStateCache} as it stands. Run on the coordinator's event thread, like every reader of the cache
 * (it is not thread-safe); changes nothing. Split from {@link TransactionCoordinator}, which keeps the requests
 * that write.
 */
public final class TransactionQueries {
    private final TransactionStateCache cache;
    private final IntSupplier partitionCount;
    private final Time time;

    public TransactionQueries(TransactionStateCache cache, IntSupplier partitionCount, Time time) {
        this.cache = cache;
        this.partitionCount = partitionCount;
        this.time = time;
    }

    /** DescribeTransactions of one id (Kafka's {@code handleDescribeTransactions}); topics unfiltered. */
    public DescribeTransactionsResponseData.TransactionState describe(String transactionalId) {
        DescribeTransactionsResponseData.TransactionState state = new DescribeTransactionsResponseData
                .TransactionState().setTransactionalId(transactionalId);
        TransactionStateCache.Lookup lookup = cache.lookup(
                TransactionCoordinator.partitionFor(transactionalId, partitionCount.getAsInt()));
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
