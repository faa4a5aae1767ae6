package io.twinlog.mirror.runtime;

import org.apache.kafka.common.TopicPartition;

/**
 * Why a partition's pass stops before the driver is done, each the worker's to catch: none of them is a failure,
 * the partition goes on at a later pass. Without stack traces, as they are control flow.
 */
final class PassStops {
    private PassStops() {
    }

    /** A deferred write of this pass was refused: the partition's pass stops, the next one re-reads the record. */
    static final class ConcurrentRecordChange extends Exception {
        ConcurrentRecordChange(TopicPartition tp) {
            super("the state record of " + tp + " changed concurrently", null, false, false);
        }
    }

    /**
     * An action must follow the partition's record, which waits for the others of the pass: its pass stops here, and
     * the follow-up pass after the records are written (see {@code MirrorManager#passOver}) runs the action.
     */
    static final class WriteFirst extends Exception {
        WriteFirst(TopicPartition tp) {
            super("the record of " + tp + " is written before its next action", null, false, false);
        }
    }

    /** The partition's barrier is queued for the end of the pass ({@link FailoverBarriers}): its pass stops here. */
    static final class FailoverStepsQueued extends Exception {
        FailoverStepsQueued(TopicPartition tp) {
            super("the failover steps of " + tp + " are queued", null, false, false);
        }
    }
}
