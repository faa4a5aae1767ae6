package io.twinlog.share.fetch;

import org.apache.kafka.common.message.ShareFetchResponseData.AcquiredRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;

import java.util.List;

/**
 * Cuts the batches read for a share fetch down to those holding acquired records, so a consumer is not sent the
 * batches before the first acquired offset or after the last one (records other members hold, or already
 * acknowledged). Whole batches only: a batch is the unit on disk and on the wire, and the consumer drops the records
 * of a batch it was not given in {@code AcquiredRecords}. Slicing {@code FileRecords} keeps the answer zero-copy.
 */
final class ShareRecordSlicer {
    private ShareRecordSlicer() {
    }

    /** The contiguous run of batches from the one holding the first acquired offset to the one holding the last. */
    static Records slice(Records records, List<AcquiredRecords> acquired) {
        if (acquired.isEmpty()) {
            return records;
        }
        long first = acquired.get(0).firstOffset();
        long last = acquired.get(acquired.size() - 1).lastOffset();
        int position = 0;
        int start = -1;
        int end = 0;
        for (RecordBatch batch : records.batches()) {
            int size = batch.sizeInBytes();
            if (batch.baseOffset() > last) {
                break;
            }
            if (start < 0 && batch.lastOffset() >= first) {
                start = position;
            }
            position += size;
            end = position;
        }
        if (start < 0) {
            return records.slice(0, 0); // no batch holds an acquired offset: nothing to send
        }
        if (start == 0 && end == records.sizeInBytes()) {
            return records;
        }
        return records.slice(start, end - start);
    }
}
