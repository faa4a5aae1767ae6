package io.twinlog.transaction.internals;

import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Each partition's answer to a marker (decision 89). */
@Timeout(10)
class MarkerOutcomeTest {
    @Test
    void writtenOrNotNeededIsDone() {
        assertEquals(MarkerOutcome.DONE, MarkerOutcome.of(Errors.NONE, true));
        assertEquals(MarkerOutcome.DONE, MarkerOutcome.of(Errors.UNKNOWN_TOPIC_OR_PARTITION, false), "topic deleted");
        assertEquals(MarkerOutcome.DONE, MarkerOutcome.of(Errors.POLICY_VIOLATION, true), "mirror partition");
        assertEquals(MarkerOutcome.DONE, MarkerOutcome.of(Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT, true));
    }

    @Test
    void aNewerProducerEpochIsDoneForThatPartitionAndANewerCoordinatorEpochIsRetriedWhileOwned() {
        assertEquals(MarkerOutcome.DONE, MarkerOutcome.of(Errors.INVALID_PRODUCER_EPOCH, true),
                "the partition already ended the older epoch's transaction");
        assertEquals(MarkerOutcome.RETRY, MarkerOutcome.of(Errors.TRANSACTION_COORDINATOR_FENCED, true),
                "the channel stops once this broker no longer owns the transaction");
    }

    @Test
    void everythingElseIsSentAgain() {
        for (Errors error : new Errors[] {Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_ENOUGH_REPLICAS,
                Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.REQUEST_TIMED_OUT, Errors.KAFKA_STORAGE_ERROR,
                Errors.UNKNOWN_SERVER_ERROR, Errors.CLUSTER_AUTHORIZATION_FAILED}) {
            assertEquals(MarkerOutcome.RETRY, MarkerOutcome.of(error, true), error.name());
        }
        assertEquals(MarkerOutcome.RETRY, MarkerOutcome.of(Errors.UNKNOWN_TOPIC_OR_PARTITION, true),
                "the topic exists: its leader is not known yet");
    }
}
