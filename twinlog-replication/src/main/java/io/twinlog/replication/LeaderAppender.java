package io.twinlog.replication;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.RecordValidationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Appends as leader, for every kind of writer (producers, transaction markers, coordinators): each partition's
 * records into its log, its outcome mapped to the error Kafka answers (validation, size, leadership, anything
 * else logged with its stack trace), the requests waiting on the partition woken, and acks=all parked in the
 * produce purgatory until the ISR has the records. Runs on the caller's thread; the partitions do their own
 * locking. Split from {@link ReplicaManager}; logs under its logger, as before.
 */
final class LeaderAppender {
    private static final Logger log = LoggerFactory.getLogger(ReplicaManager.class);

    private final ReplicaManager replicaManager;
    private final Function<TopicPartition, Partition> hosted;
    private final DelayedOperations delayed;

    /** @param hosted the hosted partition, or throws the ApiException that says why not */
    LeaderAppender(ReplicaManager replicaManager, Function<TopicPartition, Partition> hosted,
                   DelayedOperations delayed) {
        this.replicaManager = replicaManager;
        this.hosted = hosted;
        this.delayed = delayed;
    }

    /** How one partition's records go into its leader's log. */
    interface LeaderAppend {
        LogAppendInfo append(Partition partition, MemoryRecords records) throws IOException;
    }

    /**
     * Appends each partition's records with {@code leaderAppend}, tells {@code onLocalAppend} each local outcome,
     * and answers through {@code callback}: at once unless acks=all has something to wait for, else from the produce
     * purgatory once the ISR has the records.
     */
    void append(long timeoutMs, short requiredAcks, Map<TopicIdPartition, MemoryRecords> entries,
                        LeaderAppend leaderAppend, BiConsumer<TopicIdPartition, AppendResult> onLocalAppend,
                        Consumer<Map<TopicIdPartition, AppendResult>> callback) {
        LinkedHashMap<TopicIdPartition, AppendResult> results = new LinkedHashMap<>();
        for (Map.Entry<TopicIdPartition, MemoryRecords> e : entries.entrySet()) {
            AppendResult local = appendToLocalLog(e.getKey().topicPartition(), e.getValue(), leaderAppend);
            results.put(e.getKey(), local);
            onLocalAppend.accept(e.getKey(), local);
        }
        if (requiredAcks != -1 || results.values().stream().noneMatch(r -> r.error() == Errors.NONE)) {
            callback.accept(results);
            return;
        }
        delayed.watchProduce(new DelayedProduce(timeoutMs, replicaManager, results, callback),
                results.keySet().stream().map(TopicIdPartition::topicPartition).toList());
    }

    private AppendResult appendToLocalLog(TopicPartition tp, MemoryRecords records, LeaderAppend leaderAppend) {
        Partition partition;
        try {
            partition = hosted.apply(tp);
        } catch (ApiException e) {
            return AppendResult.error(Errors.forException(e), e.getMessage());
        }
        try {
            LogAppendInfo info = leaderAppend.append(partition, records);
            delayed.completeAll(tp);
            return new AppendResult(Errors.NONE, null, info.firstOffset(), info.logAppendTime(),
                    info.logStartOffset(), info.lastOffset(), List.of());
        } catch (RecordValidationException e) {
            ApiException cause = e.invalidException();
            return new AppendResult(Errors.forException(cause), cause.getMessage(), -1L, -1L, -1L, -1L,
                    e.recordErrors());
        } catch (RecordTooLargeException | RecordBatchTooLargeException e) {
            return AppendResult.error(Errors.forException(e), e.getMessage());
        } catch (ApiException e) {
            log.debug("Append to {} refused: {}", tp, e.getMessage());
            return AppendResult.error(Errors.forException(e), e.getMessage());
        } catch (IOException | RuntimeException e) {
            // broad: any other failure is this partition's error answer, logged with its stack trace
            log.error("Unexpected error appending to {}", tp, e);
            return AppendResult.error(Errors.forException(e), e.getMessage());
        }
    }
}
