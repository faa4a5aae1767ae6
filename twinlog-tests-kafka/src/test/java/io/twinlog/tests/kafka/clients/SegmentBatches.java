package io.twinlog.tests.kafka.clients;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads the batches of a partition straight from its segment files, as they lie on disk, on Twinlog and on Kafka
 * alike: what a client's codec really produced, not what a consumer decompressed.
 */
final class SegmentBatches {
    private SegmentBatches() {
    }

    /** One batch as stored: its codec and how many offsets it spans. */
    record Batch(CompressionType compressionType, long records) {
    }

    /** Every batch in the partition's segments, in offset order. */
    static List<Batch> read(File logDir, TopicPartition tp) throws IOException {
        File dir = new File(logDir, tp.topic() + "-" + tp.partition());
        File[] segments = dir.listFiles((d, name) -> name.endsWith(".log"));
        if (segments == null) {
            throw new AssertionError("no partition directory " + dir);
        }
        Arrays.sort(segments);
        List<Batch> out = new ArrayList<>();
        for (File segment : segments) {
            try (FileRecords records = FileRecords.open(segment, false)) {
                for (RecordBatch batch : records.batches()) {
                    out.add(new Batch(batch.compressionType(), batch.lastOffset() - batch.baseOffset() + 1));
                }
            }
        }
        return out;
    }
}
