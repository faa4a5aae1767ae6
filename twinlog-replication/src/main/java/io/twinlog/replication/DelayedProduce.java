package io.twinlog.replication;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.server.purgatory.DelayedOperation;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * An acks=all produce waiting until the high watermark of every written partition passes the last appended offset,
 * or until the request timeout (then REQUEST_TIMED_OUT for the partitions still short).
 */
final class DelayedProduce extends DelayedOperation {
    private final ReplicaManager replicaManager;
    private final LinkedHashMap<TopicIdPartition, AppendResult> results;
    private final Consumer<Map<TopicIdPartition, AppendResult>> callback;

    DelayedProduce(long timeoutMs, ReplicaManager replicaManager, LinkedHashMap<TopicIdPartition, AppendResult> results,
                   Consumer<Map<TopicIdPartition, AppendResult>> callback) {
        super(timeoutMs);
        this.replicaManager = replicaManager;
        this.results = results;
        this.callback = callback;
    }

    @Override
    public boolean tryComplete() {
        for (Map.Entry<TopicIdPartition, AppendResult> e : results.entrySet()) {
            if (e.getValue().error() != Errors.NONE) {
                continue;
            }
            if (!replicaManager.isReplicated(e.getKey().topicPartition(), e.getValue().lastOffset())) {
                return false;
            }
        }
        return forceComplete();
    }

    @Override
    public void onExpiration() {
        for (Map.Entry<TopicIdPartition, AppendResult> e : results.entrySet()) {
            if (e.getValue().error() == Errors.NONE
                    && !replicaManager.isReplicated(e.getKey().topicPartition(), e.getValue().lastOffset())) {
                e.setValue(e.getValue().withError(Errors.REQUEST_TIMED_OUT,
                        "Timed out waiting for the in-sync replicas to acknowledge the records"));
            }
        }
    }

    @Override
    public void onComplete() {
        callback.accept(results);
    }
}
