package io.twinlog.replication;

import io.twinlog.common.mirror.TruncationPoints;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A truncation point at or past a replica's log end still drops the leader-epoch entries that start there, as
 * Kafka's {@code UnifiedLog.truncateTo} does: such an entry is a leadership that wrote nothing, and kept it is sent
 * as the mirror's last fetched epoch, so the source reports a divergence no cut repairs (campaign defect 1: an
 * empty log elected leader in epoch 1 after a lost disk, failed back, cycled MIRRORING -> ULE_RECOVERY for ever).
 */
@Timeout(60)
class TruncationPointEpochsTest {
    private static final TopicPartition TP = new TopicPartition("campaign", 2);
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final int LOCAL = 0;

    @TempDir
    File dataDir;

    @Test
    void aPointAtTheEndOfAnEmptyLogDropsTheEpochItsLeaderNeverWroteIn() throws Exception {
        try (TestLogs logs = new TestLogs(dataDir)) {
            UnifiedLog log = logs.open(TP, TOPIC_ID, true);
            Partition partition = new Partition(TP, TOPIC_ID, LOCAL, log);
            partition.applyLeadership(LOCAL, 1, 1, List.of(LOCAL, 1, 2), List.of(LOCAL), 0L); // lost disk, elected
            assertEquals(Optional.of(1), log.latestEpoch(), "as the campaign's checkpoint: epoch 1 at offset 0");

            assertTrue(partition.applyTruncationPoints(new TruncationPoints(
                    List.of(new TruncationPoints.Point(7, 0)), "the leader's log is empty")));

            assertEquals(Optional.empty(), log.latestEpoch(), "an empty log has no epoch to fetch from");
            assertEquals(0, log.logEndOffset());
        }
    }

    @Test
    void aPointAtTheLogEndKeepsTheRecordsAndTheirEpochButDropsAnEpochStartedAtTheEnd() throws Exception {
        try (TestLogs logs = new TestLogs(dataDir)) {
            UnifiedLog log = logs.open(TP, TOPIC_ID, true);
            Partition partition = new Partition(TP, TOPIC_ID, LOCAL, log);
            partition.applyLeadership(1, 0, 0, List.of(LOCAL, 1), List.of(LOCAL, 1), 0L);
            partition.appendRecordsAsFollower(batchAt(0L, 0, "a", "b", "c"), 0L);
            partition.applyLeadership(LOCAL, 4, 1, List.of(LOCAL, 1), List.of(LOCAL, 1), 0L); // leads, writes nothing
            assertEquals(Optional.of(4), log.latestEpoch());

            partition.applyTruncationPoints(new TruncationPoints(List.of(new TruncationPoints.Point(9, 3)),
                    "failback"));

            assertEquals(3, log.logEndOffset(), "nothing below the point is cut");
            assertEquals(Optional.of(0), log.latestEpoch(), "the epoch of the last record, as the source has it");
        }
    }

    static MemoryRecords batchAt(long baseOffset, int epoch, String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), values[i].getBytes(StandardCharsets.UTF_8));
        }
        return MemoryRecords.withRecords(baseOffset, Compression.NONE, epoch, records);
    }
}
