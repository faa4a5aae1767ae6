package io.twinlog.campaign;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * A replica's log read straight from a broker's segment files with Kafka's {@link FileRecords}, batch by batch:
 * what the broker process holds on disk, with no request to it (the broker may be down). Read once the cluster is
 * quiet (the campaign pauses its producer), since the active segment may grow while it is read.
 */
final class ReplicaFiles {
    private ReplicaFiles() {
    }

    /** One batch as stored: enough to tell two replicas apart, and the values of its records. */
    record Batch(long baseOffset, long lastOffset, int partitionLeaderEpoch, long crc, boolean control,
                 List<String> values) {
        String summary() {
            return baseOffset + "-" + lastOffset + "@" + partitionLeaderEpoch + "#" + Long.toHexString(crc);
        }
    }

    /**
     * Every batch of {@code tp} in whichever of a broker's {@code logDirs} holds it, in offset order; empty if the
     * broker has no replica of it. Two dirs holding it is a broken broker (Kafka refuses to start on that), reported.
     */
    static Optional<List<Batch>> read(List<File> logDirs, TopicPartition tp) throws IOException {
        List<File> holding = new ArrayList<>();
        for (File logDir : logDirs) {
            File dir = new File(logDir, tp.topic() + "-" + tp.partition());
            if (dir.isDirectory()) {
                holding.add(dir);
            }
        }
        if (holding.size() > 1) {
            throw new IllegalStateException(tp + " has a replica in more than one log dir of the broker: " + holding);
        }
        if (holding.isEmpty()) {
            return Optional.empty();
        }
        File[] segments = holding.get(0).listFiles((d, name) -> name.endsWith(".log"));
        if (segments == null) {
            return Optional.empty();
        }
        // segment files are named by their base offset, zero-padded to 20 digits: name order is offset order
        Arrays.sort(segments);
        List<Batch> out = new ArrayList<>();
        for (File segment : segments) {
            try (FileRecords records = FileRecords.open(segment, false)) {
                for (RecordBatch b : records.batches()) {
                    List<String> values = new ArrayList<>();
                    if (!b.isControlBatch()) {
                        for (Record r : b) {
                            values.add(r.hasValue() ? utf8(r.value()) : null);
                        }
                    }
                    out.add(new Batch(b.baseOffset(), b.lastOffset(), b.partitionLeaderEpoch(), b.checksum(),
                            b.isControlBatch(), values));
                }
            }
        }
        return Optional.of(out);
    }

    /** The batches' summaries, one line: what two replicas are compared by and a report shows. */
    static String summary(List<Batch> log) {
        StringBuilder out = new StringBuilder();
        for (Batch b : log) {
            out.append(out.length() == 0 ? "" : " ").append(b.summary());
        }
        return out.toString();
    }

    /** Where two logs first differ, for a report: the batch index and both batches (or "end"). */
    static String firstDifference(List<Batch> a, List<Batch> b) {
        for (int i = 0; i < Math.max(a.size(), b.size()); i++) {
            String x = i < a.size() ? a.get(i).summary() : "end";
            String y = i < b.size() ? b.get(i).summary() : "end";
            if (!x.equals(y)) {
                return "batch " + i + ": " + x + " vs " + y;
            }
        }
        return "none";
    }

    static long logEndOffset(List<Batch> log) {
        return log.isEmpty() ? 0 : log.get(log.size() - 1).lastOffset() + 1;
    }

    private static String utf8(ByteBuffer b) {
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
