package io.twinlog.replication;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.server.purgatory.DelayedOperation;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * An acks=all produce waiting until the high watermark of every written partition passes the last appended offset,
 * or until the request timeout (then REQUEST_TIMED_OUT for the partitions still short). A partition whose leader
 * moved away meanwhile answers NOT_LEADER_OR_FOLLOWER at once (Kafka's {@code checkEnoughReplicasReachOffset}): the
 * records may have been truncated here, and a high watermark reached later as a follower says nothing about them.
 */
final class DelayedProduce extends DelayedOperation {
    private final ReplicaManager replicaManager;
    private final LinkedHashMap<TopicIdPartition, AppendResult> results;
    private final Set<TopicIdPartition> pending = new HashSet<>();
    private final Consumer<Map<TopicIdPartition, AppendResult>> callback;

    DelayedProduce(long timeoutMs, ReplicaManager replicaManager, LinkedHashMap<TopicIdPartition, AppendResult> results,
                   Consumer<Map<TopicIdPartition, AppendResult>> callback) {
        super(timeoutMs);
        this.replicaManager = replicaManager;
        this.results = results;
        this.callback = callback;
        results.forEach((tip, r) -> {
            if (r.error() == Errors.NONE) {
                pending.add(tip);
            }
        });
    }

    @Override
    public boolean tryComplete() {
        for (Map.Entry<TopicIdPartition, AppendResult> e : results.entrySet()) {
            if (!pending.contains(e.getKey())) {
                continue;
            }
            Optional<Errors> outcome = replicaManager.acksAllOutcome(e.getKey().topicPartition(),
                    e.getValue().lastOffset() + 1);
            if (outcome.isPresent()) {
                pending.remove(e.getKey());
                if (outcome.get() != Errors.NONE) {
                    e.setValue(e.getValue().withError(outcome.get(), outcome.get() == Errors.NOT_LEADER_OR_FOLLOWER
                            ? "Leadership moved before the in-sync replicas acknowledged the records"
                            : "The in-sync replicas fell below min.insync.replicas after the append"));
                }
            }
        }
        return pending.isEmpty() && forceComplete();
    }

    @Override
    public void onExpiration() {
        // nothing: Kafka's purgatory calls onComplete before onExpiration, so the timed-out partitions are marked there
    }

    /**
     * Partitions still pending were not acknowledged in time (expiry is the only other way to complete): they must
     * answer REQUEST_TIMED_OUT, never the append's NONE.
     */
    @Override
    public void onComplete() {
        for (TopicIdPartition tip : pending) {
            results.put(tip, results.get(tip).withError(Errors.REQUEST_TIMED_OUT,
                    "Timed out waiting for the in-sync replicas to acknowledge the records"));
        }
        callback.accept(results);
    }
}
