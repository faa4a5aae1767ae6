package io.twinlog.bench;

import java.util.Optional;

/**
 * One failover measurement: a partition's leader was stopped ({@link FailureMode}) while a producer was sending;
 * times are from just before the stop call.
 *
 * @param metadataMs  until an Admin {@code describeTopics} poll first showed another broker as leader
 * @param firstAckMs  until the first acknowledgement by the new leader (of a record appended in a newer leader
 *                    epoch than the records acknowledged before the stop)
 * @param maxAckGapMs longest time without any acknowledgement, over the acknowledgements after the stop began
 * @param stopCallMs  how long the stop call itself took (a controlled shutdown returns after leadership moved)
 */
record FailoverResult(String system, int round, FailureMode mode, String stopMethod, int sessionTimeoutMs,
                      int oldLeader, Optional<Integer> controllerBrokerId, Optional<Integer> newLeader,
                      Optional<Double> metadataMs, Optional<Double> firstAckMs, Optional<Double> maxAckGapMs,
                      double stopCallMs, long sent, long acked, long failed, Optional<String> firstError) {

    /** Target: failover within the session timeout + 1 s (both the metadata and the first acknowledgement). */
    double targetMs() {
        return sessionTimeoutMs + 1000.0;
    }

    boolean completed() {
        return metadataMs.isPresent() && firstAckMs.isPresent();
    }

    boolean meetsTarget() {
        return completed() && metadataMs.get() <= targetMs() && firstAckMs.get() <= targetMs();
    }
}
