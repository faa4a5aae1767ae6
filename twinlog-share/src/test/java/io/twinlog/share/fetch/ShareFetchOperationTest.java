package io.twinlog.share.fetch;

import org.apache.kafka.clients.consumer.internals.ShareAcquireMode;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ShareFetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.server.purgatory.DelayedOperationKey;
import org.apache.kafka.server.purgatory.DelayedOperationPurgatory;
import org.apache.kafka.server.share.fetch.DelayedShareFetchGroupKey;
import org.apache.kafka.server.share.fetch.DelayedShareFetchPartitionKey;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.server.storage.log.FetchPartitionData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A ShareFetch in the purgatory against in-memory share partitions and logs: it waits while there is nothing to
 * acquire or a partition is busy or loading, completes once records arrive (with only the acquired batches), answers
 * a failed partition at once, and at its deadline answers every partition, empty ones included.
 */
@Timeout(30)
class ShareFetchOperationTest {
    private static final String GROUP = "g";
    private static final TopicIdPartition P0 = new TopicIdPartition(Uuid.randomUuid(), 0, "t");
    private static final TopicIdPartition P1 = new TopicIdPartition(P0.topicId(), 1, "t");

    private final InMemorySharePartitions partitions = new InMemorySharePartitions();
    /** What each partition's log holds; reads return the batches at or after the offset. */
    private final Map<TopicIdPartition, MemoryRecords> logs = new ConcurrentHashMap<>();
    private final Map<TopicIdPartition, Errors> readErrors = new ConcurrentHashMap<>();
    private final DelayedOperationPurgatory<ShareFetchOperation> purgatory =
            new DelayedOperationPurgatory<>("ShareFetchTest", 1, 1000);

    @AfterEach
    void close() throws Exception {
        purgatory.shutdown();
    }

    private FetchPartitionData read(TopicIdPartition partition, long offset, int maxBytes, ShareFetchSpec spec) {
        Errors error = readErrors.get(partition);
        if (error != null) {
            return new FetchPartitionData(error, -1, -1, MemoryRecords.EMPTY, Optional.empty(), OptionalLong.empty(),
                    Optional.empty(), OptionalInt.empty(), false);
        }
        MemoryRecords log = logs.getOrDefault(partition, MemoryRecords.EMPTY);
        int position = 0;
        for (RecordBatch batch : log.batches()) {
            if (batch.lastOffset() >= offset) {
                break;
            }
            position += batch.sizeInBytes();
        }
        Records records = log.slice(position, log.sizeInBytes() - position);
        return new FetchPartitionData(Errors.NONE, -1, 0, records, Optional.empty(), OptionalLong.empty(),
                Optional.empty(), OptionalInt.empty(), false);
    }

    private CompletableFuture<LinkedHashMap<TopicIdPartition, ShareFetchResponseData.PartitionData>> fetch(
            long maxWaitMs, int maxRecords, TopicIdPartition... fetched) {
        List<TopicIdPartition> list = List.of(fetched);
        list.forEach(p -> partitions.initialize(GROUP, p));
        CompletableFuture<LinkedHashMap<TopicIdPartition, ShareFetchResponseData.PartitionData>> result =
                new CompletableFuture<>();
        Map<TopicIdPartition, Integer> maxBytes = new LinkedHashMap<>();
        list.forEach(p -> maxBytes.put(p, 1 << 20));
        ShareFetchOperation operation = new ShareFetchOperation(new ShareFetchSpec(GROUP, "m", maxWaitMs, 1, 1 << 20,
                maxRecords, ShareAcquireMode.BATCH_OPTIMIZED, maxRecords, FetchIsolation.HIGH_WATERMARK, list), maxBytes, partitions, this::read,
                result);
        purgatory.tryCompleteElseWatch(operation, list.stream().<DelayedOperationKey>
                map(DelayedShareFetchPartitionKey::new).toList());
        return result;
    }

    @Test
    void waitsForRecordsThenAnswersTheAcquiredBatches() throws Exception {
        var result = fetch(30_000, 500, P0, P1);
        assertFalse(result.isDone(), "nothing to acquire yet");
        logs.put(P1, ShareRecordSlicerTest.batches(2, 5));
        purgatory.checkAndComplete(new DelayedShareFetchPartitionKey(P1));
        LinkedHashMap<TopicIdPartition, ShareFetchResponseData.PartitionData> answer = result.get(5, TimeUnit.SECONDS);
        assertEquals(List.of(P0, P1), List.copyOf(answer.keySet()), "every partition answered, in request order");
        assertEquals(List.of(), answer.get(P0).acquiredRecords());
        assertEquals(List.of(0L, 5L), answer.get(P1).acquiredRecords().stream()
                .map(ShareFetchResponseData.AcquiredRecords::firstOffset).toList());
        assertEquals(10L, partitions.nextOffsets.get(P1));
    }

    @Test
    void maxRecordsBoundsWhatIsAcquired() throws Exception {
        logs.put(P0, ShareRecordSlicerTest.batches(3, 5));
        var answer = fetch(30_000, 5, P0).get(5, TimeUnit.SECONDS);
        assertEquals(1, answer.get(P0).acquiredRecords().size());
        assertEquals(5L, partitions.nextOffsets.get(P0));
        assertEquals(List.of(0L), batchOffsets(answer.get(P0)), "only the acquired batch is sent");
    }

    @Test
    void aBusyOrLoadingPartitionIsTriedAgainWhenWoken() throws Exception {
        logs.put(P0, ShareRecordSlicerTest.batches(1, 5));
        partitions.lockedElsewhere.add(P0);
        var busy = fetch(30_000, 500, P0);
        assertFalse(busy.isDone(), "another fetch holds the partition's lock");
        partitions.lockedElsewhere.clear();
        purgatory.checkAndComplete(new DelayedShareFetchPartitionKey(P0));
        assertEquals(1, busy.get(5, TimeUnit.SECONDS).get(P0).acquiredRecords().size());

        logs.put(P1, ShareRecordSlicerTest.batches(1, 5));
        CompletableFuture<Void> loading = partitions.loadLater(P1);
        var waiting = fetch(30_000, 500, P1);
        assertFalse(waiting.isDone(), "the share state is still loading");
        loading.complete(null);
        purgatory.checkAndComplete(new DelayedShareFetchPartitionKey(P1));
        assertEquals(1, waiting.get(5, TimeUnit.SECONDS).get(P1).acquiredRecords().size());
    }

    @Test
    void aFailedPartitionIsAnsweredAtOnce() throws Exception {
        readErrors.put(P1, Errors.NOT_LEADER_OR_FOLLOWER);
        var answer = fetch(30_000, 500, P0, P1).get(5, TimeUnit.SECONDS);
        assertEquals(Errors.NOT_LEADER_OR_FOLLOWER.code(), answer.get(P1).errorCode());
        assertEquals(Errors.NONE.code(), answer.get(P0).errorCode());
    }

    @Test
    void theDeadlineAnswersEmpty() throws Exception {
        var answer = fetch(50, 500, P0).get(5, TimeUnit.SECONDS);
        assertTrue(answer.get(P0).acquiredRecords().isEmpty());
        assertEquals(0, ((Records) answer.get(P0).records()).sizeInBytes());
        assertEquals(0, purgatory.checkAndComplete(new DelayedShareFetchGroupKey(GROUP, P0)));
    }

    private static List<Long> batchOffsets(ShareFetchResponseData.PartitionData data) {
        List<Long> offsets = new ArrayList<>();
        ((Records) data.records()).batches().forEach(b -> offsets.add(b.baseOffset()));
        return offsets;
    }
}
