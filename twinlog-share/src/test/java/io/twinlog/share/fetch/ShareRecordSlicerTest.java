package io.twinlog.share.fetch;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ShareFetchResponseData.AcquiredRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/** What a share consumer is sent of the batches read: the run of whole batches that holds its acquired records. */
@Timeout(10)
class ShareRecordSlicerTest {
    /** Three batches of five records: offsets 0-4, 5-9, 10-14. */
    private static final MemoryRecords THREE_BATCHES = batches(3, 5);

    @Test
    void onlyTheBatchesHoldingAcquiredRecordsAreSent() {
        assertEquals(List.of(5L), baseOffsets(ShareRecordSlicer.slice(THREE_BATCHES, List.of(acquired(5, 9)))));
        assertEquals(List.of(0L, 5L), baseOffsets(ShareRecordSlicer.slice(THREE_BATCHES,
                List.of(acquired(3, 4), acquired(6, 6)))), "acquired offsets inside a batch take the batch");
        assertEquals(List.of(5L, 10L), baseOffsets(ShareRecordSlicer.slice(THREE_BATCHES,
                List.of(acquired(9, 9), acquired(12, 14)))));
    }

    @Test
    void recordsWhollyAcquiredAreSentAsRead() {
        assertSame(THREE_BATCHES, ShareRecordSlicer.slice(THREE_BATCHES, List.of(acquired(0, 14))));
        assertSame(THREE_BATCHES, ShareRecordSlicer.slice(THREE_BATCHES, List.of(acquired(2, 11))));
    }

    @Test
    void nothingIsSentWhenNoBatchHoldsAnAcquiredOffset() {
        assertEquals(0, ShareRecordSlicer.slice(THREE_BATCHES, List.of(acquired(20, 21))).sizeInBytes());
    }

    private static AcquiredRecords acquired(long first, long last) {
        return new AcquiredRecords().setFirstOffset(first).setLastOffset(last).setDeliveryCount((short) 1);
    }

    private static List<Long> baseOffsets(Records records) {
        List<Long> offsets = new ArrayList<>();
        for (RecordBatch batch : records.batches()) {
            offsets.add(batch.baseOffset());
        }
        return offsets;
    }

    static MemoryRecords batches(int batches, int recordsPerBatch) {
        ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
        long offset = 0;
        for (int b = 0; b < batches; b++) {
            MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, RecordBatch.CURRENT_MAGIC_VALUE,
                    Compression.NONE, TimestampType.CREATE_TIME, offset);
            for (int r = 0; r < recordsPerBatch; r++) {
                builder.append(new SimpleRecord(("v" + offset).getBytes()));
                offset++;
            }
            builder.close();
        }
        buffer.flip();
        return MemoryRecords.readableRecords(buffer);
    }
}
