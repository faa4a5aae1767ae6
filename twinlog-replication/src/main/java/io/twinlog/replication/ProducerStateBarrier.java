package io.twinlog.replication;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;

import java.nio.ByteBuffer;
import java.util.Iterator;

/**
 * The producer-state barrier (KIP-1279's {@code MIRROR_PID_RESET}, decision 24): a control batch written by a
 * mirror partition's leader when it fails over, after the ABORT markers of the source's open transactions. Every
 * replica that applies it — as leader, as follower, while mirroring it from another cluster, or when its log is
 * loaded again after a restart — forgets every producer it knew: the producer ids, epochs and sequences copied
 * from the source cluster can then never be mistaken for this cluster's own producers, whose ids are allocated
 * from the same range (both clusters start at 0).
 *
 * <p>Format: a control batch without producer id (so Kafka's producer-state bookkeeping, the cleaner and
 * consumers skip it: they only act on control records of transactional producers) holding one control record
 * whose key is the usual control-record key (version 0, then the type) with Twinlog's type {@value #TYPE}, which
 * Kafka's {@code ControlRecordType.parse} reads as UNKNOWN. The batches are copied byte for byte by mirrors, so a
 * chained mirror (A → B → C) clears its state at the same offset as the cluster it mirrors.
 */
public final class ProducerStateBarrier {
    /** Control record type of the barrier; Kafka's own types are 0-6, Twinlog's API keys start at 7000. */
    public static final short TYPE = 7000;
    private static final short KEY_VERSION = 0;
    private static final int KEY_SIZE = 4;

    private ProducerStateBarrier() {
    }

    /** A barrier batch (offset 0; the log assigns the real one) stamped with {@code timestampMs}. */
    public static MemoryRecords create(long timestampMs) {
        ByteBuffer key = ByteBuffer.allocate(KEY_SIZE);
        key.putShort(KEY_VERSION);
        key.putShort(TYPE);
        key.flip();
        // kafka-clients' builder refuses control records of types it does not know, so the one record is written
        // as an ordinary batch and the header is then rewritten with the control flag (and its CRC)
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(128), RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.NONE, TimestampType.CREATE_TIME, 0L, timestampMs, RecordBatch.NO_PRODUCER_ID,
                RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE, false, false,
                RecordBatch.NO_PARTITION_LEADER_EPOCH);
        builder.appendWithOffset(0L, new SimpleRecord(timestampMs, key, null));
        MemoryRecords records = builder.build();
        ByteBuffer buffer = records.buffer();
        int start = buffer.position();
        DefaultRecordBatch.writeHeader(buffer, 0L, 0, records.sizeInBytes(), RecordBatch.CURRENT_MAGIC_VALUE,
                CompressionType.NONE, TimestampType.CREATE_TIME, timestampMs, timestampMs, RecordBatch.NO_PRODUCER_ID,
                RecordBatch.NO_PRODUCER_EPOCH, RecordBatch.NO_SEQUENCE, false, true, false,
                RecordBatch.NO_PARTITION_LEADER_EPOCH, 1);
        buffer.position(start); // writeHeader leaves the position after the header
        return MemoryRecords.readableRecords(buffer);
    }

    /** True if {@code batch} is a barrier. Reads the record only for control batches without a producer id. */
    public static boolean isBarrier(RecordBatch batch) {
        if (!batch.isControlBatch() || batch.hasProducerId()) {
            return false;
        }
        Iterator<Record> records = batch.iterator();
        if (!records.hasNext()) {
            return false;
        }
        ByteBuffer key = records.next().key();
        return key != null && key.remaining() >= KEY_SIZE && key.getShort(key.position() + 2) == TYPE;
    }
}
