package io.twinlog.transaction.internals;

import io.twinlog.transaction.ExpectedProducer;
import io.twinlog.transaction.ProducerIdSource;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.TransactionResult;
import org.apache.kafka.coordinator.transaction.TransactionMetadata;
import org.apache.kafka.coordinator.transaction.TransactionState;
import org.apache.kafka.server.common.TransactionVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The coordinator's rules (InitProducerId, AddPartitionsToTxn, EndTxn, KIP-890's verification), one rule per test,
 * over Kafka's own TransactionMetadata.
 */
@Timeout(10)
class TransactionDecisionsTest {
    private static final long NOW = 1_000_000L;
    private static final long PID = 4_000L;
    private static final ProducerIdSource NEXT_ID = () -> OptionalLong.of(9_000L);
    private static final ProducerIdSource NO_ID_READY = OptionalLong::empty;

    private static TransactionMetadata txn(TransactionState state, short epoch, short lastEpoch) {
        Set<TopicPartition> partitions = state == TransactionState.ONGOING
                ? new HashSet<>(Set.of(new TopicPartition("t", 0))) : new HashSet<>();
        return new TransactionMetadata("app", PID, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_ID, epoch,
                lastEpoch, 60_000, state, partitions, state == TransactionState.ONGOING ? NOW - 10 : -1L, NOW - 10,
                TransactionVersion.TV_0);
    }

    private static TransactionMetadata fresh() {
        return txn(TransactionState.EMPTY, RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_PRODUCER_EPOCH);
    }

    private static InitDecision init(TransactionMetadata txn, Optional<ExpectedProducer> expected) {
        return TransactionDecisions.initProducerId(txn, 30_000, expected, NEXT_ID, NOW);
    }

    @Test
    void anEmptyIdOrATimeoutAboveTheMaximumIsRefusedBeforeLookup() {
        assertEquals(Optional.of(Errors.INVALID_REQUEST), TransactionDecisions.checkInit("", 1_000, 900_000));
        assertEquals(Optional.of(Errors.INVALID_TRANSACTION_TIMEOUT),
                TransactionDecisions.checkInit("app", 900_001, 900_000));
        assertEquals(Optional.of(Errors.INVALID_TRANSACTION_TIMEOUT), TransactionDecisions.checkInit("app", 0, 900_000));
        assertEquals(Optional.empty(), TransactionDecisions.checkInit("app", 900_000, 900_000));
    }

    @Test
    void aNewIdGetsEpochZeroWithTheRequestedTimeout() {
        TransactionMetadata txn = fresh();
        InitDecision.Write write = assertInstanceOf(InitDecision.Write.class, init(txn, Optional.empty()));
        assertEquals(PID, write.transit().producerId());
        assertEquals(0, write.transit().producerEpoch());
        assertEquals(30_000, write.transit().txnTimeoutMs());
        assertEquals(TransactionState.EMPTY, write.transit().txnState());
        assertEquals(Optional.of(TransactionState.EMPTY), txn.pendingState(), "pending until written");
    }

    @Test
    void aKnownIdGetsItsEpochBumpedWhichFencesTheOlderProducer() {
        for (TransactionState state : Set.of(TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT,
                TransactionState.COMPLETE_ABORT)) {
            InitDecision.Write write = assertInstanceOf(InitDecision.Write.class,
                    init(txn(state, (short) 4, (short) 3), Optional.empty()), state.name());
            assertEquals(5, write.transit().producerEpoch(), state.name());
            assertEquals(PID, write.transit().producerId(), state.name());
        }
    }

    @Test
    void aProducerRetryingWithItsCurrentEpochIsBumpedAndOneWithTheLastEpochGetsTheSameEpochBack() {
        InitDecision.Write current = assertInstanceOf(InitDecision.Write.class,
                init(txn(TransactionState.EMPTY, (short) 4, (short) 3), Optional.of(new ExpectedProducer(PID, (short) 4))));
        assertEquals(5, current.transit().producerEpoch());
        assertEquals(4, current.transit().lastProducerEpoch());
        InitDecision.Write retry = assertInstanceOf(InitDecision.Write.class,
                init(txn(TransactionState.EMPTY, (short) 4, (short) 3), Optional.of(new ExpectedProducer(PID, (short) 3))));
        assertEquals(4, retry.transit().producerEpoch(), "a retry of a bump whose answer was lost");
    }

