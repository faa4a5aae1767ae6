package io.twinlog.share.partition;

import io.twinlog.replication.Partition;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.record.internal.FileRecords;

import java.util.Optional;

/**
 * What a share partition reads of its partition's log besides the records themselves: the offsets that bound it
 * and the timestamp index (for {@code share.auto.offset.reset}). Kafka's share partition reads the same through its
 * {@code PartitionMetadataProvider}; this seam lets the state be tested over a real log without a replica manager.
 */
interface SharePartitionLog {

    long logStartOffset();

    long logEndOffset();

    long highWatermark();

    /**
     * The first offset below the high watermark whose record has a timestamp at or after {@code timestampMs}; empty
     * when no such record exists yet.
     */
    Optional<Long> offsetForTimestamp(long timestampMs);

    /** Over a replica this broker holds. */
    static SharePartitionLog of(Partition partition) {
        return new SharePartitionLog() {
            @Override
            public long logStartOffset() {
                return partition.log().logStartOffset();
            }

            @Override
            public long logEndOffset() {
                return partition.log().logEndOffset();
            }

            @Override
            public long highWatermark() {
                return partition.log().highWatermark();
            }

            @Override
            public Optional<Long> offsetForTimestamp(long timestampMs) {
                // READ_UNCOMMITTED: only what a share fetch may read (below the high watermark), as Kafka asks
                return partition.fetchOffsetForTimestamp(timestampMs, Optional.of(IsolationLevel.READ_UNCOMMITTED),
                        Optional.empty()).map((FileRecords.TimestampAndOffset t) -> t.offset);
            }
        };
    }
}
