package io.twinlog.share.partition;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.server.share.persister.DeleteShareGroupStateParameters;
import org.apache.kafka.server.share.persister.DeleteShareGroupStateResult;
import org.apache.kafka.server.share.persister.GroupTopicPartitionData;
import org.apache.kafka.server.share.persister.InitializeShareGroupStateParameters;
import org.apache.kafka.server.share.persister.InitializeShareGroupStateResult;
import org.apache.kafka.server.share.persister.PartitionFactory;
import org.apache.kafka.server.share.persister.PartitionIdLeaderEpochData;
import org.apache.kafka.server.share.persister.PartitionStateBatchData;
import org.apache.kafka.server.share.persister.Persister;
import org.apache.kafka.server.share.persister.PersisterStateBatch;
import org.apache.kafka.server.share.persister.ReadShareGroupStateParameters;
import org.apache.kafka.server.share.persister.ReadShareGroupStateResult;
import org.apache.kafka.server.share.persister.ReadShareGroupStateSummaryParameters;
import org.apache.kafka.server.share.persister.ReadShareGroupStateSummaryResult;
import org.apache.kafka.server.share.persister.TopicData;
import org.apache.kafka.server.share.persister.WriteShareGroupStateParameters;
import org.apache.kafka.server.share.persister.WriteShareGroupStateResult;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A share coordinator's state kept in memory, with the rules that matter to a share partition: a write carrying an
 * older state epoch is refused FENCED_STATE_EPOCH, the start offset only moves forward and drops the state below it,
 * an unknown partition reads as uninitialized (start offset -1). Writes can be made to fail (an error code, or the
 * future failing as when the coordinator cannot be reached); completions can be held back to test races.
 */
final class InMemoryPersister implements Persister {

    /** The persisted state of one share partition. */
    static final class Stored {
        int stateEpoch;
        long startOffset = PartitionFactory.UNINITIALIZED_START_OFFSET;
        /** The last write's count of records in a terminal state at or above its start offset (KIP-1226). */
        int deliveryCompleteCount;
        /** offset → {state id, delivery count} */
        final TreeMap<Long, short[]> records = new TreeMap<>();
    }

    private final Map<String, Stored> stored = new ConcurrentHashMap<>();
    private volatile Errors writeError = Errors.NONE;
    private volatile Errors readError = Errors.NONE;
    private volatile RuntimeException writeException;
    private volatile boolean holdWrites;
    private final List<Runnable> heldWrites = new ArrayList<>();
    final AtomicInteger writes = new AtomicInteger();
    final AtomicInteger reads = new AtomicInteger();

    private static String key(String group, Uuid topicId, int partition) {
        return group + ":" + topicId + ":" + partition;
    }

    Stored stored(String group, Uuid topicId, int partition) {
        return stored.computeIfAbsent(key(group, topicId, partition), k -> new Stored());
    }

    /** As AlterShareGroupOffsets does: a new start offset and state epoch; older leaders' writes are fenced. */
    synchronized void resetStartOffset(String group, Uuid topicId, int partition, long startOffset) {
        Stored s = stored(group, topicId, partition);
        s.stateEpoch++;
        s.startOffset = startOffset;
        s.records.clear();
    }

    void failWrites(Errors error) {
        writeError = error;
    }

    void failWrites(RuntimeException exception) {
        writeException = exception;
    }

    /** Writes are answered only when {@link #releaseHeldWrites} is called (then with the error set at that time). */
    void holdWrites() {
        holdWrites = true;
    }

    void releaseHeldWrites() {
        List<Runnable> held;
        synchronized (this) {
            holdWrites = false;
            held = new ArrayList<>(heldWrites);
            heldWrites.clear();
        }
        held.forEach(Runnable::run);
    }

    void failReads(Errors error) {
        readError = error;
    }

    @Override
    public synchronized CompletableFuture<ReadShareGroupStateResult> readState(ReadShareGroupStateParameters request) {
        reads.incrementAndGet();
        GroupTopicPartitionData<PartitionIdLeaderEpochData> data = request.groupTopicPartitionData();
        TopicData<PartitionIdLeaderEpochData> topic = data.topicsData().get(0);
        int partition = topic.partitions().get(0).partition();
        Stored s = stored(data.groupId(), topic.topicId(), partition);
        List<PersisterStateBatch> batches = new ArrayList<>();
        for (Map.Entry<Long, short[]> e : s.records.entrySet()) {
            batches.add(new PersisterStateBatch(e.getKey(), e.getKey(), (byte) e.getValue()[0], e.getValue()[1]));
        }
        Errors error = readError;
        return CompletableFuture.completedFuture(new ReadShareGroupStateResult.Builder().setTopicsData(List.of(
                new TopicData<>(topic.topicId(), List.of(PartitionFactory.newPartitionAllData(partition, s.stateEpoch,
                        s.startOffset, error.code(), error == Errors.NONE ? null : error.message(), batches)))))
                .build());
    }

    @Override
    public CompletableFuture<WriteShareGroupStateResult> writeState(WriteShareGroupStateParameters request) {
        synchronized (this) {
            if (holdWrites) {
                CompletableFuture<WriteShareGroupStateResult> later = new CompletableFuture<>();
                heldWrites.add(() -> applyWrite(request).whenComplete((r, e) -> {
                    if (e != null) {
                        later.completeExceptionally(e);
                    } else {
                        later.complete(r);
                    }
                }));
                return later;
            }
        }
        return applyWrite(request);
    }

    private synchronized CompletableFuture<WriteShareGroupStateResult> applyWrite(
            WriteShareGroupStateParameters request) {
        writes.incrementAndGet();
        if (writeException != null) {
            return CompletableFuture.failedFuture(writeException);
        }
        GroupTopicPartitionData<PartitionStateBatchData> data = request.groupTopicPartitionData();
        TopicData<PartitionStateBatchData> topic = data.topicsData().get(0);
        PartitionStateBatchData p = topic.partitions().get(0);
        Stored s = stored(data.groupId(), topic.topicId(), p.partition());
        Errors error = writeError;
        if (error == Errors.NONE && p.stateEpoch() < s.stateEpoch) {
            error = Errors.FENCED_STATE_EPOCH;
        }
        if (error == Errors.NONE) {
            if (p.startOffset() > s.startOffset) {
                s.startOffset = p.startOffset();
            }
            s.deliveryCompleteCount = p.deliveryCompleteCount();
            for (PersisterStateBatch b : p.stateBatches()) {
                for (long o = b.firstOffset(); o <= b.lastOffset(); o++) {
                    s.records.put(o, new short[] {b.deliveryState(), b.deliveryCount()});
                }
            }
            s.records.headMap(s.startOffset).clear();
        }
        return CompletableFuture.completedFuture(new WriteShareGroupStateResult.Builder().setTopicsData(List.of(
                new TopicData<>(topic.topicId(), List.of(PartitionFactory.newPartitionErrorData(p.partition(),
                        error.code(), error == Errors.NONE ? null : error.message()))))).build());
    }

    @Override
    public CompletableFuture<InitializeShareGroupStateResult> initializeState(
            InitializeShareGroupStateParameters request) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("not used by share partitions"));
    }

    @Override
    public CompletableFuture<DeleteShareGroupStateResult> deleteState(DeleteShareGroupStateParameters request) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("not used by share partitions"));
    }

    @Override
    public CompletableFuture<ReadShareGroupStateSummaryResult> readSummary(
            ReadShareGroupStateSummaryParameters request) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("not used by share partitions"));
    }

    @Override
    public void stop() {
    }
}
