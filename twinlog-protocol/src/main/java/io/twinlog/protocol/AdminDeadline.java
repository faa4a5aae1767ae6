package io.twinlog.protocol;

import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.ElectLeadersRequest;

import java.util.concurrent.TimeUnit;

/**
 * When a queued admin request stops being worth executing: once its client has given up on it. That is the
 * request's own {@code timeoutMs} where it has one (CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders,
 * AlterPartitionReassignments, DeleteRecords: Kafka's admin client sends the time left of its call), and
 * {@value #DEFAULT_TIMEOUT_MS} ms otherwise (kafka-clients' default {@code request.timeout.ms}; AlterConfigs,
 * IncrementalAlterConfigs, ACL and SCRAM changes, the mirror APIs carry no timeout). A request an admin thread takes
 * after its deadline is answered REQUEST_TIMED_OUT and not executed: its client answered its caller long ago, and
 * a topic created or deleted minutes after the operator was told it timed out is a surprise at best.
 */
public record AdminDeadline(long receivedNanos, int timeoutMs) {
    /** kafka-clients' default {@code request.timeout.ms}, for requests without a timeout of their own. */
    public static final int DEFAULT_TIMEOUT_MS = 30_000;

    /** The deadline of a request read from a client connection (Kafka or Twinlog API). */
    public static AdminDeadline of(Request request) {
        return new AdminDeadline(request.receivedNanos(), request.isCustom() ? DEFAULT_TIMEOUT_MS
                : ownTimeoutMs(request));
    }

    /** The request's own timeout where it has one and it is positive (0: "do not wait", not "expire at once"). */
    private static int ownTimeoutMs(Request request) {
        int own = switch (request.apiKey()) {
            case CREATE_TOPICS -> ((CreateTopicsRequest) request.body()).data().timeoutMs();
            case DELETE_TOPICS -> ((DeleteTopicsRequest) request.body()).data().timeoutMs();
            case CREATE_PARTITIONS -> ((CreatePartitionsRequest) request.body()).data().timeoutMs();
            case ELECT_LEADERS -> ((ElectLeadersRequest) request.body()).data().timeoutMs();
            case ALTER_PARTITION_REASSIGNMENTS -> ((AlterPartitionReassignmentsRequest) request.body()).data()
                    .timeoutMs();
            case DELETE_RECORDS -> ((DeleteRecordsRequest) request.body()).data().timeoutMs();
            default -> 0;
        };
        return own > 0 ? own : DEFAULT_TIMEOUT_MS;
    }

    /** The time its client still waits for the answer, at most the timeout; 0 or less once it has passed. */
    public long remainingMs(long nowNanos) {
        return timeoutMs - waitedMs(nowNanos);
    }

    public boolean hasPassed(long nowNanos) {
        return waitedMs(nowNanos) >= timeoutMs;
    }

    /** Kafka's TimeoutException (REQUEST_TIMED_OUT on the wire), saying how long the request waited. */
    public TimeoutException exception(long nowNanos) {
        return new TimeoutException("The request waited " + waitedMs(nowNanos) + " ms for an admin thread, past "
                + "its timeout of " + timeoutMs + " ms; it was not executed");
    }

    private long waitedMs(long nowNanos) {
        return TimeUnit.NANOSECONDS.toMillis(nowNanos - receivedNanos);
    }
}