    @Test
    void aProducerWithAnOlderEpochOrAnotherProducerIdIsFenced() {
        TransactionMetadata txn = txn(TransactionState.EMPTY, (short) 4, (short) 3);
        assertEquals(new InitDecision.Fail(Errors.PRODUCER_FENCED),
                init(txn, Optional.of(new ExpectedProducer(PID, (short) 1))));
        assertFalse(txn.pendingTransitionInProgress(), "nothing pending after a refusal");
        assertEquals(new InitDecision.Fail(Errors.PRODUCER_FENCED),
                init(txn, Optional.of(new ExpectedProducer(PID + 1, (short) 4))));
    }

    @Test
    void anExhaustedEpochRotatesToANewProducerId() {
        short exhausted = (short) (Short.MAX_VALUE - 1);
        InitDecision.Write write = assertInstanceOf(InitDecision.Write.class,
                init(txn(TransactionState.COMPLETE_COMMIT, exhausted, (short) 3), Optional.empty()));
        assertEquals(9_000L, write.transit().producerId());
        assertEquals(0, write.transit().producerEpoch());
        assertEquals(new InitDecision.Fail(Errors.COORDINATOR_LOAD_IN_PROGRESS), TransactionDecisions.initProducerId(
                txn(TransactionState.COMPLETE_COMMIT, exhausted, (short) 3), 30_000, Optional.empty(), NO_ID_READY,
                NOW), "no producer id ready yet: retriable");
    }

    @Test
    void aTransitionInFlightOrATransactionBeingCompletedIsConcurrent() {
        TransactionMetadata txn = fresh();
        assertInstanceOf(InitDecision.Write.class, init(txn, Optional.empty()));
        assertEquals(new InitDecision.Fail(Errors.CONCURRENT_TRANSACTIONS), init(txn, Optional.empty()));
        for (TransactionState state : Set.of(TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)) {
            assertEquals(new InitDecision.Fail(Errors.CONCURRENT_TRANSACTIONS),
                    init(txn(state, (short) 2, (short) 1), Optional.empty()), state.name());
        }
    }

    @Test
    void anOpenTransactionIsFencedWithTheNextEpochBeforeItIsAborted() {
        TransactionMetadata txn = txn(TransactionState.ONGOING, (short) 2, (short) 1);
        InitDecision.FenceThenAbort fence = assertInstanceOf(InitDecision.FenceThenAbort.class,
                init(txn, Optional.empty()));
        assertEquals(3, fence.fence().producerEpoch());
        assertEquals(TransactionState.PREPARE_EPOCH_FENCE, fence.fence().txnState());
        assertTrue(txn.pendingTransitionInProgress());
    }

    private static final Set<TopicPartition> T0 = Set.of(new TopicPartition("t", 0));

    @Test
    void addingPartitionsNeedsTheIdsProducerAndEpochAndNoEndUnderWay() {
        TransactionMetadata txn = txn(TransactionState.EMPTY, (short) 2, (short) 1);
        assertEquals(new TxnDecision.Reply(Errors.INVALID_PRODUCER_ID_MAPPING), TransactionDecisions.addPartitions(
                Optional.empty(), PID, (short) 2, T0, TransactionVersion.TV_0, NOW), "unknown id");
        assertEquals(new TxnDecision.Reply(Errors.INVALID_PRODUCER_ID_MAPPING), TransactionDecisions.addPartitions(
                Optional.of(txn), PID + 1, (short) 2, T0, TransactionVersion.TV_0, NOW));
        assertEquals(new TxnDecision.Reply(Errors.PRODUCER_FENCED), TransactionDecisions.addPartitions(
                Optional.of(txn), PID, (short) 1, T0, TransactionVersion.TV_0, NOW));
        for (TransactionState ending : Set.of(TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)) {
            assertEquals(new TxnDecision.Reply(Errors.CONCURRENT_TRANSACTIONS), TransactionDecisions.addPartitions(
                    Optional.of(txn(ending, (short) 2, (short) 1)), PID, (short) 2, T0, TransactionVersion.TV_0,
                    NOW), ending.name());
        }
        TxnDecision.Write write = assertInstanceOf(TxnDecision.Write.class, TransactionDecisions.addPartitions(
                Optional.of(txn), PID, (short) 2, T0, TransactionVersion.TV_0, NOW));
        assertEquals(TransactionState.ONGOING, write.transit().txnState());
        assertEquals(NOW, write.transit().txnStartTimestamp(), "the transaction starts with its first partition");
        assertEquals(new TxnDecision.Reply(Errors.CONCURRENT_TRANSACTIONS), TransactionDecisions.addPartitions(
                Optional.of(txn), PID, (short) 2, T0, TransactionVersion.TV_0, NOW), "while it is written");
    }

