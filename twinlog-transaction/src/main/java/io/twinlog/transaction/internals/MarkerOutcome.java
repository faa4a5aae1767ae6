package io.twinlog.transaction.internals;

import org.apache.kafka.common.protocol.Errors;

/**
 * What the coordinator does with one partition's answer to a transaction marker (Kafka's marker completion rules):
 * the marker is written, to be sent again (after looking the leader up again), or to be given up because a newer
 * coordinator or producer epoch owns the transaction now.
 */
public enum MarkerOutcome {
    /** Written, or never needed (the topic is gone, or a mirror partition whose source ends its transactions). */
    DONE,
    /** Not written yet: the leader moved, too few replicas, a timeout, a dropped connection. */
    RETRY,
    /** A newer coordinator (epoch) or producer epoch owns the transaction: its markers are that one's to send. */
    ABANDON;

    /** @param topicExists whether the partition's topic is still in the metadata image */
    public static MarkerOutcome of(Errors error, boolean topicExists) {
        return switch (error) {
            case NONE -> DONE;
            // the topic was deleted: nothing to end there (Kafka's rule)
            case UNKNOWN_TOPIC_OR_PARTITION -> topicExists ? RETRY : DONE;
            // a partition that does not keep transactions of this producer format, or a mirror partition not
            // failed over: its transactions are ended by its source's coordinator (decision 86)
            case UNSUPPORTED_FOR_MESSAGE_FORMAT, UNSUPPORTED_VERSION, POLICY_VIOLATION -> DONE;
            case INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED -> ABANDON;
            default -> RETRY;
        };
    }
}
