package io.twinlog.replication;

import io.twinlog.common.mirror.TruncationPoints;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The truncation points a replica applied, kept next to its log (decision 125), and the race they close: a leader
 * cuts to its new point before it writes the record that holds it (decision 38), so its metadata thread can apply
 * the record of the previous pass after that cut. Keeping only the latest id, that list did not hold it and the
 * replica cut to the lowest listed point (PointInTimeFailoverTest lost offsets 0-6 that way).
 */
@Timeout(60)
class TruncationPointHistoryTest {
    private static final TopicPartition TP = new TopicPartition("payments", 0);
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final int LOCAL = 0;
    private static final TruncationPoints.Point START = new TruncationPoints.Point(4377L, 0);
    private static final TruncationPoints.Point FAILOVER = new TruncationPoints.Point(7455L, 7);

    @TempDir
    File dataDir;

    @Test
    void aLeaderThatAppliedItsPointBeforeTheRecordKeepsItsLogWhenThePreviousRecordArrives() throws Exception {
        try (TestLogs logs = new TestLogs(dataDir)) {
            UnifiedLog log = logs.open(TP, TOPIC_ID, true);
            Partition partition = new Partition(TP, TOPIC_ID, LOCAL, log);
            partition.applyLeadership(LOCAL, 9, 1, List.of(LOCAL, 1, 2), List.of(LOCAL, 1, 2), 0L);
            assertTrue(partition.applyTruncationPoints(new TruncationPoints(List.of(START), "start")));
            partition.appendRecordsToLeader(records("a", "b", "c", "d", "e", "f", "g", "h"), (short) 1);
            assertEquals(8, log.logEndOffset());

            // the failover's cut, by the leader itself (BrokerMirrorPartitions: only the new point)
            assertTrue(partition.applyTruncationPoints(new TruncationPoints(List.of(FAILOVER), "failover")));
            assertEquals(7, log.logEndOffset());
            // the metadata thread then sees the record written before the cut: only the start's point
            assertFalse(partition.applyTruncationPoints(new TruncationPoints(List.of(START), "record")));
            assertEquals(7, log.logEndOffset(), "a point this replica applied is not applied again");
            // then the record with the new point
            assertFalse(partition.applyTruncationPoints(new TruncationPoints(List.of(START, FAILOVER), "record")));
            assertEquals(7, log.logEndOffset());
        }
    }

    @Test
    void aRestartedReplicaReadsThePointsItAppliedAndAppliesOnlyNewOnes() throws Exception {
        try (TestLogs logs = new TestLogs(dataDir)) {
            UnifiedLog log = logs.open(TP, TOPIC_ID, true);
            Partition partition = new Partition(TP, TOPIC_ID, LOCAL, log);
            partition.applyLeadership(1, 3, 1, List.of(LOCAL, 1), List.of(LOCAL, 1), 0L);
            partition.appendRecordsAsFollower(batchAt(0L, 3, "a", "b", "c", "d", "e"), 0L);
            assertTrue(partition.applyTruncationPoints(new TruncationPoints(List.of(START, FAILOVER), "away")));
            assertEquals(0, log.logEndOffset(), "away through both: the lowest of them");
            partition.appendRecordsAsFollower(batchAt(0L, 3, "a", "b", "c", "d", "e"), 0L);

            Partition restarted = new Partition(TP, TOPIC_ID, LOCAL, log);
            assertEquals(Set.of(START.id(), FAILOVER.id()), restarted.appliedTruncationIds());
            assertFalse(restarted.applyTruncationPoints(new TruncationPoints(List.of(START), "older record")));
            assertTrue(restarted.applyTruncationPoints(new TruncationPoints(List.of(START, FAILOVER,
                    new TruncationPoints.Point(99L, 3)), "failback")));
            assertEquals(3, log.logEndOffset());
        }
    }

    @Test
    void theFileKeepsTheNewestPointsNewestFirstAndReadsTheFormatOfOnePoint(@TempDir Path dir) throws Exception {
        assertEquals(List.of(), TruncationPointFile.read(dir));
        Files.writeString(dir.resolve(TruncationPointFile.NAME), "4377 0\n");   // written before decision 125
        assertEquals(List.of(START), TruncationPointFile.read(dir));

        List<TruncationPoints.Point> points = new ArrayList<>();
        for (long id = 1; id <= TruncationPointFile.KEPT + 5; id++) {
            points.add(new TruncationPoints.Point(id, id * 10));
        }
        TruncationPointFile.write(dir, points);
        assertEquals(points.subList(5, points.size()), TruncationPointFile.read(dir));
        String text = Files.readString(dir.resolve(TruncationPointFile.NAME));
        assertTrue(text.startsWith((TruncationPointFile.KEPT + 5) + " "),
                "newest first: a Twinlog from before decision 125 reads the first id as the latest: " + text);
    }

    private static MemoryRecords records(String... values) {
        return batchAt(0L, 0, values);
    }

    private static MemoryRecords batchAt(long baseOffset, int epoch, String... values) {
        return TruncationPointEpochsTest.batchAt(baseOffset, epoch, values);
    }
}