    @Test
    void partitionsAlreadyInTheOpenTransactionNeedNoWrite() {
        assertEquals(new TxnDecision.Reply(Errors.NONE), TransactionDecisions.addPartitions(
                Optional.of(txn(TransactionState.ONGOING, (short) 2, (short) 1)), PID, (short) 2, T0,
                TransactionVersion.TV_0, NOW));
    }

    @Test
    void endingAnOpenTransactionPreparesItAndRetriesOfAnEndAreAnsweredAsKafkaAnswersThem() {
        TxnDecision.Write commit = assertInstanceOf(TxnDecision.Write.class, TransactionDecisions.endTransaction(
                Optional.of(txn(TransactionState.ONGOING, (short) 2, (short) 1)), PID, (short) 2,
                TransactionResult.COMMIT, true, TransactionVersion.TV_0, NEXT_ID, NOW));
        assertEquals(TransactionState.PREPARE_COMMIT, commit.transit().txnState());
        assertEquals(2, commit.transit().producerEpoch(), "no epoch bump before transaction version 2");
        assertEquals(new TxnDecision.Reply(Errors.NONE), end(TransactionState.COMPLETE_COMMIT, TransactionResult.COMMIT));
        assertEquals(new TxnDecision.Reply(Errors.INVALID_TXN_STATE),
                end(TransactionState.COMPLETE_COMMIT, TransactionResult.ABORT));
        assertEquals(new TxnDecision.Reply(Errors.NONE), end(TransactionState.COMPLETE_ABORT, TransactionResult.ABORT));
        assertEquals(new TxnDecision.Reply(Errors.CONCURRENT_TRANSACTIONS),
                end(TransactionState.PREPARE_COMMIT, TransactionResult.COMMIT));
        assertEquals(new TxnDecision.Reply(Errors.INVALID_TXN_STATE),
                end(TransactionState.PREPARE_ABORT, TransactionResult.COMMIT));
        assertEquals(new TxnDecision.Reply(Errors.INVALID_TXN_STATE), end(TransactionState.EMPTY,
                TransactionResult.COMMIT), "nothing open to end");
    }

    @Test
    void aClientEndingWithAnotherEpochIsFencedAndTheCoordinatorsFenceBecomesTheAbortsEpoch() {
        assertEquals(new TxnDecision.Reply(Errors.PRODUCER_FENCED), TransactionDecisions.endTransaction(
                Optional.of(txn(TransactionState.ONGOING, (short) 2, (short) 1)), PID, (short) 1,
                TransactionResult.COMMIT, true, TransactionVersion.TV_0, NEXT_ID, NOW));
        TransactionMetadata open = txn(TransactionState.ONGOING, (short) 2, (short) 1);
        short fenced = open.prepareFenceProducerEpoch().producerEpoch();
        TxnDecision.Write abort = assertInstanceOf(TxnDecision.Write.class, TransactionDecisions.endTransaction(
                Optional.of(open), PID, fenced, TransactionResult.ABORT, false, TransactionVersion.TV_1, NEXT_ID, NOW));
        assertEquals(TransactionState.PREPARE_ABORT, abort.transit().txnState());
        assertEquals(3, abort.transit().producerEpoch());
        assertEquals(Optional.of(TransactionState.PREPARE_ABORT), open.pendingState());
    }

    private static TxnDecision end(TransactionState state, TransactionResult result) {
        return TransactionDecisions.endTransaction(Optional.of(txn(state, (short) 2, (short) 1)), PID, (short) 2,
                result, true, TransactionVersion.TV_0, NEXT_ID, NOW);
    }

