package io.twinlog.transaction.internals;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.message.ListTransactionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.MockTime;
import org.apache.kafka.coordinator.transaction.TransactionMetadata;
import org.apache.kafka.coordinator.transaction.TransactionState;
import org.apache.kafka.server.common.TransactionVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** DescribeTransactions and ListTransactions answered from the cache, one rule per test. */
@Timeout(10)
class TransactionQueriesTest {
    private static final int PARTITIONS = 1;
    private static final long NOW = 1_000_000;

    private final MockTime time = new MockTime(0, NOW, 0);
    private final TransactionStateCache cache = new TransactionStateCache();
    private final TransactionQueries queries = new TransactionQueries(cache, () -> PARTITIONS, time);

    private static TransactionMetadata txn(String id, long producerId, TransactionState state, long startMs,
                                           Set<TopicPartition> partitions) {
        return new TransactionMetadata(id, producerId, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_ID,
                (short) 3, RecordBatch.NO_PRODUCER_EPOCH, 60_000, state, new HashSet<>(partitions), startMs,
                startMs, TransactionVersion.TV_0);
    }

    private void load(TransactionMetadata... transactions) {
        cache.elect(0, 7);
        Map<String, TransactionMetadata> loaded = new HashMap<>();
        for (TransactionMetadata txn : transactions) {
            loaded.put(txn.transactionalId(), txn);
        }
        cache.loaded(0, 7, loaded);
    }

    @Test
    void describeGroupsPartitionsByTopicInOrder() {
        load(txn("app", 42, TransactionState.ONGOING, NOW - 10, Set.of(new TopicPartition("b", 1),
                new TopicPartition("a", 2), new TopicPartition("a", 0))));
        DescribeTransactionsResponseData.TransactionState state = queries.describe("app");
        assertEquals(Errors.NONE.code(), state.errorCode());
        assertEquals("Ongoing", state.transactionState());
        assertEquals(42, state.producerId());
        assertEquals(3, state.producerEpoch());
        assertEquals(NOW - 10, state.transactionStartTimeMs());
        assertEquals(List.of("a", "b"), state.topics().stream().map(t -> t.topic()).toList());
        assertEquals(List.of(0, 2), state.topics().find("a").partitions());
    }

    @Test
    void describeOfAnUnknownOrDeadIdIsNotFound() {
        load(txn("dead", 1, TransactionState.DEAD, -1, Set.of()));
        assertEquals(Errors.TRANSACTIONAL_ID_NOT_FOUND.code(), queries.describe("dead").errorCode());
        assertEquals(Errors.TRANSACTIONAL_ID_NOT_FOUND.code(), queries.describe("other").errorCode());
    }

    @Test
    void describeWhileLoadingOrNotLedAnswersTheLookupError() {
        assertEquals(Errors.NOT_COORDINATOR.code(), queries.describe("app").errorCode());
        cache.elect(0, 7);
        assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS.code(), queries.describe("app").errorCode());
    }

    @Test
    void listWhileAPartitionLoadsIsRefused() {
        cache.elect(0, 7);
        assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS.code(), queries.list(Set.of(), Set.of(), -1, null).errorCode());
    }

    @Test
    void listFiltersByStateProducerDurationAndPattern() {
        load(txn("app-1", 1, TransactionState.ONGOING, NOW - 5_000, Set.of()),
                txn("app-2", 2, TransactionState.EMPTY, NOW - 10, Set.of()),
                txn("other", 3, TransactionState.ONGOING, NOW - 10, Set.of()),
                txn("gone", 4, TransactionState.DEAD, NOW - 10, Set.of()));
        assertEquals(Set.of("app-1", "app-2", "other"), ids(queries.list(Set.of(), Set.of(), -1, null)));
        assertEquals(Set.of("app-1", "other"), ids(queries.list(Set.of("Ongoing"), Set.of(), -1, null)));
        assertEquals(Set.of("app-2"), ids(queries.list(Set.of(), Set.of(2L), -1, "")));
        assertEquals(Set.of("app-1"), ids(queries.list(Set.of(), Set.of(), 1_000, null)));
        assertEquals(Set.of("app-1", "app-2"), ids(queries.list(Set.of(), Set.of(), -1, "app-.*")));
    }

    @Test
    void unknownStatesAreReportedAndOnlyUnknownMatchesNothing() {
        load(txn("app", 1, TransactionState.ONGOING, NOW - 10, Set.of()));
        ListTransactionsResponseData onlyUnknown = queries.list(Set.of("Nope"), Set.of(), -1, null);
        assertEquals(List.of("Nope"), onlyUnknown.unknownStateFilters());
        assertEquals(Set.of(), ids(onlyUnknown));
        ListTransactionsResponseData mixed = queries.list(Set.of("Nope", "Ongoing"), Set.of(), -1, null);
        assertEquals(List.of("Nope"), mixed.unknownStateFilters());
        assertEquals(Set.of("app"), ids(mixed));
    }

    @Test
    void anInvalidPatternIsAnError() {
        load();
        assertEquals(Errors.INVALID_REGULAR_EXPRESSION.code(), queries.list(Set.of(), Set.of(), -1, "(").errorCode());
    }

    private static Set<String> ids(ListTransactionsResponseData response) {
        Set<String> ids = new HashSet<>();
        response.transactionStates().forEach(s -> ids.add(s.transactionalId()));
        return ids;
    }
}
