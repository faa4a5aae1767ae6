package io.twinlog.replication;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.server.purgatory.DelayedOperation;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A DeleteRecords request waiting until, for every partition whose log start moved on the leader, the low watermark
 * (the lowest log start offset among the leader and its in-sync followers) reaches the requested offset, or until the
 * request timeout (then REQUEST_TIMED_OUT for those still short). Like acks=all for produce: the answer means every
 * in-sync replica has dropped the records. A partition whose leadership moved away answers NOT_LEADER_OR_FOLLOWER.
 */
final class DelayedDeleteRecords extends DelayedOperation {
    private final ReplicaManager replicaManager;
    private final LinkedHashMap<TopicPartition, DeleteRecordsResult> results;
    private final Consumer<Map<TopicPartition, DeleteRecordsResult>> callback;

    DelayedDeleteRecords(long timeoutMs, ReplicaManager replicaManager,
                         LinkedHashMap<TopicPartition, DeleteRecordsResult> results,
                         Consumer<Map<TopicPartition, DeleteRecordsResult>> callback) {
        super(timeoutMs);
        this.replicaManager = replicaManager;
        this.results = results;
        this.callback = callback;
    }

    @Override
    public boolean tryComplete() {
        boolean allDone = true;
        for (Map.Entry<TopicPartition, DeleteRecordsResult> e : results.entrySet()) {
            DeleteRecordsResult r = e.getValue();
            if (r.done()) {
                continue;
            }
            long lowWatermark = replicaManager.partition(e.getKey()).map(Partition::lowWatermarkIfLeader).orElse(-1L);
            if (lowWatermark < 0) {
                e.setValue(DeleteRecordsResult.error(Errors.NOT_LEADER_OR_FOLLOWER));
            } else if (lowWatermark >= r.requiredOffset()) {
                e.setValue(DeleteRecordsResult.completed(lowWatermark));
            } else {
                allDone = false;
            }
        }
        return allDone && forceComplete();
    }

    @Override
    public void onExpiration() {
        // nothing: Kafka's purgatory calls onComplete before onExpiration, so the timed-out partitions are marked there
    }

    /** Partitions still waiting here were not reached in time (expiry is the only other way to complete). */
    @Override
    public void onComplete() {
        results.replaceAll((tp, r) -> r.done() ? r : DeleteRecordsResult.error(Errors.REQUEST_TIMED_OUT));
        callback.accept(results);
    }
}