    @Test
    void verificationAnswersPerPartitionWhetherTheOpenTransactionHasIt() {
        TopicPartition added = new TopicPartition("t", 0);
        TopicPartition notAdded = new TopicPartition("t", 1);
        TransactionMetadata ongoing = txn(TransactionState.ONGOING, (short) 4, (short) 3);
        assertEquals(Map.of(added, Errors.NONE, notAdded, Errors.TRANSACTION_ABORTABLE),
                TransactionDecisions.verifyPartitions(Optional.of(ongoing), PID, (short) 4, Set.of(added, notAdded)));
        assertEquals(Optional.empty(), ongoing.pendingState(), "a verification writes nothing");
        // a late write after the transaction ended: its partitions are not in any open transaction
        assertEquals(Map.of(added, Errors.TRANSACTION_ABORTABLE), TransactionDecisions.verifyPartitions(
                Optional.of(txn(TransactionState.COMPLETE_ABORT, (short) 4, (short) 3)), PID, (short) 4,
                Set.of(added)));
    }

    @Test
    void verificationRefusesEveryPartitionOfAnUnknownFencedOrEndingProducer() {
        TopicPartition tp = new TopicPartition("t", 0);
        assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, TransactionDecisions.verifyPartitions(Optional.empty(), PID,
                (short) 0, Set.of(tp)).get(tp));
        TransactionMetadata ongoing = txn(TransactionState.ONGOING, (short) 4, (short) 3);
        assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, TransactionDecisions.verifyPartitions(Optional.of(ongoing),
                PID + 1, (short) 4, Set.of(tp)).get(tp));
        assertEquals(Errors.PRODUCER_FENCED, TransactionDecisions.verifyPartitions(Optional.of(ongoing), PID,
                (short) 3, Set.of(tp)).get(tp));
        for (TransactionState ending : Set.of(TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)) {
            assertEquals(Errors.CONCURRENT_TRANSACTIONS, TransactionDecisions.verifyPartitions(Optional.of(
                    txn(ending, (short) 4, (short) 3)), PID, (short) 4, Set.of(tp)).get(tp), ending.name());
        }
    }

    // ---- transaction version 2 (EndTxn v5): the epoch is bumped by every end ----

    /** An end at transaction version 2 of a transaction of epoch 2 by a producer with {@code epoch}. */
    private static TxnDecision endV2(TransactionMetadata txn, short epoch, TransactionResult result) {
        return TransactionDecisions.endTransaction(Optional.of(txn), PID, epoch, result, true, TransactionVersion.TV_2,
                NEXT_ID, NOW);
    }

    private static TransactionMetadata v2(TransactionState state) {
        return txn(state, (short) 2, (short) 1);
    }

    @Test
    void atVersion2EveryEndBumpsTheEpoch() {
        for (TransactionResult result : TransactionResult.values()) {
            TxnDecision.Write write = assertInstanceOf(TxnDecision.Write.class,
                    endV2(v2(TransactionState.ONGOING), (short) 2, result), result.name());
            assertEquals(3, write.transit().producerEpoch(), result.name());
            assertEquals(result == TransactionResult.COMMIT ? TransactionState.PREPARE_COMMIT
                    : TransactionState.PREPARE_ABORT, write.transit().txnState());
        }
        // an abort with nothing open is written too: it bumps the epoch, fencing whatever the producer sent before
        for (TransactionState idle : Set.of(TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT,
                TransactionState.COMPLETE_ABORT)) {
            TxnDecision.Write write = assertInstanceOf(TxnDecision.Write.class,
                    endV2(v2(idle), (short) 2, TransactionResult.ABORT), idle.name());
            assertEquals(3, write.transit().producerEpoch(), idle.name());
        }
    }

    @Test
    void atVersion2ARetryIsRecognizedByTheEpochOneBelow() {
        // the end was written and its answer lost: the id's epoch is already one above the producer's
        assertEquals(new TxnDecision.Reply(Errors.NONE), endV2(v2(TransactionState.COMPLETE_COMMIT), (short) 1,
                TransactionResult.COMMIT));
        assertEquals(new TxnDecision.Reply(Errors.NONE), endV2(v2(TransactionState.COMPLETE_ABORT), (short) 1,
                TransactionResult.ABORT));
        assertEquals(new TxnDecision.Reply(Errors.INVALID_TXN_STATE), endV2(v2(TransactionState.COMPLETE_COMMIT),
                (short) 1, TransactionResult.ABORT));
        assertEquals(new TxnDecision.Reply(Errors.INVALID_TXN_STATE), endV2(v2(TransactionState.COMPLETE_ABORT),
                (short) 1, TransactionResult.COMMIT));
        assertEquals(new TxnDecision.Reply(Errors.CONCURRENT_TRANSACTIONS), endV2(v2(TransactionState.PREPARE_COMMIT),
                (short) 1, TransactionResult.COMMIT));
        assertEquals(new TxnDecision.Reply(Errors.INVALID_TXN_STATE), endV2(v2(TransactionState.PREPARE_ABORT),
                (short) 1, TransactionResult.COMMIT));
        // the same epoch means the next transaction never started: committing it is not a retry
        assertEquals(new TxnDecision.Reply(Errors.INVALID_TXN_STATE), endV2(v2(TransactionState.COMPLETE_COMMIT),
                (short) 2, TransactionResult.COMMIT));
        assertEquals(new TxnDecision.Reply(Errors.INVALID_TXN_STATE), endV2(v2(TransactionState.EMPTY), (short) 2,
                TransactionResult.COMMIT));
    }

    @Test
    void atVersion2AnyOtherEpochIsFenced() {
        assertEquals(new TxnDecision.Reply(Errors.PRODUCER_FENCED), endV2(v2(TransactionState.ONGOING), (short) 1,
                TransactionResult.COMMIT), "a retry needs an ended transaction");
        assertEquals(new TxnDecision.Reply(Errors.PRODUCER_FENCED), endV2(v2(TransactionState.EMPTY), (short) 1,
                TransactionResult.ABORT));
        assertEquals(new TxnDecision.Reply(Errors.PRODUCER_FENCED), endV2(v2(TransactionState.PREPARE_COMMIT),
                (short) 2, TransactionResult.COMMIT), "PREPARE accepts only retries");
        assertEquals(new TxnDecision.Reply(Errors.PRODUCER_FENCED), endV2(v2(TransactionState.COMPLETE_ABORT),
                (short) 0, TransactionResult.ABORT));
        assertEquals(new TxnDecision.Reply(Errors.INVALID_PRODUCER_ID_MAPPING), TransactionDecisions.endTransaction(
                Optional.of(v2(TransactionState.ONGOING)), PID + 1, (short) 2, TransactionResult.COMMIT, true,
                TransactionVersion.TV_2, NEXT_ID, NOW));
    }

    @Test
    void atVersion2AnExhaustedEpochEndsWithANewProducerId() {
        TransactionMetadata exhausted = txn(TransactionState.ONGOING, (short) (Short.MAX_VALUE - 1), (short) 1);
        TxnDecision.Write write = assertInstanceOf(TxnDecision.Write.class, endV2(exhausted,
                (short) (Short.MAX_VALUE - 1), TransactionResult.COMMIT));
        assertEquals(9_000L, write.transit().nextProducerId());
        assertEquals(new TxnDecision.Reply(Errors.COORDINATOR_LOAD_IN_PROGRESS), TransactionDecisions.endTransaction(
                Optional.of(txn(TransactionState.ONGOING, (short) (Short.MAX_VALUE - 1), (short) 1)), PID,
                (short) (Short.MAX_VALUE - 1), TransactionResult.COMMIT, true, TransactionVersion.TV_2, NO_ID_READY,
                NOW), "no producer id ready yet: retriable");
    }

    @Test
    void atVersion2TheCoordinatorsFenceIsBumpedOnceByTheAbort() {
        TransactionMetadata open = v2(TransactionState.ONGOING);
        short fenced = open.prepareFenceProducerEpoch().producerEpoch();
        TxnDecision.Write abort = assertInstanceOf(TxnDecision.Write.class, TransactionDecisions.endTransaction(
                Optional.of(open), PID, fenced, TransactionResult.ABORT, false, TransactionVersion.TV_2, NEXT_ID,
                NOW));
        assertEquals(TransactionState.PREPARE_ABORT, abort.transit().txnState());
        assertEquals(fenced, abort.transit().producerEpoch(), "the fence's epoch, not one above it");
    }
}
