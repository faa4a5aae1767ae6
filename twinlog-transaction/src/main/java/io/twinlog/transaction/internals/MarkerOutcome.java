package io.twinlog.transaction.internals;

import org.apache.kafka.common.protocol.Errors;

/**
 * What the coordinator does with one partition's answer to a transaction marker: the partition is done, or its
 * marker is sent again (after looking the leader up again). Kafka gives up a transaction's markers altogether on
 * INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED and leaves it pending until its partition of
 * {@code __transaction_state} moves; Twinlog treats the first as done for that partition and retries the second
 * while it still owns the transaction, so one partition's answer never strands the transactional id (decision 89).
 */
public enum MarkerOutcome {
    /**
     * Written, or never needed: the topic is gone; a mirror partition whose source ends its transactions; or a
     * partition that already has a newer epoch of the producer (at transaction version 0/1 a newer epoch reaches a
     * partition only after the older transaction there was ended).
     */
    DONE,
    /**
     * Not written yet: the leader moved, too few replicas, a timeout, a dropped connection, or a partition that has
     * seen a newer coordinator epoch (the channel stops once this broker no longer owns the transaction).
     */
    RETRY;

    /** @param topicExists whether the partition's topic is still in the metadata image */
    public static MarkerOutcome of(Errors error, boolean topicExists) {
        return switch (error) {
            case NONE -> DONE;
            // the topic was deleted: nothing to end there (Kafka's rule)
            case UNKNOWN_TOPIC_OR_PARTITION -> topicExists ? RETRY : DONE;
            // a partition that does not keep transactions of this producer format, or a mirror partition not
            // failed over: its transactions are ended by its source's coordinator (decision 86)
            case UNSUPPORTED_FOR_MESSAGE_FORMAT, UNSUPPORTED_VERSION, POLICY_VIOLATION -> DONE;
            case INVALID_PRODUCER_EPOCH -> DONE;
            default -> RETRY;
        };
    }
}
