package io.twinlog.replication;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.server.purgatory.DelayedOperationPurgatory;
import org.apache.kafka.server.purgatory.TopicPartitionOperationKey;

import java.util.List;

/**
 * The requests waiting on this broker's partitions, in Kafka's purgatories: acks=all produce (until the ISR has the
 * records), long-poll fetch (until enough bytes), DeleteRecords (until the in-sync replicas' log starts moved), each
 * watched by its partitions and completed when something changes there (an append, a high watermark move, a
 * leadership change, a replica leaving). Thread-safe (the purgatories are). Split from {@link ReplicaManager}.
 */
final class DelayedOperations {
    private final DelayedOperationPurgatory<DelayedProduce> producePurgatory;
    private final DelayedOperationPurgatory<DelayedFetch> fetchPurgatory;
    private final DelayedOperationPurgatory<DelayedDeleteRecords> deleteRecordsPurgatory;

    DelayedOperations(int localBrokerId) {
        this.producePurgatory = new DelayedOperationPurgatory<>("Produce", localBrokerId);
        this.fetchPurgatory = new DelayedOperationPurgatory<>("Fetch", localBrokerId);
        this.deleteRecordsPurgatory = new DelayedOperationPurgatory<>("DeleteRecords", localBrokerId);
    }

    void watchProduce(DelayedProduce produce, List<TopicPartition> partitions) {
        producePurgatory.tryCompleteElseWatch(produce, keys(partitions));
    }

    void watchFetch(DelayedFetch fetch, List<TopicPartition> partitions) {
        fetchPurgatory.tryCompleteElseWatch(fetch, keys(partitions));
    }

    void watchDeleteRecords(DelayedDeleteRecords deleteRecords, List<TopicPartition> partitions) {
        deleteRecordsPurgatory.tryCompleteElseWatch(deleteRecords, keys(partitions));
    }

    /** Something changed on {@code tp}: checks every kind of waiting request (fetch, produce, DeleteRecords). */
    void completeAll(TopicPartition tp) {
        TopicPartitionOperationKey key = new TopicPartitionOperationKey(tp);
        fetchPurgatory.checkAndComplete(key);
        producePurgatory.checkAndComplete(key);
        deleteRecordsPurgatory.checkAndComplete(key);
    }

    /** A follower's log start moved on {@code tp}: only DeleteRecords waits for that. */
    void completeDeleteRecords(TopicPartition tp) {
        deleteRecordsPurgatory.checkAndComplete(new TopicPartitionOperationKey(tp));
    }

    void shutdown() throws Exception {
        producePurgatory.shutdown();
        fetchPurgatory.shutdown();
        deleteRecordsPurgatory.shutdown();
    }

    private static List<TopicPartitionOperationKey> keys(List<TopicPartition> partitions) {
        return partitions.stream().map(TopicPartitionOperationKey::new).toList();
    }
}
